from django.shortcuts import redirect, render

from ..permissions import membership_of


def home(request):
    """Staff go to their dashboard; everyone else sees what the product is."""
    if membership_of(request.user) is not None:
        return redirect("reviews:queue")
    return render(request, "home.html")
