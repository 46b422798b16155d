"""Python's cyclic garbage collector, set up for a long-running server process.

Called in gunicorn's master once the app is loaded, before each worker is forked
(gunicorn.conf.py), and by the benchmarks that stand in for such a process
(``bench/review_queue.py --gc-freeze``), so both run the same collector:

* ``gc.freeze()``: everything loaded at start-up (Django, the app, its URL resolvers and
  cached templates) moves to a permanent generation that the collector never walks again;
  forked workers keep sharing those pages, since the collector no longer writes to them.
* A young generation of 20,000 objects instead of Python's 700. One queue page leaves about
  a thousand objects in reference cycles (model instances and their state, DRF's fields,
  the request). Collected every 700 allocations, many were caught still alive mid-request,
  promoted, and died in the old generation, so full collections came every few requests,
  15-70 ms each: the tail of the queue's latency. In one run of the queue's sorting cases,
  58 full collections with Python's default, 4 with this (bench/review_queue.py; the
  README's "The reviewer dashboard", its benchmark).
"""
import gc

YOUNG_GENERATION_THRESHOLD = 20_000


def prepare_for_serving() -> None:
    """Freeze what is loaded and collect young objects less often (see the module's text)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)
