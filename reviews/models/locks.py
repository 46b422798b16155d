"""The subject's row lock, the first lock every write service takes, and the lock order."""
from __future__ import annotations

from .tenancy import Subject


def lock_subject(subject_id: int) -> Subject:
    """Take the subject's row lock: the first lock of every writer.

    **The lock order** (every write service, so no two of them wait on each other in a
    cycle):

    1. the subject row(s): this lock (``SELECT … FOR UPDATE``); several subjects in
       ascending id order (:func:`lock_subjects`);
    2. then the subject's own rows (messages, candidates, facts, deletions, links) and
       tenant-wide rows (the tenant row, keys, memberships, export jobs);
    3. last, the tenant's audit-chain head, locked when the service appends its events
       (``record_many`` in reviews/audit.py).

    A row lock, not an advisory lock: PostgreSQL checks a foreign key at commit
    (Django's constraints are deferred) by taking a share lock on the referenced row, so
    a writer that inserts a message or a link for a subject it did not lock first would
    take that lock *after* the chain head, while the others hold the subject and wait for
    the head: a deadlock (40 parallel ingests for one user gave 23 HTTP 500s). Holding
    the subject row first makes that check free and makes an erasure, which deletes under
    the same lock, exclusive. Rows that are only updated, never deleted, and are the
    target of many foreign keys (the tenant) are locked ``FOR NO KEY UPDATE`` instead,
    which those commit-time checks do not wait for.
    """
    return Subject.objects.select_for_update(of=("self",)).select_related("tenant").get(pk=subject_id)


def lock_subjects(subject_ids) -> list[Subject]:
    """Lock several subjects, in ascending id order (step 1 of :func:`lock_subject`)."""
    return list(
        Subject.objects.select_for_update(of=("self",)).filter(pk__in=set(subject_ids)).order_by("pk")
    )
