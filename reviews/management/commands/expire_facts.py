from django.core.management.base import BaseCommand, CommandError

from reviews.models import Tenant
from reviews.services.deletions import due_deletions_carry_out
from reviews.services.retention import retention_sweep


class Command(BaseCommand):
    help = (
        "Apply retention now (also run by the Celery beat every 15 minutes): facts past their "
        "retention, thread-scoped memory of idle threads, messages past the message retention."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant slug.")

    def handle(self, *args, tenant=None, **options):
        tenants = Tenant.objects.all()
        if tenant:
            tenants = tenants.filter(slug=tenant)
            if not tenants:
                raise CommandError(f"No tenant {tenant!r}.")
        report = retention_sweep(tenants=list(tenants))
        # Subjects' deletions past their undo window (the beat runs this every minute).
        deleted = due_deletions_carry_out(tenants=list(tenants))
        self.stdout.write(
            f"carried out {deleted} scheduled deletions, expired {report.facts_expired} facts, withdrew {report.candidates_withdrawn} thread candidates, "
            f"deleted {report.messages_deleted} messages"
        )
