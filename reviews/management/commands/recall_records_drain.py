import logging
import signal
import time

import redis
from django.core.management.base import BaseCommand
from django.db import DatabaseError, close_old_connections

from reviews.recall.records import (
    DRAIN_BATCH,
    DrainReport,
    handed_off,
    recall_records_drain,
    recall_records_waiting,
)

log = logging.getLogger("reviews.recall.records")

# How long one read waits on the stream for the first entry (also how soon a stop is heard).
FOLLOW_BLOCK_MS = 1000
# A failure (Redis restarting, the database failing over) is retried after this long.
RETRY_SECONDS = 1.0
REPORT_EVERY_SECONDS = 60
# After a batch that did not fill, wait this long before reading again: under a steady flow
# of recalls the next read then finds a batch rather than the few records that came while the
# last one was written, so the database takes a commit (a WAL flush, the cost that handing
# records off exists to spread) per batch, not per record or two. Records show this much
# later at most.
FOLLOW_LINGER_SECONDS = 0.05
# How often the follow loop looks for entries another drain took and never acknowledged
# (they are taken over once idle RECLAIM_IDLE_MS); not before every batch, which would cost
# a round trip to Redis each time.
TAKE_OVER_EVERY_SECONDS = 10.0


class Command(BaseCommand):
    help = (
        "Write the recall records handed to the Redis stream (MEMORY_RECALL_RECORD_STREAM_URL) to the "
        "database, a batch per statement. Once by default; --follow keeps draining (run it as a process "
        "of its own beside the Celery worker). Safe to run several at once."
    )

    def add_arguments(self, parser):
        parser.add_argument("--follow", action="store_true", help="Keep draining until stopped (SIGTERM, Ctrl+C).")

    def handle(self, *args, follow, **options):
        if not handed_off():
            self.stdout.write("recall records are written by each recall here (no MEMORY_RECALL_RECORD_STREAM_URL, "
                              "or not PostgreSQL): nothing to drain")
            return
        if not follow:
            report = recall_records_drain()
            self.stdout.write(self._describe(report) + f"; {recall_records_waiting()} waiting")
            return
        stopping = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.append(True))
        total, reported_at, taken_over_at = DrainReport(), time.monotonic(), float("-inf")
        self.stdout.write("draining recall records; stop with SIGTERM or Ctrl+C")
        while not stopping:
            try:
                take_over = time.monotonic() - taken_over_at >= TAKE_OVER_EVERY_SECONDS
                report = recall_records_drain(block_ms=FOLLOW_BLOCK_MS, max_batches=1, take_over=take_over)
                if take_over:
                    taken_over_at = time.monotonic()
                total.add(report)
                if report.batches and report.taken < DRAIN_BATCH:
                    time.sleep(FOLLOW_LINGER_SECONDS)
            except (redis.RedisError, DatabaseError) as error:
                # Nothing is lost: what was read and not written stays pending, taken over later.
                log.warning("recall records: drain failed (%s); retrying in %.0f s", error, RETRY_SECONDS)
                close_old_connections()
                time.sleep(RETRY_SECONDS)
            if time.monotonic() - reported_at >= REPORT_EVERY_SECONDS:
                log.info("recall records: %s", self._describe(total))
                reported_at = time.monotonic()
        self.stdout.write(self._describe(total))

    @staticmethod
    def _describe(report: DrainReport) -> str:
        return (f"wrote {report.written} recall records in {report.batches} batches; skipped {report.skipped} "
                f"(already written, tenant gone or past the retention); {report.unreadable} unreadable")
