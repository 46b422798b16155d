"""Celery tasks: load by id, call a service; nothing else."""
from celery import shared_task

from . import publication
from .services import audit_export, retention


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


@shared_task(acks_late=True)
def expire_facts() -> None:
    """The beat's retention sweep (SPEC §8): facts, idle threads, old messages."""
    retention.retention_sweep()


@shared_task(acks_late=True)
def audit_export_run(export_id: int) -> None:
    audit_export.audit_export_run(export_id=export_id)
