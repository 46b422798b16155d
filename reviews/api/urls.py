"""API v1 routes (SPEC §7). Each area adds its operations here."""
from django.urls import path

from .candidates import CandidateSubmitApi

urlpatterns = [
    path("candidates", CandidateSubmitApi.as_view(), name="candidates-submit"),
]
