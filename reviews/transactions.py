"""Questions about the current transaction, answered through Django's documented API only.

Django's connection wrapper keeps its transaction state (the pending ``on_commit``
callbacks, the savepoint stack, the rollback flag) in attributes it does not document;
they change without notice between releases (tests/core/test_public_api_only.py keeps
them out). What the project needs of them is here, once.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connections, transaction


def in_transaction(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the code runs inside ``atomic()`` on ``using``.

    ``atomic()`` turns autocommit off for the transaction's length and Django refuses to
    turn it back on inside it; the project never turns autocommit off otherwise.
    """
    return not transaction.get_autocommit(using=using)


# The callbacks on_commit_once registered that have neither run nor been discarded, by
# (connection, callback). The values are weak on purpose: Django drops the callbacks a
# rollback discards (of the transaction, or of a savepoint they were registered under), and
# their entries go with them, so the next change registers again. A callback that runs
# removes its own entry first, so whatever it changes schedules anew.
_pending: weakref.WeakValueDictionary[tuple, _OnCommitOnce] = weakref.WeakValueDictionary()


class _OnCommitOnce:
    __slots__ = ("key", "callback", "__weakref__")

    def __init__(self, key: tuple, callback: Callable[[], None]):
        self.key = key
        self.callback = callback

    def __call__(self) -> None:
        if _pending.get(self.key) is self:
            del _pending[self.key]
        self.callback()

    def __repr__(self) -> str:
        return f"once({self.callback!r})"


def on_commit_once(callback: Callable[[], None], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """``transaction.on_commit(callback)`` unless an equal callback is already pending.

    One callback per transaction however often a change asks for it (a subject's
    projection after each of its facts changed). ``callback`` is compared by equality: a
    frozen dataclass of the ids it acts on. Nothing runs if the transaction rolls back;
    after a rollback to a savepoint, what was registered under it is gone and registers
    again. Outside a transaction Django runs the callback at once, as ``on_commit`` does.
    """
    # Keyed by the connection object, not only its alias: each thread has its own, and
    # another thread's pending callback says nothing of this thread's transaction.
    key = (connections[using], callback)
    if key in _pending:
        return
    once = _OnCommitOnce(key, callback)
    _pending[key] = once
    transaction.on_commit(once, using=using)
