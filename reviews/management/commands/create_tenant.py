from django.core.management.base import BaseCommand, CommandError

from reviews.errors import DomainError
from reviews.services.tenants import tenant_create


class Command(BaseCommand):
    help = "Create a tenant with the default field schema (SPEC §2)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, name, **options):
        try:
            tenant = tenant_create(slug=slug, name=name)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS(f"Created tenant {tenant.slug}"))
