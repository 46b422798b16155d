"""manage.py eval_recall DATASET.jsonl: measure recall's ranking on a labelled set (SPEC §8).

Writes nothing to the database: each item's facts are held in memory and ranked as recall
ranks them. Prints a progress bar (stderr), recall@1/@3/@5 and MRR overall, by language
pair (query language → fact language) and by kind (lexical, paraphrase, cross-language),
relevant mode's figures (also on each part of the split present) and the guard checks; ``--json`` adds one object on the last line.
``--part`` picks the tuning part or the held-aside part (reviews/recall/evaluation.py);
``--embedder`` repeated compares several embedders in one run.
Exits non-zero when a forbidden fact came back.
"""
import json
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from reviews.embeddings.embedders import EmbedderUnavailable, embedder_for
from reviews.recall.evaluation import Part, evaluate, load_items
from reviews.management.progress import ProgressBar


class Command(BaseCommand):
    help = "Score recall's ranking on a labelled JSON Lines recall set; no database writes."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="JSON Lines file, one subject with its facts and questions a line")
        parser.add_argument("--embedder", action="append", default=None,
                            help="local, none or openai:<model> (default: MEMORY_EMBEDDER); repeat it to "
                                 "compare several in one run")
        parser.add_argument("--part", choices=(Part.ALL, Part.TUNING, Part.HELD_ASIDE), default=Part.ALL)
        parser.add_argument("--json", dest="as_json", action="store_true", help="also print the figures as JSON on the last line")

    def handle(self, *args, dataset, embedder, part, as_json, **options):
        try:
            with open(dataset, encoding="utf-8") as handle:
                items = load_items(handle, part)
        except OSError as exc:
            raise CommandError(f"Cannot read {dataset}: {exc.strerror}") from None
        except ValueError as exc:
            raise CommandError(f"{dataset}: {exc}") from None
        specs = embedder or [settings.MEMORY_EMBEDDER]
        try:
            chosen = [embedder_for(spec) for spec in specs]
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        leaks = 0
        for spec, one in zip(specs, chosen):
            progress = ProgressBar(self.stderr, len(items), tty=sys.stderr.isatty())
            try:
                report = evaluate(items, one, progress=progress.advance)
            except EmbedderUnavailable as exc:
                raise CommandError(f"The embedder {spec} did not answer: {exc}") from None
            progress.finish()
            figures = {"embedder": one.key, "part": part, "items": len(items), **report.as_dict()}
            leaks += figures["forbidden_leaks"]
            self._print(figures)
            self.stdout.write("")
            if as_json:
                # One object a line, one line per embedder: with one embedder, the last line.
                self.stdout.write(json.dumps(figures, ensure_ascii=False, sort_keys=True))
        if leaks:
            raise CommandError(f"{leaks} forbidden fact(s) came back.")

    def _print(self, figures: dict) -> None:
        write = self.stdout.write
        write(f"embedder {figures['embedder']}  part {figures['part']}  items {figures['items']}"
              f"  queries {figures['queries']}")
        header = f"{'':<22} {'n':>4} {'r@1':>6} {'r@3':>6} {'r@5':>6} {'mrr':>6}"

        def row(name, tally):
            write(f"{name:<22} {tally['queries']:>4} {tally['recall_at_1']:>6.3f} {tally['recall_at_3']:>6.3f}"
                  f" {tally['recall_at_5']:>6.3f} {tally['mrr']:>6.3f}")

        write(header)
        row("overall", figures)
        row("cross-language", figures["cross_language"])
        row("relevant mode", figures["relevant_mode"])
        for part, tally in figures["relevant_mode_by_part"].items():
            row(f"  {part.replace('_', '-')}", tally)
        for name in ("by_lang", "by_kind"):
            write("")
            write(f"{name[3:]:<22}")
            for key, tally in figures[name].items():
                row(key, tally)
        write("")
        by_part = "".join(f"; {part.replace('_', '-')} {tally['unrelated_empty_when_relevant']}/{tally['unrelated']}"
                          for part, tally in figures["relevant_mode_by_part"].items())
        write(f"unrelated questions with nothing in relevant mode: {figures['unrelated_empty_when_relevant']}"
              f"/{figures['unrelated']}{by_part}")
        write(f"guard questions: {figures['guards']}  forbidden facts returned: {figures['forbidden_leaks']}")
