"""Benchmark: the rule extractor alone over the labelled sets, messages per CPU second.

Each set's items become the contexts ``eval_extraction`` builds (the last user message,
masked, with its history). One untimed pass first (jieba's dictionary is set up once per
process, on the first Chinese message), then passes for ``--seconds`` in this one process,
in wall time and in this process's CPU time (``time.process_time``: what a core spends,
honest on a shared machine). Target: 2,000 messages per CPU second. No database.

    python bench/extraction.py [--seconds 3]
"""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402 - after the environment above is set

django.setup()

from reviews.extraction.evaluation import item_context, load_dataset  # noqa: E402
from reviews.extraction.rules import RULES_VERSION, RuleExtractor  # noqa: E402

SETS = ("generalisation-dev", "generalisation-test", "extraction", "extraction_heldout")


def contexts():
    found = []
    for name in SETS:
        with open(ROOT / "reviews" / "fixtures" / "eval" / f"{name}.jsonl", encoding="utf-8") as handle:
            found += [item_context(item) for item in load_dataset(handle)]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    extractor, work = RuleExtractor(), contexts()
    start, cpu_start = time.perf_counter(), time.process_time()
    for context in work:
        extractor.extract(context)
    print(f"{RULES_VERSION}: first pass over {len(work)} messages (jieba set up once per process): "
          f"{time.perf_counter() - start:.2f} s wall, {time.process_time() - cpu_start:.2f} s CPU")
    done = found = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < args.seconds:
        for context in work:
            found += len(extractor.extract(context).candidates)
            done += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"{RULES_VERSION}: {done:,} messages in {wall:.2f} s wall, {cpu:.2f} s CPU: {done / wall:,.0f} messages/s wall, "
          f"{done / cpu:,.0f} per CPU second (target >= 2,000); {cpu / done * 1e6:,.0f} µs CPU per message")


if __name__ == "__main__":
    main()
