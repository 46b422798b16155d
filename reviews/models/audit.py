"""The append-only audit trail (SPEC §6).

An :class:`AuditEvent` never changes once written (a PostgreSQL trigger refuses UPDATE and
DELETE). It holds *digests* of the before/after values and the reason, and the chain hash
covers only those digests. The readable values live beside it in :class:`AuditPayload`,
which erasure deletes: the chain still verifies and no erased value survives.

Events reference what they describe by type and id, never by foreign key, so the trail
outlives the objects.
"""
import pgtrigger
from django.db import models


class AuditEvent(models.Model):
    tenant_id = models.BigIntegerField()
    seq = models.PositiveBigIntegerField()
    created_at = models.DateTimeField()
    actor = models.CharField(max_length=160)
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=32)
    object_id = models.CharField(max_length=64)
    subject_user_id = models.CharField(max_length=128, blank=True)
    before_digest = models.CharField(max_length=64, blank=True)
    after_digest = models.CharField(max_length=64, blank=True)
    reason_digest = models.CharField(max_length=64, blank=True)
    reason_code = models.CharField(max_length=64, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["tenant_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["tenant_id", "seq"], name="audit_seq_unique_per_tenant")]
        indexes = [
            models.Index(fields=["tenant_id", "created_at"], name="audit_by_time"),
            models.Index(fields=["tenant_id", "subject_user_id", "seq"], name="audit_by_subject"),
        ]
        triggers = [
            pgtrigger.Protect(name="audit_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
        ]

    def __str__(self):
        return f"#{self.seq} {self.action} {self.object_type}:{self.object_id} by {self.actor}"


class AuditPayload(models.Model):
    """The readable values of one event; deleted (never edited) when its subject is erased."""

    event = models.OneToOneField(
        AuditEvent, on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True, related_name="payload"
    )
    tenant_id = models.BigIntegerField()
    subject_user_id = models.CharField(max_length=128, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant_id", "subject_user_id"], name="audit_payload_subject")]
        triggers = [pgtrigger.Protect(name="audit_payload_no_update", operation=pgtrigger.Update)]


class AuditChainHead(models.Model):
    """The last sequence number and hash of a tenant's chain; locked while appending."""

    tenant_id = models.BigIntegerField(primary_key=True)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64)
