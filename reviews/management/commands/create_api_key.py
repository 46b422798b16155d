from django.core.management.base import BaseCommand, CommandError

from reviews.errors import DomainError
from reviews.models import Tenant
from reviews.services.tenants import api_key_create


class Command(BaseCommand):
    help = "Create an API key; the key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--scopes", required=True, help="comma-separated: ingest,recall,recall:sensitive,review,admin")
        parser.add_argument("--source", default="chat", choices=["chat", "business_system"])
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, scopes, source, name, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant {slug!r}.")
        try:
            key, raw_key = api_key_create(
                tenant=tenant, scopes=[s.strip() for s in scopes.split(",") if s.strip()], source=source, name=name
            )
        except DomainError as exc:
            raise CommandError(f"{exc.message} {exc.details}") from None
        self.stderr.write(f"Key {key.prefix} for {tenant.slug}, scopes {','.join(key.scopes)}, source {key.source}.")
        self.stderr.write("Store it now: it is not kept and cannot be shown again.")
        self.stdout.write(raw_key)
