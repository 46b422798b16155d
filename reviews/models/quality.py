"""Extraction dry runs (SPEC §4): what another extractor or prompt version would propose,
kept as a report a tenant admin can open."""
from django.db import models

from .tenancy import Tenant


class ExtractionDryRun(models.Model):
    """One replay of a tenant's stored messages through an extractor; nothing else is written.

    ``figures``: counts (messages read, proposed, would re-propose approved, would miss,
    new, new of them refused earlier, failures). ``examples``: a few items of each group,
    taken from messages that are stored (masked) already.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="dry_runs")
    requested_by = models.CharField(max_length=160)
    extractor = models.CharField(max_length=64)
    prompt_version = models.CharField(max_length=32)
    days = models.PositiveIntegerField()
    message_limit = models.PositiveIntegerField(null=True, blank=True)
    figures = models.JSONField(default=dict)
    examples = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="dry_run_tenant_recent")]

    def __str__(self) -> str:
        return f"{self.extractor} {self.prompt_version} ({self.created_at:%Y-%m-%d %H:%M})"
