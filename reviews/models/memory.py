"""What the system remembers: entities, messages, candidates, facts and their traces."""
from django.db import models
from django.db.models import Q

from .choices import (
    OPEN_CANDIDATE_STATUSES,
    Cardinality,
    Category,
    CandidateStatus,
    ExtractionStatus,
    FactStatus,
    Kind,
    MemoryScope,
    ReviewDecision,
    Sensitivity,
    Source,
)
from .tenancy import Subject, Tenant


class Entity(models.Model):
    """What a fact is about, inside one subject's memory. ``entity_id`` is a stable slug."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="entities")
    entity_type = models.SlugField(max_length=64)
    entity_id = models.CharField(max_length=128)
    display_name = models.CharField(max_length=200, blank=True)
    # Created by extraction and not yet seen by a person: the queue flags it as new.
    is_new = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["subject", "entity_type", "entity_id"], name="entity_unique_per_subject")
        ]

    def __str__(self):
        return self.ref

    @property
    def ref(self) -> str:
        return f"{self.entity_type}:{self.entity_id}"


class EntityAlias(models.Model):
    """A name an entity goes by, stored with its normalised form for resolution."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=200)
    normalized = models.CharField(max_length=200)

    class Meta:
        verbose_name_plural = "entity aliases"
        constraints = [models.UniqueConstraint(fields=["entity", "normalized"], name="alias_unique_per_entity")]
        indexes = [models.Index(fields=["subject", "normalized"], name="alias_lookup")]

    def __str__(self):
        return self.alias


class Message(models.Model):
    """A source chat message, stored with credentials masked. Its row is the record of work."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="messages")
    message_id = models.CharField(max_length=128)
    thread_id = models.CharField(max_length=128)
    role = models.CharField(max_length=20)
    content = models.TextField()
    created_at = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)
    extraction_status = models.CharField(
        max_length=10, choices=ExtractionStatus.choices, default=ExtractionStatus.PENDING
    )
    extraction_attempts = models.PositiveIntegerField(default=0)
    extraction_error = models.TextField(blank=True)
    extracted_at = models.DateTimeField(null=True, blank=True)
    # When a pending row is next due for an attempt (ingest time, then each retry's time).
    # Empty: never handed to the broker (it was down), so the sweep sends it at once. Lets
    # the sweep tell a row the broker lost from one that is waiting for its retry.
    extraction_due_at = models.DateTimeField(null=True, blank=True)
    # Who extracted it, and how many of its proposed items the validator dropped (evidence
    # not in the message, a malformed item) before they could become candidates.
    extractor = models.CharField(max_length=64, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)
    extraction_dropped = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "message_id"], name="message_unique_per_tenant")]
        indexes = [
            models.Index(
                fields=["received_at"],
                name="message_pending_extraction",
                condition=Q(extraction_status="pending"),
            ),
            models.Index(fields=["subject", "thread_id", "created_at"], name="message_thread"),
        ]

    def __str__(self):
        return self.message_id


class Candidate(models.Model):
    """A proposed fact and the outcome the policy or a person gave it (SPEC §1, §3)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="candidates")
    # Null only when the entity type itself was refused by the shape step.
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, null=True, blank=True, related_name="candidates")
    entity_type = models.CharField(max_length=64)
    entity_ref_id = models.CharField(max_length=128)
    field = models.CharField(max_length=80)
    value = models.TextField(blank=True)
    confidence = models.FloatField()
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.FACT)
    scope = models.CharField(max_length=10, choices=MemoryScope.choices, default=MemoryScope.LONG_TERM)
    thread_id = models.CharField(max_length=128, blank=True, default="")
    supersedes = models.BooleanField(default=False)
    source = models.CharField(max_length=20, choices=Source.choices)
    source_message_id = models.CharField(max_length=128, blank=True, default="")
    evidence = models.TextField(blank=True)
    extractor = models.CharField(max_length=64, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)

    status = models.CharField(max_length=16, choices=CandidateStatus.choices)
    reason = models.CharField(max_length=32, blank=True)
    note = models.TextField(blank=True, help_text="Free-text reason a person gave.")
    flags = models.JSONField(default=list, blank=True)
    # Why the poisoning flags were raised, for the reviewer (reviews/poisoning): the
    # originals with hidden characters written out ({"value": "Par⟨U+200B⟩is", …}),
    # "confusable": the look-alike words, "instruction_like": the cues that matched.
    flag_details = models.JSONField(default=dict, blank=True)
    # The active fact this candidate disagrees with (SPEC §1 "conflict").
    conflict_fact = models.ForeignKey(
        "Fact", on_delete=models.SET_NULL, null=True, blank=True, related_name="conflicting_candidates"
    )
    has_conflict = models.BooleanField(default=False)
    # The fact this candidate became or merged into.
    fact = models.ForeignKey("Fact", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # Compare-and-set counter: every decision bumps it, a stale one is refused (HTTP 409).
    version = models.PositiveIntegerField(default=1)
    decided_by = models.CharField(max_length=160, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # A reviewer's lease on an open item (SPEC §4 claims): colleagues are not shown it
    # until it expires. Not a decision: it neither bumps ``version`` nor blocks one.
    claimed_by = models.CharField(max_length=160, blank=True, default="")
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # Sort "lowest confidence first" pages along its own index, as the default does.
            models.Index(
                fields=["tenant", "status", "confidence", "created_at", "id"],
                name="candidate_open_by_confidence",
                condition=Q(status__in=["pending_review", "pending_user"]),
            ),
            # "Conflicts first" reads the few open conflicts without walking the whole queue.
            models.Index(
                fields=["tenant", "status", "created_at", "id"],
                name="candidate_open_conflicts",
                condition=Q(status__in=["pending_review", "pending_user"], has_conflict=True),
            ),
            # The hot queue query: open items of a tenant, oldest first, keyset on (created_at, id).
            models.Index(
                fields=["tenant", "status", "created_at", "id"],
                name="candidate_open_queue",
                condition=Q(status__in=list(OPEN_CANDIDATE_STATUSES)),
            ),
            models.Index(fields=["tenant", "status", "created_at", "id"], name="candidate_status_queue"),
            # A reviewer's own live claims (renewed on every queue page and decision, counted in
            # the headline, listed by "claimed by you"): an index probe instead of a walk over
            # every open item. Decided items keep their holder's name, so only open rows count.
            models.Index(
                fields=["tenant", "claimed_by", "claim_expires_at"],
                name="candidate_open_claims",
                condition=Q(status__in=list(OPEN_CANDIDATE_STATUSES)) & ~Q(claimed_by=""),
            ),
            models.Index(fields=["subject", "status"], name="candidate_subject_status"),
            models.Index(fields=["extractor", "prompt_version"], name="candidate_extractor"),
        ]

    def __str__(self):
        return f"{self.entity_type}:{self.entity_ref_id}.{self.field}={self.value[:40]!r} [{self.status}]"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_CANDIDATE_STATUSES


class Fact(models.Model):
    """A published memory: the current approved value of (subject, entity, field[, value]).

    A ``one`` field has one row whose value changes version by version; a ``many`` field
    has one row per distinct value. Earlier versions live in :class:`FactVersion`.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="facts")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="facts")
    field = models.CharField(max_length=80)
    value = models.TextField()
    # HMAC of the normalised value: the key for duplicates and distinct many-values.
    value_digest = models.CharField(max_length=64)
    # Snapshot of the schema at publication, so recall filters without a join.
    cardinality = models.CharField(max_length=4, choices=Cardinality.choices)
    sensitivity = models.CharField(max_length=10, choices=Sensitivity.choices)
    category = models.CharField(max_length=12, choices=Category.choices)
    confidence = models.FloatField()
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.FACT)
    scope = models.CharField(max_length=10, choices=MemoryScope.choices, default=MemoryScope.LONG_TERM)
    thread_id = models.CharField(max_length=128, blank=True, default="")
    source = models.CharField(max_length=20, choices=Source.choices)
    source_message_id = models.CharField(max_length=128, blank=True, default="")
    evidence = models.TextField(blank=True)
    provenance = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=FactStatus.choices, default=FactStatus.ACTIVE)
    version = models.PositiveIntegerField(default=1)
    expires_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.CharField(max_length=160, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            # SPEC §1: one active value per (subject, entity, field) of a `one` field, per scope.
            models.UniqueConstraint(
                fields=["subject", "entity", "field", "thread_id"],
                condition=Q(status="active", cardinality="one"),
                name="one_active_fact_per_field",
            ),
            models.UniqueConstraint(
                fields=["subject", "entity", "field", "thread_id", "value_digest"],
                condition=Q(status="active"),
                name="distinct_active_fact_values",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "subject", "status"], name="fact_recall"),
            models.Index(fields=["expires_at"], name="fact_expiry", condition=Q(status="active")),
        ]

    def __str__(self):
        return f"{self.entity}.{self.field}={self.value[:40]!r} v{self.version}"


class FactVersion(models.Model):
    """One version of a fact: what it said, who decided, when, from which source, why."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    value = models.TextField()
    confidence = models.FloatField()
    source = models.CharField(max_length=20, choices=Source.choices)
    source_message_id = models.CharField(max_length=128, blank=True, default="")
    candidate = models.ForeignKey(Candidate, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    actor = models.CharField(max_length=160)
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["fact_id", "version"]
        constraints = [models.UniqueConstraint(fields=["fact", "version"], name="fact_version_unique")]


class SuppressedValue(models.Model):
    """A value the subject or a reviewer refused: only its keyed digest is kept (SPEC §3 step 6)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=80)
    value_digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "entity", "field", "value_digest"], name="suppressed_value_unique"
            )
        ]


class RecallRecord(models.Model):
    """Which facts (ids and versions) went to which caller, when, for which query."""

    # No index of its own: recall_by_subject leads with the tenant, and every recall
    # writes a record, so each index is paid on the hot path. No constraint in the
    # database either: its check at commit locked the tenant's row (FOR KEY SHARE) on
    # every recall, so a tenant's concurrent recalls shared that lock through a multixact
    # written to the tenant's row. Django still deletes a tenant's records with it.
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    user_id = models.CharField(max_length=128)
    caller = models.CharField(max_length=160)
    query = models.JSONField(default=dict)
    facts = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "user_id", "created_at"], name="recall_by_subject")]


class DecisionUndo(models.Model):
    """What a person's decision changed, kept so they can undo it for a short while (SPEC §4).

    Written by the decision in the same transaction. ``before`` holds the candidate's and
    the fact's fields as they were, the candidates the decision superseded and whether it
    added a suppression, so the compensating transition restores them exactly. Rows go
    with their candidate (erasure included); a spent or expired row is only history.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="+")
    actor = models.CharField(max_length=160)
    # The transition the decision made: an edit is an approval here, and a settlement an
    # approval or a rejection.
    action = models.CharField(
        max_length=40,
        choices=[(d.value, d.label) for d in (ReviewDecision.APPROVE, ReviewDecision.REJECT, ReviewDecision.DEFER)],
    )
    # The candidate's version the decision left: anything else moved it since.
    candidate_version = models.PositiveIntegerField()
    fact_id = models.BigIntegerField(null=True, blank=True)
    fact_version = models.PositiveIntegerField(null=True, blank=True)
    before = models.JSONField(default=dict)
    decided_at = models.DateTimeField()
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["candidate", "-decided_at"], name="decision_undo_latest"),
            # "My decisions": one person's latest decisions in their tenant.
            models.Index(fields=["tenant", "actor", "-decided_at"], name="decision_undo_by_actor"),
        ]
