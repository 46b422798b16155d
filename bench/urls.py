"""The app's routes plus the floor of bench/recall.py: never part of production URLs."""
from django.http import JsonResponse
from django.urls import path

from memory_portal.urls import handler404, handler500, urlpatterns as app_urlpatterns  # noqa: F401
from reviews.models import Fact


def floor(request):
    """The least a Django view on this database can do: one primary-key lookup."""
    fact = Fact.objects.only("id", "value").get(pk=int(request.GET["id"]))
    return JsonResponse({"id": fact.pk, "value": fact.value})


urlpatterns = [path("bench/floor", floor), *app_urlpatterns]
