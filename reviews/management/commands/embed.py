"""manage.py embed [--tenant SLUG] [--rebuild]: embed published facts (SPEC §8).

Embeds the facts that have no current embedding (new, edited, or made by another
embedder than MEMORY_EMBEDDER) and deletes the vectors of facts no longer published;
``--rebuild`` re-embeds every published fact. One subject at a time, with a progress bar;
recall keeps working meanwhile (facts not yet embedded rank lexically).
"""
import sys

from django.core.management.base import BaseCommand, CommandError

from reviews.embeddings.embedders import EmbedderUnavailable, configured_embedder
from reviews.embeddings.sync import embeddings_catch_up
from reviews.management.progress import ProgressBar
from reviews.models import Subject, Tenant


class Command(BaseCommand):
    help = "Embed published facts that have no current embedding (all of them with --rebuild)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", default=None, help="only this tenant's subjects (its slug)")
        parser.add_argument("--rebuild", action="store_true", help="re-embed every published fact")

    def handle(self, *args, tenant, rebuild, **options):
        subjects = Subject.objects.all()
        if tenant:
            found = Tenant.objects.filter(slug=tenant).first()
            if found is None:
                raise CommandError(f"No tenant {tenant!r}.")
            subjects = subjects.filter(tenant=found)
        embedder = configured_embedder()
        if not embedder.enabled:
            self.stdout.write("MEMORY_EMBEDDER is none: only removing the vectors of facts no longer published.")
        progress = ProgressBar(self.stderr, subjects.count(), tty=sys.stderr.isatty())
        try:
            result = embeddings_catch_up(subjects=subjects, rebuild=rebuild, embedder=embedder, progress=progress.advance)
        except EmbedderUnavailable as exc:
            raise CommandError(f"The embedder did not answer: {exc}. Run the command again once it does.") from None
        progress.finish()
        self.stdout.write(
            f"embedder {embedder.key}: {result.embedded} embedded, {result.current} already current, "
            f"{result.removed} removed"
        )
