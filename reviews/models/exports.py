"""Background audit exports (SPEC §6): a job, its progress and the file it produced."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from .tenancy import Tenant


class ExportFormat(models.TextChoices):
    JSONL = "jsonl", "JSON Lines"
    CSV = "csv", "CSV"


class ExportStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    READY = "ready", _("ready")
    FAILED = "failed", _("failed")
    # The file was deleted because an erasure removed values it carried.
    PURGED = "purged", _("purged by an erasure")


class AuditExport(models.Model):
    """One export of a tenant's audit events to a file under MEDIA_ROOT/exports/<tenant>/."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="audit_exports")
    requested_by = models.CharField(max_length=160)
    format = models.CharField(max_length=5, choices=ExportFormat.choices, default=ExportFormat.JSONL)
    # ExportFilters.as_dict(): identifiers and times only, never values.
    filters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=ExportStatus.choices, default=ExportStatus.QUEUED)
    rows_total = models.PositiveBigIntegerField(default=0)
    rows_done = models.PositiveBigIntegerField(default=0)
    # The chain head when the job started: the file holds events up to this sequence only.
    head_seq = models.PositiveBigIntegerField(default=0)
    file_name = models.CharField(max_length=300, blank=True)
    manifest = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["tenant", "status"], name="audit_export_by_status")]

    def __str__(self):
        return f"export #{self.pk} of {self.tenant_id} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if self.status == ExportStatus.READY:
            return 100
        if not self.rows_total:
            return 0
        return min(100, int(self.rows_done * 100 / self.rows_total))

    @property
    def filters_given(self) -> dict:
        """The filters the export was asked for (the stored form keeps empty ones too)."""
        return {name: value for name, value in (self.filters or {}).items() if value}

    @property
    def is_active(self) -> bool:
        return self.status in (ExportStatus.QUEUED, ExportStatus.RUNNING)
