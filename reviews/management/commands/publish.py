from django.core.management.base import BaseCommand, CommandError

from reviews.models import Tenant
from reviews.publication import reconcile

SHOWN = 20


def _address(address) -> str:
    namespace, key = address
    return f"{'/'.join(namespace)} :: {key}"


class Command(BaseCommand):
    help = (
        "Compare the LangGraph Store projection with the published facts (--check) or make "
        "it match them exactly (--rebuild): put what is missing or different, delete what "
        "no fact supports."
    )

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--rebuild", action="store_true", help="Repair every difference.")
        mode.add_argument("--check", action="store_true", help="Report differences; exit 1 if any.")
        parser.add_argument("--tenant", help="Only this tenant slug.")

    def handle(self, *args, rebuild=False, check=False, tenant=None, **options):
        only = None
        if tenant:
            only = Tenant.objects.filter(slug=tenant).first()
            if only is None:
                raise CommandError(f"No tenant {tenant!r}.")

        def progress(slug, done, total):
            if options["verbosity"] > 1:
                self.stderr.write(f"{slug}: {done}/{total} subjects")

        drift = reconcile(tenant=only, repair=rebuild, progress=progress)
        counts = drift.counts
        summary = f"missing {counts['missing']}, changed {counts['changed']}, extra {counts['extra']}"
        for label, addresses in (("missing", drift.missing), ("changed", drift.changed), ("extra", drift.extra)):
            for address in addresses[:SHOWN]:
                self.stdout.write(f"  {label}: {_address(address)}")
            if len(addresses) > SHOWN:
                self.stdout.write(f"  … and {len(addresses) - SHOWN} more {label}")
        if rebuild:
            self.stdout.write(self.style.SUCCESS(f"Rebuilt the projection ({summary} repaired)."))
            return
        if drift:
            raise CommandError(f"The projection has drifted from the facts: {summary}. Run `publish --rebuild`.")
        self.stdout.write(self.style.SUCCESS("The projection matches the facts."))
