"""Extraction dry runs (SPEC §4): what another extractor or prompt version would propose,
kept as a report a tenant admin can open."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from .choices import ExtractorName
from .tenancy import Tenant


class DryRunGroup(models.TextChoices):
    """What a dry run sorts the proposals into (reviews/services/dry_run.py says how): the
    keys of a report's ``figures`` and ``examples``, in the order pages show them."""

    RE_PROPOSED = "re_proposed", _("Re-proposed")
    MISSED = "missed", _("Missed")
    NEW = "new", _("New")
    REFUSED = "refused", _("Refused before")

    @property
    def description(self) -> str:
        return DRY_RUN_GROUP_DESCRIPTIONS[self]


# What each group's figure counts, in a sentence (a report's headline figures).
DRY_RUN_GROUP_DESCRIPTIONS = {
    DryRunGroup.RE_PROPOSED: _("Would re-propose approved values"),
    DryRunGroup.MISSED: _("Would miss approved values"),
    DryRunGroup.NEW: _("Would propose new values"),
    DryRunGroup.REFUSED: _("Of them rejected or deleted before"),
}


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

    @property
    def extractor_label(self) -> str:
        """The extractor as people read it; a name no longer offered stays as stored."""
        return ExtractorName(self.extractor).label if self.extractor in ExtractorName.values else self.extractor

    def groups(self) -> list[tuple[DryRunGroup, int, list[dict]]]:
        """Each group with its figure and examples, in DryRunGroup's order (the JSON keeps
        them by the groups' values)."""
        return [(group, self.figures.get(group, 0), self.examples.get(group, [])) for group in DryRunGroup]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="dry_run_tenant_recent")]

    def __str__(self) -> str:
        return f"{self.extractor} {self.prompt_version} ({self.created_at:%Y-%m-%d %H:%M})"
