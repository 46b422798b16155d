"""API v1 routes (SPEC §7). Each area adds its operations here."""
from django.urls import path

from .candidates import CandidateSubmitApi
from .portal_link import PortalLinkCreateApi
from .recall import RecallApi

urlpatterns = [
    path("candidates", CandidateSubmitApi.as_view(), name="candidates-submit"),
    path("recall", RecallApi.as_view(), name="recall"),
    path("users/<str:user_id>/portal-link", PortalLinkCreateApi.as_view(), name="portal-link-create"),
]
