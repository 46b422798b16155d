"""Keeping each published fact's embedding current (SPEC §5), in the background.

Every service that changes a subject's facts already schedules that subject's store
projection (reviews/publication.py); the same call schedules :func:`subject_embeddings_sync`
after the commit, which recomputes what the subject's facts need: it embeds the live facts
that have no current vector (new, edited, merged into another entity, or made by another
embedder) and deletes the vectors of facts no longer published (deleted, expired,
erased). Running it twice, late, or for a subject with nothing left is harmless; until it
has run, recall ranks the facts concerned lexically.

No audit event: an embedding is derived data, like the store projection; the change that
caused it is the audited one.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ..background import TaskName, publish_tasks, runs_in_process, task
from ..models import DeletionStatus, Fact, FactDeletion, FactEmbedding, FactStatus
from ..models.embeddings import vector_to_bytes
from ..models.locks import lock_subjects
from ..transactions import on_commit_once
from .embedders import Embedder, configured_embedder
from .text import fact_text

logger = logging.getLogger(__name__)

# Facts embedded per model call: large enough to amortise the model's per-call cost,
# small enough that one batch of a big subject does not hold the worker for long.
EMBED_BATCH = 64


def text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def text_of(fact: Fact) -> str:
    return fact_text(entity_type=fact.entity.entity_type, field=fact.field, value=fact.value,
                     entity_name=fact.entity.display_name)


def live_facts(now=None) -> Q:
    """Published: active, unexpired, not scheduled for deletion by the subject."""
    now = now or timezone.now()
    scheduled = FactDeletion.objects.filter(fact_id=OuterRef("pk"), status=DeletionStatus.SCHEDULED)
    return Q(status=FactStatus.ACTIVE) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now)) & ~Exists(scheduled)


@dataclass
class SyncResult:
    embedded: int = 0
    removed: int = 0
    current: int = 0

    def merge(self, other: "SyncResult") -> None:
        self.embedded += other.embedded
        self.removed += other.removed
        self.current += other.current


def subject_embeddings_sync(*, subject_id: int, embedder: Embedder | None = None, rebuild: bool = False) -> SyncResult:
    """Make the subject's embeddings match its published facts.

    1. Delete the vectors of facts that are no longer published.
    2. Embed the published facts whose vector is missing, was made by another embedder or
       from another text (``rebuild``: all of them), in batches, and upsert them.
    With the ``none`` embedder only step 1 runs: nothing is embedded.
    """
    embedder = embedder or configured_embedder()
    result = SyncResult()
    result.removed = FactEmbedding.objects.filter(subject_id=subject_id).exclude(
        fact__in=Fact.objects.filter(live_facts(), subject_id=subject_id)
    ).delete()[1].get(FactEmbedding._meta.label, 0)
    if not embedder.enabled:
        return result
    facts = list(Fact.objects.filter(live_facts(), subject_id=subject_id).select_related("entity").order_by("pk"))
    stored = dict(
        FactEmbedding.objects.filter(subject_id=subject_id, embedder=embedder.key).values_list("fact_id", "text_digest")
    )
    due = []
    for fact in facts:
        text = text_of(fact)
        digest = text_digest(text)
        if rebuild or stored.get(fact.pk) != digest:
            due.append((fact, text, digest))
        else:
            result.current += 1
    for start in range(0, len(due), EMBED_BATCH):
        batch = due[start : start + EMBED_BATCH]
        vectors = embedder.embed_documents([text for _, text, _ in batch])
        rows = [
            FactEmbedding(fact_id=fact.pk, tenant_id=fact.tenant_id, subject_id=subject_id, embedder=embedder.key,
                          text_digest=digest, dimensions=len(vector), vector=vector_to_bytes(vector),
                          updated_at=timezone.now())
            for (fact, _, digest), vector in zip(batch, vectors)
        ]
        try:
            with transaction.atomic():
                # The lock order every writer follows (reviews/models/locks.py): the subject
                # row first. The upsert's foreign-key checks take share locks on the
                # subject's and facts' rows, which a writer holding the subject then waits
                # for: without this, a deadlock under concurrent writes.
                if not lock_subjects([subject_id]):
                    continue  # erased meanwhile: nothing of it to embed
                FactEmbedding.objects.bulk_create(
                    rows, update_conflicts=True, unique_fields=["fact"],
                    update_fields=["embedder", "text_digest", "dimensions", "vector", "updated_at"],
                )
        except IntegrityError:
            # A fact of the batch was erased meanwhile (its row is gone): the next sync,
            # which that erasure scheduled, embeds the rest.
            logger.info("subject %s changed while embedding; left to the next sync", subject_id)
            continue
        result.embedded += len(rows)
    return result


def embeddings_catch_up(
    *, subjects, rebuild: bool = False, embedder: Embedder | None = None,
    progress: Callable[[int], None] | None = None,
) -> SyncResult:
    """``manage.py embed``: every subject of ``subjects`` (a queryset), one at a time."""
    total = SyncResult()
    for subject_id in subjects.order_by("pk").values_list("pk", flat=True).iterator():
        total.merge(subject_embeddings_sync(subject_id=subject_id, embedder=embedder, rebuild=rebuild))
        if progress:
            progress(1)
    return total


@dataclass(frozen=True)
class _EnqueueEmbedding:
    """Runs after the commit; never raises, so a committed change always answers normally."""

    subject_id: int

    def __call__(self) -> None:
        if runs_in_process():
            try:
                task(TaskName.EMBED_SUBJECT).delay(self.subject_id)
            except Exception:  # noqa: BLE001 - any failure: `manage.py embed` repairs what this missed
                logger.exception("embedding of subject %s failed; `manage.py embed` catches up", self.subject_id)
            return
        if not publish_tasks(TaskName.EMBED_SUBJECT, [(self.subject_id,)]):
            logger.warning("embedding of subject %s not queued; `manage.py embed` catches up", self.subject_id)


def schedule_embedding(subject_id: int) -> None:
    """Enqueue one embedding sync per subject per transaction, however many facts changed."""
    callback = _EnqueueEmbedding(subject_id)
    on_commit_once(callback)
