"""The project's routes, and RecallApi routed through DRF's dispatch beside the plain view
that answers /api/v1/recall (tests/api/test_recall_api.py compares the two)."""
from django.urls import path

from memory_portal.urls import handler403, handler404, handler500  # noqa: F401 - the project's error pages
from memory_portal.urls import urlpatterns as project_urlpatterns
from reviews.api.recall import RecallApi

THROUGH_DRF = "/api/v1/recall-through-drf"

urlpatterns = [path(THROUGH_DRF.lstrip("/"), RecallApi.as_view()), *project_urlpatterns]
