"""Single-use links that open a subject's self-service page (SPEC §4, §7 portal-link)."""
from django.db import models
from django.db.models import Q

from .choices import DeletionStatus
from .tenancy import Subject, Tenant


class PortalLink(models.Model):
    """One signed link handed to a host application for one subject.

    Only a SHA-256 digest of the signed token is kept, so a database reader cannot
    rebuild a working link. ``used_at`` is set exactly once, by a compare-and-set
    update: of two browsers racing with the same link, one gets the session.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="portal_links")
    token_digest = models.CharField(max_length=64, unique=True)
    created_by = models.CharField(max_length=160)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["subject", "expires_at"], name="portal_link_unused", condition=Q(used_at=None)),
        ]

    def __str__(self):
        return f"portal link #{self.pk} for {self.subject_id}"


class FactDeletion(models.Model):
    """A subject's "delete this memory", undoable until ``due_at`` (SPEC §4).

    The fact row stays as it is while the deletion is scheduled, but it is no longer
    published: recall and the store leave out a fact with a scheduled deletion, so
    Undo brings it back and nothing else needs restoring. The erasure proper
    (:func:`reviews.services.erasure.fact_erase`) runs once the window has passed: a
    delayed task when a broker is configured, the next load of the subject's page, or the
    beat's sweep, whichever comes first. The row keeps the receipt (counts, never values).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="fact_deletions")
    fact = models.ForeignKey("reviews.Fact", on_delete=models.CASCADE, related_name="deletions")
    status = models.CharField(max_length=16, choices=DeletionStatus.choices, default=DeletionStatus.SCHEDULED)
    requested_by = models.CharField(max_length=160)
    requested_at = models.DateTimeField()
    due_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)
    receipt = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fact"], condition=Q(status=DeletionStatus.SCHEDULED), name="one_scheduled_deletion_per_fact"
            ),
        ]
        indexes = [
            models.Index(fields=["due_at"], name="fact_deletion_due", condition=Q(status=DeletionStatus.SCHEDULED)),
        ]

    def __str__(self):
        return f"deletion #{self.pk} of fact {self.fact_id} ({self.status})"
