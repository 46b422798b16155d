"""API v1 routes (SPEC §7). Each area adds its operations here."""
from django.urls import path

from .candidates import CandidateSubmitApi
from .recall import RecallApi

urlpatterns = [
    path("candidates", CandidateSubmitApi.as_view(), name="candidates-submit"),
    path("recall", RecallApi.as_view(), name="recall"),
]
