"""One on_commit callback per transaction (reviews/transactions.py): however often a change
asks, whatever its savepoints rolled back, and nothing after a rollback."""
import threading
from dataclasses import dataclass, field

import pytest
from django.db import connection, transaction

from reviews.transactions import in_transaction, on_commit_once


@dataclass(frozen=True)
class Note:
    """A callback equal to another for the same subject; what ran is written to ``ran``."""

    subject_id: int
    ran: list = field(compare=False, hash=False, repr=False)

    def __call__(self) -> None:
        self.ran.append(self.subject_id)


class Undone(Exception):
    pass


def rolled_back_savepoint(*notes: Note) -> None:
    try:
        with transaction.atomic():
            for note in notes:
                on_commit_once(note)
            raise Undone
    except Undone:
        pass


def run(callbacks) -> None:
    for callback in callbacks:
        callback()


def test_many_changes_of_a_subject_register_one_callback(db, django_capture_on_commit_callbacks):
    ran = []
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for _ in range(5):
            on_commit_once(Note(7, ran))
        on_commit_once(Note(8, ran))
    assert len(callbacks) == 2
    assert ran == [7, 8]


def test_a_savepoint_rolled_back_takes_its_callback_and_the_next_change_registers_again(
    db, django_capture_on_commit_callbacks
):
    ran = []
    with django_capture_on_commit_callbacks() as callbacks:
        rolled_back_savepoint(Note(7, ran))
        on_commit_once(Note(7, ran))
        on_commit_once(Note(7, ran))
    run(callbacks)
    assert ran == [7]


def test_a_callback_registered_before_a_savepoint_survives_its_rollback(db, django_capture_on_commit_callbacks):
    ran = []
    with django_capture_on_commit_callbacks() as callbacks:
        on_commit_once(Note(7, ran))
        rolled_back_savepoint(Note(7, ran), Note(8, ran))
        on_commit_once(Note(7, ran))
        on_commit_once(Note(8, ran))
    run(callbacks)
    assert ran == [7, 8]


def test_a_callback_in_a_released_savepoint_is_the_transactions(db, django_capture_on_commit_callbacks):
    ran = []
    with django_capture_on_commit_callbacks() as callbacks:
        with transaction.atomic():
            on_commit_once(Note(7, ran))
        on_commit_once(Note(7, ran))
    run(callbacks)
    assert ran == [7]


def test_once_a_callback_ran_the_next_change_registers_again(db, django_capture_on_commit_callbacks):
    # What a commit does: the callback runs, and what changes afterwards needs another.
    ran = []
    with django_capture_on_commit_callbacks(execute=True):
        on_commit_once(Note(7, ran))
    with django_capture_on_commit_callbacks(execute=True):
        on_commit_once(Note(7, ran))
    assert ran == [7, 7]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_runs_nothing_and_hides_nothing_from_the_next():
    ran = []
    with pytest.raises(Undone):
        with transaction.atomic():
            on_commit_once(Note(7, ran))
            raise Undone
    assert ran == []
    with transaction.atomic():
        on_commit_once(Note(7, ran))
        on_commit_once(Note(7, ran))
        assert ran == []
    assert ran == [7]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_callback_runs_at_once_each_time():
    ran = []
    on_commit_once(Note(7, ran))
    on_commit_once(Note(7, ran))
    assert ran == [7, 7]


def test_another_threads_pending_callback_hides_nothing_of_this_one(db, django_capture_on_commit_callbacks):
    ran = []
    with django_capture_on_commit_callbacks():
        on_commit_once(Note(7, ran))

        def other_thread():
            try:
                with transaction.atomic():
                    on_commit_once(Note(7, ran))
            finally:
                connection.close()

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert ran == [7]  # the other thread's commit ran its own; this one's is still pending


def test_in_transaction_follows_atomic(transactional_db):
    assert not in_transaction()
    with transaction.atomic():
        assert in_transaction()
        with transaction.atomic():
            assert in_transaction()
    assert not in_transaction()
