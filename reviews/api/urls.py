"""API v1 routes (SPEC §7). Each area adds its operations here."""
from django.urls import path

from .candidates import CandidateSubmitApi
from .messages import MessagesIngestApi
from .portal_link import PortalLinkCreateApi
from .recall import RecallApi
from .review import ReviewApproveApi, ReviewDeferApi, ReviewQueueApi, ReviewRejectApi

urlpatterns = [
    path("candidates", CandidateSubmitApi.as_view(), name="candidates-submit"),
    path("messages", MessagesIngestApi.as_view(), name="messages-ingest"),
    path("recall", RecallApi.as_view(), name="recall"),
    path("review/candidates", ReviewQueueApi.as_view(), name="review-candidates"),
    path("review/candidates/<int:candidate_id>/approve", ReviewApproveApi.as_view(), name="review-approve"),
    path("review/candidates/<int:candidate_id>/reject", ReviewRejectApi.as_view(), name="review-reject"),
    path("review/candidates/<int:candidate_id>/defer", ReviewDeferApi.as_view(), name="review-defer"),
    path("users/<str:user_id>/portal-link", PortalLinkCreateApi.as_view(), name="portal-link-create"),
]
