"""Celery tasks: load by id, call a service; nothing else."""
from celery import shared_task

from . import publication


@shared_task(acks_late=True)
def project_subject(subject_id: int) -> None:
    publication.project_subject(subject_id)
