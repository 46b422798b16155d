"""Jobs handed to a background lane at a due time, without holding the lane until then.

The embedded default (no broker) runs LLM extractions on one in-process lane
(:class:`reviews.background.BackgroundLane`). A retry that slept on that lane would hold
every message behind it for the whole backoff; instead the retry's due time is recorded
on the message row (as with a broker) and kept here: one daemon thread sleeps until the
earliest due time and only then submits the job to the lane, behind whatever arrived
meanwhile. A process that dies loses its timers, not the work: the rows stay pending with
their due time, and ``manage.py extract --pending`` (or the beat's sweep, with a broker)
sends them.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time


class DueJobs:
    def __init__(self, name: str, lane):
        self.name = name
        self.lane = lane
        self._due: list[tuple[float, int, object, tuple]] = []
        self._order = itertools.count()  # jobs due at the same time keep their order
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit_in(self, delay: float, func, *args) -> None:
        """Submit ``func(*args)`` to the lane once ``delay`` seconds have passed."""
        with self._changed:
            # Also after a fork (gunicorn, Celery prefork): the parent's thread is not in the child.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            heapq.heappush(self._due, (time.monotonic() + max(delay, 0.0), next(self._order), func, args))
            self._changed.notify_all()

    def waiting(self) -> int:
        with self._changed:
            return len(self._due)

    def cancel(self) -> int:
        """Forget the jobs not yet handed to the lane, as the process's exit would; returns
        how many. Their rows keep their due time, so the sweep still finds them."""
        with self._changed:
            dropped = len(self._due)
            self._due.clear()
            self._changed.notify_all()
            return dropped

    def drain(self) -> None:
        """Wait until every job scheduled so far has been handed to the lane and has run."""
        while True:
            with self._changed:
                while self._due:
                    self._changed.wait()
            self.lane.drain()
            with self._changed:
                if not self._due:  # nothing the lane's jobs scheduled in turn
                    return

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._changed.wait(timeout=self._due[0][0] - time.monotonic() if self._due else None)
                _, _, func, args = heapq.heappop(self._due)
                # Handed over before the waiters hear the heap changed: drain() then finds it on the lane.
                self.lane.submit(func, *args)
                self._changed.notify_all()
