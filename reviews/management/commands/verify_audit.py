import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.audit import verify_tenant
from reviews.models import Tenant
from reviews.services.audit_export import audit_file_verify


class Command(BaseCommand):
    help = (
        "Verify every tenant's audit hash chain; reports the first broken link. With --file, "
        "verify an exported JSON Lines or CSV file instead, naming every row that was changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant slug.")
        parser.add_argument("--file", type=Path, help="An export (from export_audit, the API or the auditor page).")
        parser.add_argument("--manifest", type=Path, help="The export's manifest, if kept apart from the file.")
        parser.add_argument(
            "--no-values",
            action="store_true",
            help="Skip checking values against their digests (they need this installation's digest key).",
        )

    def handle(self, *args, tenant=None, file=None, manifest=None, no_values=False, **options):
        if file is not None:
            return self.verify_file(file, manifest, check_values=not no_values)
        tenants = Tenant.objects.all()
        if tenant:
            tenants = tenants.filter(slug=tenant)
            if not tenants:
                raise CommandError(f"No tenant {tenant!r}.")
        broken = []
        for row in tenants:
            result = verify_tenant(row.pk)
            if result.ok:
                self.stdout.write(f"{row.slug}: ok, {result.events} events, head {result.head_hash[:16]}…")
            else:
                self.stdout.write(self.style.ERROR(f"{row.slug}: BROKEN at {result.broken}"))
                broken.append(result.broken)
        if broken:
            raise CommandError(f"Audit chain broken in {len(broken)} tenant(s); first: {broken[0]}")

    def verify_file(self, path: Path, manifest_path: Path | None, *, check_values: bool) -> None:
        try:
            manifest = json.loads(manifest_path.read_text()) if manifest_path else None
            with path.open("rb") as stream:
                result = audit_file_verify(stream, manifest=manifest, check_values=check_values)
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {exc}") from None
        if result.ok:
            head = (result.manifest or {}).get("chain_head", {})
            self.stdout.write(
                f"{path.name}: ok, {result.rows} rows, complete per its manifest "
                f"(chain head #{head.get('seq')} {str(head.get('hash'))[:16]}…)"
            )
            return
        for problem in result.problems:
            self.stdout.write(self.style.ERROR(f"{path.name}: {problem}"))
        raise CommandError(f"{path.name}: {len(result.problems)} problem(s); first: {result.problems[0]}")
