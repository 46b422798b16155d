from django.core.management.base import BaseCommand, CommandError

from reviews.audit import verify_tenant
from reviews.models import Tenant


class Command(BaseCommand):
    help = "Verify every tenant's audit hash chain; reports the first broken link."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant slug.")

    def handle(self, *args, tenant=None, **options):
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
