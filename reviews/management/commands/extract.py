"""manage.py extract: run pending or failed extractions here and now, with progress.

``--pending`` does what the beat's sweep does, but in this process (useful when no worker
runs, or after the broker was down); ``--failed`` resets failed ones and runs them again;
``--message ID`` runs (or re-runs) one message. ``--enqueue`` hands the work to the
workers instead of running it here.
"""
import time

from django.core.management.base import BaseCommand, CommandError

from reviews.actors import SYSTEM
from reviews.models import ExtractionStatus, Message, Tenant
from reviews.services.ingest import extractions_enqueue, extractions_rerun, message_extract_until_settled


class Command(BaseCommand):
    help = "Run pending or failed extractions (or one message's) with progress."

    def add_arguments(self, parser):
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--pending", action="store_true", help="every message still waiting for extraction")
        which.add_argument("--failed", action="store_true", help="every failed extraction, reset and run again")
        which.add_argument("--message", metavar="ID", help="one message, by its message id")
        parser.add_argument("--tenant", metavar="SLUG", help="only this tenant's messages")
        parser.add_argument("--limit", type=int, default=None, help="at most this many messages")
        parser.add_argument("--enqueue", action="store_true", help="send to the workers instead of running here")

    def handle(self, *args, pending, failed, message, tenant, limit, enqueue, **options):
        rows = Message.objects.all()
        if tenant:
            tenant_row = Tenant.objects.filter(slug=tenant).first()
            if tenant_row is None:
                raise CommandError(f"No tenant {tenant!r}.")
            rows = rows.filter(tenant=tenant_row)
        if message:
            rows = rows.filter(message_id=message)
            found = rows.count()
            if found == 0:
                raise CommandError(f"No message {message!r}.")
            if found > 1:
                raise CommandError(f"Message id {message!r} exists in {found} tenants: add --tenant SLUG.")
            # Reset only: the loop below (or --enqueue) does the work, with progress.
            extractions_rerun(messages=rows, actor=SYSTEM, enqueue=False)
        elif failed:
            extractions_rerun(messages=rows.filter(extraction_status=ExtractionStatus.FAILED), actor=SYSTEM, enqueue=False)
        pks = list(
            rows.filter(extraction_status=ExtractionStatus.PENDING).order_by("created_at", "pk").values_list("pk", flat=True)
        )
        if limit is not None:
            pks = pks[:limit]
        if not pks:
            if message:
                status = rows.values_list("extraction_status", flat=True).first()
                self.stdout.write(f"Message {message!r} is {status}: nothing to extract (a message is extracted once).")
            else:
                self.stdout.write("Nothing to extract.")
            return
        if enqueue:
            sent = extractions_enqueue(pks, wait=True)
            self.stdout.write(f"Sent {sent} of {len(pks)} message(s) to the workers.")
            return
        self._run(pks)

    def _run(self, pks: list[int]) -> None:
        total, started = len(pks), time.monotonic()
        tally: dict[str, int] = {}
        candidates = 0
        for index, pk in enumerate(pks, 1):
            outcome = message_extract_until_settled(message_pk=pk)
            tally[outcome.status] = tally.get(outcome.status, 0) + 1
            candidates += outcome.candidates
            label = Message.objects.filter(pk=pk).values_list("message_id", flat=True).first() or pk
            detail = f"{outcome.candidates} candidate(s)" if outcome.status == "done" else outcome.error or outcome.status
            self.stdout.write(f"[{index}/{total}] {label}: {outcome.status} ({detail})")
        elapsed = time.monotonic() - started
        summary = ", ".join(f"{count} {status}" for status, count in sorted(tally.items()))
        self.stdout.write(self.style.SUCCESS(f"Extracted {total} message(s) in {elapsed:.1f}s: {summary}; {candidates} candidate(s)."))
