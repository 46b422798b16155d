from django.core.management.base import BaseCommand, CommandError

from reviews.actors import SYSTEM
from reviews.errors import DomainError
from reviews.models import Tenant
from reviews.services.tenants import api_key_revoke


class Command(BaseCommand):
    help = (
        "Revoke a tenant's API key, named by its prefix. Running processes stop accepting it "
        "within MEMORY_API_KEY_CACHE_SECONDS."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("prefix", help="the key's prefix, as listed by the console or the admin (mp_<prefix>_…)")

    def handle(self, *args, slug, prefix, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant {slug!r}.")
        try:
            key = api_key_revoke(tenant=tenant, prefix=prefix, actor=SYSTEM)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS(f"Revoked key {key.prefix} of {tenant.slug} at {key.revoked_at:%Y-%m-%d %H:%M:%S} UTC."))
