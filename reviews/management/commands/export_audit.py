import json
import sys
from datetime import datetime, timezone as dt_timezone
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from reviews.actors import SYSTEM
from reviews.errors import DomainError
from reviews.exports import ExportFilters
from reviews.models import ExportFormat, Tenant
from reviews.services.audit_export import audit_export_stream


def moment(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if timezone.is_aware(value) else timezone.make_aware(value, dt_timezone.utc)


class Command(BaseCommand):
    help = (
        "Export a tenant's audit events as JSON Lines or CSV, streamed in constant memory. The "
        "last record is the manifest (also written beside --output as <file>.manifest.json); "
        "check a file with `verify_audit --file`."
    )

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="Tenant slug.")
        parser.add_argument("--format", choices=ExportFormat.values, default=ExportFormat.JSONL)
        parser.add_argument("--output", "-o", type=Path, help="File to write (default: standard output).")
        parser.add_argument("--since", type=moment, help="ISO time, inclusive.")
        parser.add_argument("--until", type=moment, help="ISO time, exclusive.")
        parser.add_argument("--action", default="", help="Exact, or a prefix ending in * (fact.*).")
        parser.add_argument("--actor", default="", help="Exact (reviewer:3), or a prefix ending in *.")
        parser.add_argument("--user-id", default="", help="Only this subject's events.")
        parser.add_argument("--object", default="", help="type or type:id.")

    def handle(self, *args, tenant, format, output, **options):
        row = Tenant.objects.filter(slug=tenant).first()
        if row is None:
            raise CommandError(f"No tenant {tenant!r}.")
        filters = ExportFilters(
            since=options["since"],
            until=options["until"],
            action=options["action"],
            actor=options["actor"],
            user_id=options["user_id"],
            object=options["object"],
        )
        try:
            exporter = audit_export_stream(tenant=row, filters=filters, format=format, actor=SYSTEM)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        target = output.open("wb") if output else sys.stdout.buffer
        try:
            for chunk in exporter.stream():
                target.write(chunk)
        finally:
            if output:
                target.close()
        if output:
            manifest = exporter.manifest()
            output.with_name(output.name + ".manifest.json").write_text(json.dumps(manifest, indent=2))
            self.stderr.write(f"wrote {exporter.rows} events to {output} (sha256 {manifest['sha256'][:16]}…)")
