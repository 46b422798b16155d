"""A reviewer's saved views: a named queue filter of their own (issue 38.6)."""
from django.conf import settings
from django.db import models

from .tenancy import Tenant


class SavedView(models.Model):
    """A named filter of the queue, one reviewer's: the query string the queue page reads."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views")
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="saved_view_name_unique_per_owner")]

    def __str__(self):
        return f"{self.name} ({self.owner})"
