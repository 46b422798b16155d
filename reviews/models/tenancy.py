"""Tenants, the people who work in them, API keys, subjects and the field schema."""
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .choices import DEFAULT_SOURCE_PRIORITY, Cardinality, Category, ExtractorName, Role, Sensitivity, Source


def default_source_priority():
    return {str(source): rank for source, rank in DEFAULT_SOURCE_PRIORITY.items()}


unit_interval = [MinValueValidator(0.0), MaxValueValidator(1.0)]
# A review target past thirty days is no target; the policy check refuses more.
MAX_REVIEW_TARGET_HOURS = 720


class Tenant(models.Model):
    """An isolated customer. Every other row hangs off exactly one tenant."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Policy (SPEC §3), per tenant.
    reject_below = models.FloatField(default=0.5, validators=unit_interval)
    confirm_below = models.FloatField(default=0.8, validators=unit_interval)
    auto_approve_at = models.FloatField(
        default=0.95, null=True, blank=True, validators=unit_interval, help_text=_("Empty: never auto-approve.")
    )
    source_priority = models.JSONField(default=default_source_priority)
    allowed_relation_names = models.JSONField(
        null=True, blank=True, help_text=_("Empty: any relation:<name> field is accepted.")
    )
    # What a relation name reads as, per language ({"works_on": {"en": …, "zh-hans": …}});
    # a name not listed reads as reviews.labels' default for it (reviews/labels.py).
    relation_labels = models.JSONField(default=dict, blank=True)
    # The reasons a reviewer picks from to reject (plus free text), in the order shown.
    reject_reasons = models.JSONField(default=list, blank=True)
    # How long an item should wait for a reviewer at most: the queue's age badges say
    # whether each item is within, near or over it (reviews.domain.review_age).
    review_target_hours = models.PositiveIntegerField(
        default=24, validators=[MinValueValidator(1), MaxValueValidator(MAX_REVIEW_TARGET_HOURS)]
    )
    # Retention (SPEC §1, §3 step 5).
    sensitive_retention_days = models.PositiveIntegerField(default=90)
    message_retention_days = models.PositiveIntegerField(default=30)
    thread_idle_days = models.PositiveIntegerField(default=7)
    # The active extractor and prompt version (SPEC §4 tenant admin); empty: the site's.
    extractor = models.CharField(
        max_length=16, choices=ExtractorName.choices, blank=True, help_text=_("Empty: the site's MEMORY_EXTRACTOR.")
    )
    prompt_version = models.CharField(
        max_length=32, blank=True, help_text=_("Empty: the extractor's current prompt version.")
    )

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug

    def priority_of(self, source: str) -> int:
        return int(self.source_priority.get(source, DEFAULT_SOURCE_PRIORITY.get(source, 0)))


class Membership(models.Model):
    """A staff account's place in one tenant, with one role (SPEC §4)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)

    def __str__(self):
        return f"{self.user} ({self.role} of {self.tenant})"


class ApiKey(models.Model):
    """A tenant's API key. Only a SHA-256 digest is stored; the key is shown once."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.CHAT)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Refused from then on, like a revoked key; a rotated key expires at the end of its grace.
    expires_at = models.DateTimeField(null=True, blank=True)
    # When it last authenticated a call, to a minute (``services.api_keys.api_key_mark_used``).
    last_used_at = models.DateTimeField(null=True, blank=True)
    # The prefix of the key that rotation made to replace it.
    replaced_by = models.CharField(max_length=16, blank=True, default="")

    def __str__(self):
        return f"{self.prefix}… ({self.tenant})"

    def is_live(self, now) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def has_ended(self) -> bool:
        """Past its expiry (a rotated key after its grace period), for the keys table."""
        return self.expires_at is not None and self.expires_at <= timezone.now()

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


class Subject(models.Model):
    """The end user a memory belongs to: (tenant, user_id)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="subjects")
    user_id = models.CharField(max_length=128)
    collection_paused = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user_id"], name="subject_unique_per_tenant")]

    def __str__(self):
        return f"{self.tenant}/{self.user_id}"


class FieldDefinition(models.Model):
    """One field of one entity type in a tenant's schema (SPEC §1, §2)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="field_definitions")
    entity_type = models.SlugField(max_length=64)
    field = models.CharField(max_length=64)
    cardinality = models.CharField(max_length=4, choices=Cardinality.choices)
    sensitivity = models.CharField(max_length=10, choices=Sensitivity.choices, default=Sensitivity.NORMAL)
    category = models.CharField(max_length=12, choices=Category.choices)
    auto_approve = models.BooleanField(default=False)
    retention_days = models.PositiveIntegerField(null=True, blank=True, help_text=_("Empty: keep until deleted."))
    # What the field reads as on every page, per language ({"en": …, "zh-hans": …}); a
    # language left out reads as the default label of reviews/labels.py.
    labels = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["entity_type", "field"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "entity_type", "field"], name="field_unique_per_tenant"),
            # SPEC §2: auto-approval is never allowed on personal or sensitive fields.
            models.CheckConstraint(
                condition=models.Q(auto_approve=False) | models.Q(sensitivity="normal"),
                name="auto_approve_only_normal_fields",
            ),
        ]

    def __str__(self):
        return f"{self.entity_type}.{self.field}"
