"""manage.py extraction_dry_run SLUG: what another extractor or prompt version would propose
from a tenant's stored messages, compared with what exists (SPEC §4, §8). Writes no
candidate, fact or message: only the report, which a tenant admin can open in the product."""
from django.core.management.base import BaseCommand, CommandError

from reviews.actors import SYSTEM
from reviews.errors import InvalidInput
from reviews.extraction import get_extractor, get_extractor_named
from reviews.models import DryRunGroup, Tenant
from reviews.services.dry_run import extraction_dry_run


class Command(BaseCommand):
    help = "Replay a tenant's stored messages through an extractor; report what would change, write nothing."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--days", type=int, default=30, help="messages of the last N days (default 30)")
        parser.add_argument("--limit", type=int, default=None, help="at most the newest N messages")
        parser.add_argument("--extractor", choices=("llm", "rules"), default=None,
                            help="default: the tenant's active extractor")
        parser.add_argument("--prompt-version", default=None, help="default: the extractor's current one")

    def handle(self, *args, slug, days, limit, extractor, prompt_version, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant {slug!r}.")
        try:
            chosen = (get_extractor_named(extractor, prompt_version=prompt_version)
                      if extractor or prompt_version else get_extractor(tenant))
            report = extraction_dry_run(tenant=tenant, extractor=chosen, actor=SYSTEM, days=days, limit=limit)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        except InvalidInput as exc:
            raise CommandError(str(exc)) from None
        figures = report.figures
        write = self.stdout.write
        write(f"dry run #{report.pk}: {report.extractor} {report.prompt_version}, {figures['messages']} message(s)"
              f" of the last {days} day(s), {figures['failures']} failed, {figures['proposed']} proposal(s)")
        labels = {
            DryRunGroup.RE_PROPOSED: "would re-propose approved values",
            DryRunGroup.MISSED: "would miss approved values",
            DryRunGroup.NEW: "would propose new values",
            DryRunGroup.REFUSED: "  of them refused or deleted before",
        }
        for group in DryRunGroup:
            write(f"{labels[group]:<36} {figures[group]:>6}")
        for group in DryRunGroup:
            for example in report.examples.get(group, []):
                write(f"  [{group}] {example['user_id']} {example['message_id']}: {example['entity']}"
                      f" {example['field']} = {example['value']}")
