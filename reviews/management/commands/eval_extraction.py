"""manage.py eval_extraction DATASET.jsonl: score an extractor on a labelled set (SPEC §8).

Writes nothing to the database: the extractor runs on contexts built from the file.
Prints a progress bar (to stderr), then the figures and their breakdowns; ``--json``
adds one JSON object on the last line. Exits non-zero when a secret leaked.
"""
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from reviews.extraction import get_extractor_named
from reviews.extraction.evaluation import DatasetError, evaluate_extractor, load_dataset
from reviews.management.progress import ProgressBar

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Score an extractor on a labelled JSON Lines data set; no database writes."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="JSON Lines file, one labelled item a line")
        parser.add_argument("--extractor", choices=("llm", "rules"), default=None,
                            help="which extractor (default: MEMORY_EXTRACTOR)")
        parser.add_argument("--prompt-version", default=None, help="the LLM prompt version to score")
        parser.add_argument("--json", dest="as_json", action="store_true", help="also print the figures as JSON on the last line")
        parser.add_argument("--show-errors", type=int, default=0, metavar="N",
                            help="list up to N items with a miss or an extra candidate")

    def handle(self, *args, dataset, extractor, prompt_version, as_json, show_errors, **options):
        try:
            with open(dataset, encoding="utf-8") as handle:
                items = load_dataset(handle)
        except OSError as exc:
            raise CommandError(f"Cannot read {dataset}: {exc.strerror}") from None
        except DatasetError as exc:
            raise CommandError(f"{dataset}: {exc}") from None
        try:
            chosen = get_extractor_named(extractor, prompt_version=prompt_version)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        progress = ProgressBar(self.stderr, len(items))
        report = evaluate_extractor(chosen, items, on_item=progress.update)
        progress.finish()
        figures = report.as_dict()
        self._print_table(figures)
        if show_errors:
            self._print_errors(report, show_errors)
        if as_json:
            self.stdout.write(_json_line(figures))
        if figures["secret_leaks"]:
            raise CommandError(_("%(count)d secret(s) leaked into candidates.") % {"count": figures["secret_leaks"]})

    def _print_table(self, figures: dict) -> None:
        write = self.stdout.write
        write(f"extractor {figures['extractor']}  prompt {figures['prompt_version']}  items {figures['items']}"
              f"  expected {figures['expected']}  proposed {figures['proposed']}  errors {figures['errors']}")
        write(f"precision {figures['precision']:.3f}  recall {figures['recall']:.3f}  f1 {figures['f1']:.3f}"
              f"  noise {figures['noise_rate']:.3f} ({figures['noise_items']}/{figures['quiet_items']} items)"
              f"  secret leaks {figures['secret_leaks']}  ungrounded {figures['ungrounded']}")
        for name in ("by_field", "by_kind", "by_scope", "by_language"):
            write("")
            write(f"{name[3:]:<22} {'tp':>4} {'fp':>4} {'fn':>4} {'prec':>6} {'recall':>6} {'f1':>6}")
            for key, tally in figures[name].items():
                write(f"{key:<22} {tally['tp']:>4} {tally['fp']:>4} {tally['fn']:>4} {tally['precision']:>6.3f}"
                      f" {tally['recall']:>6.3f} {tally['f1']:>6.3f}")

    def _print_errors(self, report, limit: int) -> None:
        shown = 0
        for outcome in report.outcomes:
            if not (outcome.missed or outcome.extra or outcome.error) or shown >= limit:
                continue
            shown += 1
            self.stdout.write(f"\n{outcome.item.id}: {outcome.item.target[1]}")
            for expected in outcome.missed:
                self.stdout.write(f"  missed {expected.field}={expected.values[0]} ({expected.kind}, {expected.scope})")
            for candidate in outcome.extra:
                self.stdout.write(f"  extra  {candidate.entity_type}.{candidate.field}={candidate.value}"
                                  f" ({candidate.kind}, {candidate.scope})")
            if outcome.error:
                self.stdout.write(f"  error  {outcome.error}")


def _json_line(figures: dict) -> str:
    return json.dumps(figures, ensure_ascii=False, sort_keys=True)
