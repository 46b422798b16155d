"""Benchmark: background embedding throughput per worker, and the model's memory per process.

    DJANGO_SETTINGS_MODULE=memory_portal.settings .venv/bin/python bench/embedding_throughput.py [--facts 2000]

One process, as one Celery worker process runs the embedding task: the resident memory
before the model is loaded and after (what each worker process pays; gunicorn's master
loads it once before forking, bench/encoder_preload.py), then facts embedded per
second in the task's batches (reviews/embeddings/sync.py EMBED_BATCH), on fact texts drawn
from the recall set, and query embeddings per second one at a time (a recall's first sight
of a question; repeats come from the cache).
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
django.setup()

from reviews.embeddings.embedders import embedder_for  # noqa: E402
from reviews.embeddings.sync import EMBED_BATCH  # noqa: E402
from reviews.embeddings.text import fact_text  # noqa: E402
from reviews.recall.evaluation import Part, load_items  # noqa: E402

DATASET = Path(__file__).resolve().parent.parent / "reviews/fixtures/eval/recall_eval.jsonl"


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--embedder", default="local")
    args = parser.parse_args()
    items = load_items(DATASET.read_text(encoding="utf-8").splitlines(), Part.ALL)
    texts = [fact_text(entity_type=f["entity_type"], field=f["field"], value=f["value"],
                       entity_name=f.get("entity_name", "")) for item in items for f in item["facts"]]
    questions = [q["q"] for item in items for q in item["queries"]]
    # Distinct texts, as a real tenant's are: a suffix defeats nothing but keeps batches honest.
    corpus = [f"{text} {n}" for n, text in zip(range(args.facts), itertools.cycle(texts))]

    embedder = embedder_for(args.embedder)
    before = rss_mb()
    started = time.perf_counter()
    embedder.embed_documents(["load"])
    load_s = time.perf_counter() - started
    loaded = rss_mb()

    started = time.perf_counter()
    for start in range(0, len(corpus), EMBED_BATCH):
        embedder.embed_documents(corpus[start : start + EMBED_BATCH])
    elapsed = time.perf_counter() - started
    peak = rss_mb()

    timings = []
    for question in questions[:100]:
        started = time.perf_counter()
        embedder.embed_documents([question])  # uncached, as a question seen for the first time
        timings.append((time.perf_counter() - started) * 1000)

    print(f"embedder {embedder.key}; {os.cpu_count()} CPUs")
    print(f"model memory per process: +{loaded - before:.0f} MB RSS after loading "
          f"(+{peak - before:.0f} MB after {len(corpus):,} facts), loaded in {load_s:.1f} s")
    print(f"background embedding, one worker process: {len(corpus) / elapsed:,.0f} facts/s "
          f"(batches of {EMBED_BATCH}, {elapsed:.1f} s for {len(corpus):,} facts)")
    print(f"query embedding, uncached: p50 {statistics.median(timings):.1f} ms, "
          f"p90 {statistics.quantiles(timings, n=10)[-1]:.1f} ms over {len(timings)} questions")


if __name__ == "__main__":
    main()
