import getpass

from django.core.management.base import BaseCommand, CommandError

from reviews.errors import DomainError
from reviews.models import Role, Tenant
from reviews.services.tenants import staff_create


class Command(BaseCommand):
    help = "Create a staff account of a tenant with one role."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("--role", default=Role.REVIEWER, choices=Role.values)
        parser.add_argument("--password", help="Omit to be prompted (or set none with --no-password).")
        parser.add_argument("--no-password", action="store_true")

    def handle(self, *args, slug, username, role, password, no_password, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"No tenant {slug!r}.")
        if password is None and not no_password:
            password = getpass.getpass(f"Password for {username}: ")
        try:
            staff_create(tenant=tenant, username=username, role=role, password=None if no_password else password)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS(f"Created {role} {username} in {tenant.slug}"))
