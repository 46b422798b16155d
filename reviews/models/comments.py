"""Comments between reviewers on one item (issue 38.6): a thread on the item's own page."""
from django.conf import settings
from django.db import models

from .memory import Candidate
from .tenancy import Tenant

# A comment is a note to colleagues, not a document.
MAX_COMMENT_LENGTH = 2000


class CandidateComment(models.Model):
    """One reviewer's comment on one candidate. Written only by
    ``reviews.services.comments.candidate_comment_add``, which audits it.

    It goes with its candidate (an erasure of the subject deletes both: a comment speaks
    of the subject's data); the author's account may go first, and the comment stays."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="comments")
    # The staff member who wrote it on the page; none when a review API key did.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Who wrote it as the audit trail names them (reviewer:<id>, api_key:<prefix>).
    actor = models.CharField(max_length=160)
    body = models.TextField(max_length=MAX_COMMENT_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["candidate", "created_at"], name="comment_by_candidate")]

    def __str__(self):
        return f"comment {self.pk} on candidate {self.candidate_id}"
