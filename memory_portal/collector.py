"""Python's cyclic garbage collector, set up for a long-running server process.

Called in gunicorn's master once the app is loaded, before each worker is forked
(gunicorn.conf.py), and by the benchmarks that stand in for such a process
(``bench/review_queue.py --gc-freeze``, ``bench/recall_instructions.py``), so both run the
same collector:

* ``gc.freeze()``: everything loaded at start-up (Django, the app, its URL resolvers and
  cached templates) moves to a permanent generation that the collector never walks again;
  forked workers keep sharing those pages, since the collector no longer writes to them.
* A young generation of 2,000 objects instead of Python's 700, and a full collection after
  100 collections of the middle generation instead of 10: one per 2,000,000 tracked
  objects allocated (net of those freed), as with the young generation of 20,000 this
  module set before. The two settings pull apart:

  - The queue page leaves about a thousand objects in reference cycles (model instances
    and their state, DRF's fields, the request). With Python's thresholds many were caught
    still alive mid-request, promoted, and died in the old generation, so full collections
    came every few requests, 15-70 ms each: the tail of the queue's latency. Rarer full
    collections fix that; a larger young generation alone fixed it too.
  - But a young collection's pause grows with the generation: at 20,000 objects (this
    module's setting before) each one stopped a recall or a bare page for 5-6 ms, one
    request in about 550. On two cores behind 16 connections those stops were the tail:
    the floor's worst-slice p99 (``bench/recall.py``) ran 1.3-1.7x the same code's with
    Python's thresholds in the same runs. At 2,000 a recall's young collection takes about 0.5 ms.

  Measured in one process (``gc.callbacks``), the collector's total time stays the same
  (9-11 µs per recall or floor request at 700, 2,000 or 20,000); only the size of each
  pause changes. The queue's three sorts (``bench/review_queue.py --gc-freeze``, 60
  iterations on 1,000,000 candidates): no full collection, young pauses of 0.5 ms and
  middle ones of 4.9 ms (median; 13.7 at most) with these thresholds; young pauses of
  9.5 ms (20 at most) and middle ones of 27 ms with a young generation of 20,000. With
  Python's thresholds, 40 iterations on 100,000 candidates made 17 full collections of
  17-34 ms; a full collection after 50 middle ones instead of 100 made one of 98 ms in
  the 60 iterations on 1,000,000.
"""
import gc

YOUNG_GENERATION_THRESHOLD = 2_000
# Collections of the middle generation between two full ones (Python's default: 10).
OLD_GENERATION_THRESHOLD = 100


def prepare_for_serving() -> None:
    """Freeze what is loaded and set the generations' thresholds (see the module's text)."""
    gc.collect()
    gc.freeze()
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, OLD_GENERATION_THRESHOLD)
