"""A published fact's embedding (SPEC §5 "Relevance by meaning")."""
from __future__ import annotations

import numpy as np
from django.db import models

from .memory import Fact
from .tenancy import Subject, Tenant


class FactEmbedding(models.Model):
    """The vector of one fact's text (field label, value, entity name) under one embedder.

    The vector is stored as raw little-endian float16 bytes: 1 KB for 512 dimensions
    against about 10 KB as JSON, and read back with one ``np.frombuffer`` instead of a
    JSON parse per fact on every recall with ``q``. Half precision loses nothing recall
    can see (the recall set's figures are the same to the third decimal, docs/embedders.md);
    rows written as float32 before are still read (by their length), until re-embedded. ``embedder`` (name:version) makes a
    change of embedder visible: recall uses a vector only when it was made by the
    current embedder from the fact's current text (``text_digest``), and ranks the fact
    lexically until ``manage.py embed`` or the background task has caught up.

    Personal data like the fact itself: it goes with the fact (cascade), is deleted
    when the fact stops being published, and erasure counts it in its receipt.
    """

    fact = models.OneToOneField(Fact, on_delete=models.CASCADE, primary_key=True, related_name="embedding")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    embedder = models.CharField(max_length=160)
    text_digest = models.CharField(max_length=32)
    dimensions = models.PositiveSmallIntegerField()
    vector = models.BinaryField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["subject", "embedder"], name="fact_embedding_subject")]

    def as_array(self) -> np.ndarray:
        return vector_from_bytes(self.vector, self.dimensions)


STORED = np.dtype("<f2")
_EARLIER = np.dtype("<f4")  # what rows written before half precision hold


def vector_to_bytes(vector) -> bytes:
    return np.asarray(vector, dtype=STORED).tobytes()


def vector_from_bytes(data, dimensions: int) -> np.ndarray:
    """A stored vector as float32 (what the matrix products take), whichever width it was
    stored in."""
    data = bytes(data)
    dtype = STORED if len(data) == dimensions * STORED.itemsize else _EARLIER
    return np.frombuffer(data, dtype=dtype).astype(np.float32)
