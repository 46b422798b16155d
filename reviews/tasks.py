"""Celery tasks: load by id, call a service; nothing else."""
from celery import shared_task

from . import publication
from .embeddings.embedders import EmbedderUnavailable
from .embeddings.sync import subject_embeddings_sync
from .recall import partitions as recall_partitions, records as recall_records
from .services import audit_export, deletions, ingest, retention
from .webhooks import delivery


@shared_task(
    acks_late=True,
    # The store or the database briefly unreachable: retry with backoff; if it never
    # comes back, `manage.py publish --check` shows the drift and `--rebuild` repairs it.
    autoretry_for=publication.TRANSIENT_STORE_ERRORS,
    retry_backoff=2,
    retry_backoff_max=120,
    max_retries=8,
)
def project_subject(subject_id: int) -> None:
    publication.project_subject(subject_id)


@shared_task(
    acks_late=True,
    # A remote embedder (openai:<model>) briefly unreachable: retry with backoff; until
    # then recall ranks the subject's new facts lexically, and `manage.py embed` catches up.
    autoretry_for=(EmbedderUnavailable,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=6,
)
def embed_subject(subject_id: int) -> None:
    subject_embeddings_sync(subject_id=subject_id)


@shared_task(acks_late=True)
def reconcile_projection() -> None:
    """The beat's safety net for the store: repairs any drift a lost projection task left."""
    publication.reconcile(repair=True)


@shared_task(acks_late=True)
def expire_facts() -> None:
    """The beat's retention sweep (SPEC §8): facts, idle threads, old messages."""
    retention.retention_sweep()


@shared_task(acks_late=True)
def carry_out_fact_deletion(deletion_id: int) -> None:
    """A subject's deletion once its undo window has passed."""
    deletions.fact_deletion_carry_out(deletion_id=deletion_id)


@shared_task(acks_late=True)
def carry_out_due_deletions() -> int:
    """The beat's safety net: scheduled deletions whose delayed task was lost."""
    return deletions.due_deletions_carry_out()


@shared_task(acks_late=True)
def maintain_recall_partitions() -> None:
    """Hourly: drop recall records' days past MEMORY_RECALL_RETENTION_DAYS, make the days ahead."""
    recall_partitions.recall_partitions_maintain()


# Beyond this a run stops and leaves the rest to the next (the beat's runs do not pile up
# behind one that a flood keeps busy); the drain process, not the beat, carries the load.
BEAT_DRAIN_MAX_BATCHES = 200


@shared_task(acks_late=True, expires=30)
def drain_recall_records() -> int:
    """Every few seconds: write recall records handed to the stream (a backstop for the drain process)."""
    return recall_records.recall_records_drain(max_batches=BEAT_DRAIN_MAX_BATCHES).written


@shared_task(acks_late=True)
def audit_export_run(export_id: int) -> None:
    audit_export.audit_export_run(export_id=export_id)


@shared_task(bind=True, acks_late=True)
def extract_message(self, message_pk: int) -> None:
    """One extraction attempt; a transient failure comes back after the service's backoff."""
    if self.request.is_eager:
        ingest.message_extract_until_settled(message_pk=message_pk)
        return
    outcome = ingest.message_extract(message_pk=message_pk)
    if outcome.retry_in is not None:
        # No Celery ceiling: the row counts attempts and fails itself at the ceiling.
        raise self.retry(countdown=outcome.retry_in, max_retries=None)


@shared_task(acks_late=True)
def sweep_pending_extractions() -> int:
    """The beat's safety net: pending messages the broker lost go round again."""
    return ingest.pending_extractions_sweep()


@shared_task(acks_late=True, expires=30)
def deliver_due_webhooks() -> int:
    """Every few seconds, and after each commit that owes events: send due webhook deliveries."""
    return delivery.deliver_due()


@shared_task(acks_late=True)
def prune_webhook_events() -> int:
    """Daily: the delivery log forgets events settled long ago."""
    return delivery.settled_events_prune()
