"""Single-use links that open a subject's self-service page (SPEC §4, §7 portal-link)."""
from django.db import models
from django.db.models import Q

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
