from django.shortcuts import redirect, render


def home(request):
    """Staff go to their dashboard; everyone else sees what the product is."""
    if request.user.is_authenticated and hasattr(request.user, "membership"):
        return redirect("reviews:queue")
    return render(request, "home.html")
