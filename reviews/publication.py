"""Publication of approved facts to the LangGraph Store (SPEC §5).

Services call :func:`schedule_projection` after changing a subject's facts; the
projection task runs once the transaction commits.
"""
from dataclasses import dataclass

from django.db import connection, transaction


@dataclass(frozen=True)
class _EnqueueProjection:
    subject_id: int

    def __call__(self) -> None:
        from .tasks import project_subject

        project_subject.delay(self.subject_id)


def schedule_projection(subject_id: int) -> None:
    """Enqueue one projection per subject per transaction, however many facts changed."""
    callback = _EnqueueProjection(subject_id)
    if connection.in_atomic_block and any(func == callback for _, func, _ in connection.run_on_commit):
        return
    transaction.on_commit(callback)


def project_subject(subject_id: int) -> None:
    """Mirror one subject's published facts into the store (built out in the publication work)."""
