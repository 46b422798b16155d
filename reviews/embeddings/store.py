"""The LangGraph Store's own index (SPEC §5 "The Store searches too").

Where the store supports an index (SqliteStore with sqlite-vec), the projection is
written with one that embeds through the configured embedder, so an agent's
``store.search(("tenants", tenant, "users", user_id), query=...)`` ranks the subject's
projected entities by meaning, in either language, with the same model as recall.

The store embeds each item's value. A projected value is JSON
(``{"facts": {field: {"value", "confidence", ...}}}``); :class:`StoreEmbeddings` reads it
back as the sentences recall embeds ("Database: MySQL 8"), so confidences, message ids
and timestamps do not blur the vector. An agent process opens its SqliteStore with
:func:`store_index` to search the same way.
"""
from __future__ import annotations

import json
import sqlite3

from langchain_core.embeddings import Embeddings

try:
    # The same DB-API module with SQLite built to load extensions: Python builds without
    # `enable_load_extension` (pyenv's default, some distributions') cannot load sqlite-vec.
    from pysqlite3 import dbapi2 as loadable_sqlite3
except ImportError:  # not installed: the stdlib module, if it can load extensions
    loadable_sqlite3 = None

from .embedders import Embedder, configured_embedder
from .text import fact_text

DIMENSIONS_PROBE = "dimensions"


def projected_text(text: str) -> str:
    """A projected value's JSON as sentences; any other text unchanged."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return text
    facts = value.get("facts") if isinstance(value, dict) else None
    if not isinstance(facts, dict):
        return text
    sentences = []
    for field, entries in facts.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, dict) and entry.get("value"):
                sentences.append(fact_text(entity_type="", field=field, value=str(entry["value"])))
    return "; ".join(sentences) or text


class StoreEmbeddings(Embeddings):
    """The configured embedder as LangChain's ``Embeddings``, which the store calls."""

    def __init__(self, embedder: Embedder | None = None):
        self.embedder = embedder or configured_embedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_documents([projected_text(text) for text in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text).tolist()


def sqlite_module():
    """The sqlite3 module whose connections can load sqlite-vec, or None."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    return loadable_sqlite3


def sqlite_connect(location: str):
    """A connection for a SqliteStore: one that can load sqlite-vec where possible."""
    module = sqlite_module() or sqlite3
    return module.connect(location, check_same_thread=False, isolation_level=None)


def store_index(embedder: Embedder | None = None) -> dict | None:
    """The index configuration for a SqliteStore; None with the ``none`` embedder or where
    no sqlite3 module can load sqlite-vec (the store then works without an index)."""
    embedder = embedder or configured_embedder()
    if not embedder.enabled or sqlite_module() is None:
        return None
    return {
        "dims": len(embedder.embed_query(DIMENSIONS_PROBE)),
        "embed": StoreEmbeddings(embedder),
        "fields": ["$"],
    }
