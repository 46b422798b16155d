"""API v1 routes (SPEC §7). Each area adds its operations here."""
from django.urls import path

from . import converters  # noqa: F401 - registers the path converters
from ..metrics import timed_recall
from .audit import AuditEventsApi, AuditExportApi
from .candidates import CandidateSubmitApi
from .comments import CandidateCommentsApi
from .index import api_index
from .keys import ApiKeyCreateApi, ApiKeyRevokeApi, ApiKeyRotateApi
from .messages import MessagesIngestApi
from .pending import PendingConfirmApi, PendingListApi, PendingRejectApi
from .portal_link import PortalLinkCreateApi
from .recall import recall
from .review import ReviewApproveApi, ReviewDeferApi, ReviewQueueApi, ReviewRejectApi
from .users import UserFactDeleteApi, UserFactsApi
from .webhooks import WebhookDeleteApi, WebhooksApi

urlpatterns = [
    path("", api_index, name="index"),
    path("candidates", CandidateSubmitApi.as_view(), name="candidates-submit"),
    path("messages", MessagesIngestApi.as_view(), name="messages-ingest"),
    path("recall", timed_recall(recall), name="recall"),
    path("review/candidates", ReviewQueueApi.as_view(), name="review-candidates"),
    path("review/candidates/<int:candidate_id>/approve", ReviewApproveApi.as_view(), name="review-approve"),
    path("review/candidates/<int:candidate_id>/reject", ReviewRejectApi.as_view(), name="review-reject"),
    path("review/candidates/<int:candidate_id>/defer", ReviewDeferApi.as_view(), name="review-defer"),
    path("review/candidates/<int:candidate_id>/comments", CandidateCommentsApi.as_view(), name="review-comments"),
    path("users/<identifier:user_id>/portal-link", PortalLinkCreateApi.as_view(), name="portal-link-create"),
    path("users/<identifier:user_id>/facts", UserFactsApi.as_view(), name="user-facts"),
    path("users/<identifier:user_id>/facts/<int:fact_id>", UserFactDeleteApi.as_view(), name="user-fact-delete"),
    path("users/<identifier:user_id>/pending", PendingListApi.as_view(), name="user-pending"),
    path(
        "users/<identifier:user_id>/pending/<int:candidate_id>/confirm",
        PendingConfirmApi.as_view(),
        name="user-pending-confirm",
    ),
    path(
        "users/<identifier:user_id>/pending/<int:candidate_id>/reject",
        PendingRejectApi.as_view(),
        name="user-pending-reject",
    ),
    path("audit/export", AuditExportApi.as_view(), name="audit-export"),
    path("audit/events", AuditEventsApi.as_view(), name="audit-events"),
    path("keys", ApiKeyCreateApi.as_view(), name="keys-create"),
    path("keys/<key_prefix:prefix>", ApiKeyRevokeApi.as_view(), name="keys-revoke"),
    path("keys/<key_prefix:prefix>/rotate", ApiKeyRotateApi.as_view(), name="keys-rotate"),
    path("webhooks", WebhooksApi.as_view(), name="webhooks"),
    path("webhooks/<int:endpoint_id>", WebhookDeleteApi.as_view(), name="webhook-delete"),
]
