"""Benchmark: the credential detector's precision, recall and speed, beside detect-secrets.

1. **Accuracy** on ``tests/fixtures/secrets_corpus.jsonl`` (positives with the secrets
   that must disappear, negatives that must survive unchanged). A positive counts as
   caught when masking leaves none of its secrets; a negative counts as a false alarm
   when anything in it is masked. Precision = caught / (caught + false alarms), recall =
   caught / positives. detect-secrets (its default plugins, limits and filters, line by
   line, as its file scan runs) does not mask: its findings are cut out of the text to score it the same way, and
   "flagged" says how often it reported anything at all. "both" masks with ours, then
   cuts out what detect-secrets still reports there: what using its plugins inside
   ours would add.
2. **Speed**: every message of the demo conversations and every corpus text, masked
   over and over for ``--seconds``; microseconds per message and per KB, and the share
   of the ingest budget (2,000 messages/s per core, 500 µs a message) it takes.

``--baseline FILE`` scores and times another version of the detector beside this one
(a module with ``mask_secrets``, e.g. the single-file detector this package replaced).

    python bench/secret_detectors.py [--seconds 2] [--baseline old_secrets.py] [--misses]
"""
import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "tests" / "fixtures" / "secrets_corpus.jsonl"
CONVERSATIONS = ROOT / "reviews" / "fixtures" / "demo_conversations.jsonl"
INGEST_BUDGET_PER_SECOND = 2000


def load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def speed_texts(corpus: list[dict]) -> list[str]:
    texts = [item["text"] for item in corpus]
    for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            texts += [m["content"] for m in json.loads(line)["messages"]]
    return texts


def ours(mask_secrets):
    def mask(text: str) -> tuple[str, bool]:
        masked = mask_secrets(text)
        return masked.text, masked.found
    return mask


def detect_secrets_masker():
    """detect-secrets as ``detect-secrets scan`` runs on a text file: its default plugins,
    their entropy limits and its filters, line by line. (Its ``scan_line`` is no measure:
    made for ad-hoc strings, it reports every word the entropy plugins see.)"""
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    settings = default_settings()
    settings.__enter__()  # for the whole run: it configures the plugins globally

    def mask(text: str) -> tuple[str, bool]:
        lines = list(enumerate(text.splitlines(), start=1))
        values = {s.secret_value for s in _process_line_based_plugins(lines, "message.txt") if s.secret_value}
        for value in sorted(values, key=len, reverse=True):
            text = text.replace(value, "[redacted]")
        return text, bool(values)
    mask.settings = settings  # closing the context (when it is collected) would unload the plugins
    return mask


def both(first, second):
    def mask(text: str) -> tuple[str, bool]:
        text, found = first(text)
        text, also = second(text)
        return text, found or also
    return mask


def score(name: str, mask, corpus: list[dict], show_misses: bool) -> None:
    caught = flagged = false_alarms = 0
    positives = [item for item in corpus if item["secrets"]]
    negatives = [item for item in corpus if not item["secrets"]]
    misses = []
    for item in positives:
        text, found = mask(item["text"])
        flagged += found
        if found and not any(secret in text for secret in item["secrets"]):
            caught += 1
        else:
            misses.append(("miss", item["id"], text))
    for item in negatives:
        text, found = mask(item["text"])
        if found or text != item["text"]:
            false_alarms += 1
            misses.append(("false alarm", item["id"], text))
    precision = caught / (caught + false_alarms) if caught + false_alarms else 0.0
    recall = caught / len(positives)
    print(f"[accuracy]  {name:<16} precision {precision:6.1%}  recall {recall:6.1%}  "
          f"({caught}/{len(positives)} positives masked, {flagged} flagged; "
          f"{false_alarms}/{len(negatives)} negatives touched)")
    if show_misses:
        for what, ident, text in misses:
            print(f"            {what:<11} {ident}: {text[:100]!r}")


def speeds(detectors: list[tuple[str, object]], texts: list[str], seconds: float) -> dict[str, float]:
    """Microseconds of CPU per message for each detector, measured in turns.

    The detectors take turns, one pass over ``texts`` each, until each has had ``seconds``
    of CPU: on a shared machine a burst of load then slows all of them alike, and the
    ratio between them stays fair. CPU time (``process_time``), not wall time, for the same
    reason."""
    size = sum(len(t.encode("utf-8")) for t in texts)
    spent = {name: 0.0 for name, _ in detectors}
    rounds = dict.fromkeys(spent, 0)
    while min(spent.values()) < seconds:
        for name, mask in detectors:
            start = time.process_time()
            for text in texts:
                mask(text)
            spent[name] += time.process_time() - start
            rounds[name] += 1
    per_message = {}
    for name, _ in detectors:
        per_message[name] = spent[name] / (rounds[name] * len(texts)) * 1e6
        per_kb = spent[name] / (rounds[name] * size / 1024) * 1e6
        share = per_message[name] / (1e6 / INGEST_BUDGET_PER_SECOND)
        print(f"[speed]     {name:<16} {per_message[name]:7.1f} µs/message  {per_kb:7.1f} µs/KB  "
              f"{1e6 / per_message[name]:>9,.0f} messages/s  ({share:.1%} of the ingest budget of "
              f"{INGEST_BUDGET_PER_SECOND:,} messages/s per core)")
    return per_message


def load_baseline(path: str):
    spec = importlib.util.spec_from_file_location("baseline_secrets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mask_secrets


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent masking, per detector")
    parser.add_argument("--baseline", help="another detector module to compare (a file with mask_secrets)")
    parser.add_argument("--misses", action="store_true", help="list each miss and false alarm")
    args = parser.parse_args()

    from reviews.secrets import mask_secrets

    corpus, detectors = load_corpus(), [("reviews.secrets", ours(mask_secrets))]
    if args.baseline:
        detectors.append(("baseline", ours(load_baseline(args.baseline))))
    third_party = detect_secrets_masker()
    if third_party is None:
        print("detect-secrets is not installed (requirements-dev.txt pins it): compared with nothing")
    else:
        detectors += [("detect-secrets", third_party), ("both", both(ours(mask_secrets), third_party))]
    texts = speed_texts(corpus)
    print(f"corpus: {sum(bool(i['secrets']) for i in corpus)} positives, {sum(not i['secrets'] for i in corpus)} "
          f"negatives; speed over {len(texts)} texts ({sum(len(t.encode()) for t in texts) / 1024:.0f} KB)")
    for name, mask in detectors:
        score(name, mask, corpus, args.misses)
    timings = speeds(detectors, texts, args.seconds)
    conversations = speed_texts([])
    print(f"conversations only ({len(conversations)} demo messages, what ingest mostly sees):")
    timings_conversations = speeds(detectors[:2], conversations, args.seconds)
    if "baseline" in timings:
        print(f"[speed]     on conversations reviews.secrets takes "
              f"{timings_conversations['reviews.secrets'] / timings_conversations['baseline']:.2f}× the baseline's time")
        print(f"[speed]     on everything reviews.secrets takes {timings['reviews.secrets'] / timings['baseline']:.2f}× "
              "the baseline's time per message")


if __name__ == "__main__":
    main()
