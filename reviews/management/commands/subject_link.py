from django.core.management.base import BaseCommand, CommandError

from reviews.actors import SYSTEM
from reviews.errors import DomainError
from reviews.models import Tenant
from reviews.services.portal import portal_link_create


class Command(BaseCommand):
    help = "Print a signed, expiring, single-use link to a subject's self-service page, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("user_id")
        parser.add_argument("--base-url", default=None, help="Public address of this site (default: MEMORY_PUBLIC_BASE_URL).")

    def handle(self, *args, slug, user_id, base_url, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant {slug!r}.")
        try:
            url, expires_at = portal_link_create(tenant=tenant, user_id=user_id, actor=SYSTEM, base_url=base_url)
        except DomainError as exc:
            raise CommandError(f"{exc.message} {exc.details}") from None
        self.stderr.write(f"Link for {tenant.slug}/{user_id}; opens once, expires {expires_at.isoformat()}.")
        self.stdout.write(url)
