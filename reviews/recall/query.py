"""The recall query: SPEC §5's policy over one subject's facts."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, NamedTuple

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from ..models import (
    Category,
    DeletionStatus,
    Entity,
    EntityAlias,
    Fact,
    FactEmbedding,
    FactDeletion,
    FactStatus,
    MemoryScope,
    Sensitivity,
    Subject,
    Tenant,
)
from ..embeddings.embedders import configured_embedder
from ..screening import Identifier, Screen, Text
from ..policy.normalize import normalize_text, slugify_entity_id
from ..selectors.rows import utc_aware
from .relevance import rank_by_relevance
from .textmatch import QueryTerms, fallback_score, query_terms

# --- Recall ---------------------------------------------------------------------------------
#
# SPEC §5's policy over one subject's facts, in one query. The subject's active facts (and,
# when explaining, expired ones) are few and come from one index range, so every rule is
# applied in Python over that one result: the number of queries never depends on the data,
# and `q` only ranks and widens within what the filters allow.

RECALL_DEFAULT_LIMIT = 50
RECALL_MAX_LIMIT = 200
RECALL_MAX_ENTITIES = 20
RECALL_MAX_FIELDS = 50
RECALL_USER_ENTITY_TYPE = "user"


class Exclusion:
    """Why ``explain=true`` says a fact was left out (SPEC §5), checked in this order."""

    EXPIRED = "expired"
    SENSITIVE = "sensitive"
    OTHER_THREAD = "other_thread"
    NOT_REQUESTED = "not_requested"
    # Beyond SPEC §5's four: allowed, but past the request's ``limit``.
    LIMIT = "limit"


@dataclass(frozen=True)
class RecallQuery:
    user_id: Identifier
    entities: Annotated[tuple[tuple[str, str], ...], Screen.TEXT] = ()
    fields: Annotated[tuple[str, ...], Screen.TEXT] = ()
    q: Text = ""
    # With `q`: only the facts whose relevance passes the threshold, near-duplicates
    # folded (SPEC §5); nothing when nothing bears on the question.
    relevant: bool = False
    thread_id: Identifier = ""
    include_sensitive: bool = False
    explain: bool = False
    limit: int = RECALL_DEFAULT_LIMIT
    # The compatibility surfaces (SPEC §7a) read by id and list a subject's whole memory:
    # ``fact_ids`` asks for those facts only, ``every_entity`` treats every entity as
    # named. Neither bypasses a filter: sensitivity, thread and expiry still apply.
    fact_ids: tuple[int, ...] = ()
    every_entity: bool = False
    # The surface the agent came through when it is not the recall API (``mcp``, ``mem0``):
    # kept in the record beside the caller (the key), so auditors see which door it used.
    channel: Text = ""

    def as_record(self) -> dict:
        """What the recall record keeps of the request."""
        extra = {}
        if self.fact_ids:
            extra["fact_ids"] = list(self.fact_ids)
        if self.every_entity:
            extra["every_entity"] = True
        if self.channel:
            extra["channel"] = self.channel
        if self.relevant:
            extra["relevant"] = True
        return {
            **extra,
            "entity": [f"{t}:{i}" for t, i in self.entities],
            "field": list(self.fields),
            "q": self.q,
            "thread_id": self.thread_id,
            "include_sensitive": self.include_sensitive,
            "explain": self.explain,
            "limit": self.limit,
        }


@dataclass
class RecallResult:
    facts: list[dict]
    excluded: list[dict] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)  # each fact's relevance to `q`, in order


# Order without `q`: the user first, then categories as SPEC §1 lists them.
_RECALL_CATEGORY_ORDER = {c: i for i, c in enumerate(Category.values)}


class _RecallRow(NamedTuple):
    """One row of the recall statement. A named tuple rather than a frozen dataclass: a
    recall makes one per fact of the subject, and the dataclass's field-by-field
    ``object.__setattr__`` cost 5 µs a row (50-60 µs of a recall's CPU)."""

    id: int
    entity_type: str
    entity_id: str
    display_name: str
    field: str
    value: str
    confidence: float
    category: str
    sensitivity: str
    scope: str
    thread_id: str
    source: str
    source_message_id: str
    version: int
    updated_at: datetime
    expires_at: datetime | None
    status: str
    named: bool
    rank: float
    # The fact's stored embedding under the current embedder (None without `q` or without
    # one): read in the same statement, so `q` costs no second round trip.
    embedding_digest: str | None
    embedding: bytes | None
    embedding_dimensions: int | None


def _recall_sql(*, tenant_id: int, query: RecallQuery, terms: QueryTerms, embedder_key: str) -> tuple[str, list]:
    """The one statement of a recall, written out: this is the hot path, and building it
    with the ORM cost more CPU than running it.

    The named-entity test and, on PostgreSQL, ts_rank over the value, field and entity
    ('simple' configuration, any of the query's words) are computed per row in the same
    statement; everything else is decided in Python over the subject's few rows.
    """
    fact, subject, entity, alias, deletion = (
        Fact._meta.db_table,
        Subject._meta.db_table,
        Entity._meta.db_table,
        EntityAlias._meta.db_table,
        FactDeletion._meta.db_table,
    )
    params: list = []
    named = []
    for entity_type, entity_id in query.entities:
        ids = sorted({entity_id, slugify_entity_id(entity_id)})
        named.append(
            "(e.entity_type = %s AND (e.entity_id IN (" + ", ".join(["%s"] * len(ids)) + ") OR EXISTS "
            f"(SELECT 1 FROM {alias} a WHERE a.entity_id = e.id AND a.normalized = %s)))"
        )
        params += [entity_type, *ids, normalize_text(entity_id)]
    named_sql = "(" + " OR ".join(named) + ")" if named else "FALSE"
    if connection.vendor == "postgresql" and terms.words:
        tsquery = " || ".join(["plainto_tsquery('simple', %s)"] * len(terms.words))
        rank_sql = (
            "ts_rank(to_tsvector('simple', f.value || ' ' || f.field || ' ' || e.entity_id || ' ' || e.display_name), "
            f"{tsquery})"
        )
        params += list(terms.words)
    else:
        # Typed as ts_rank's result, so every row arrives as the named tuple wants it (a
        # bare 0.0 is numeric, which psycopg hands over as a Decimal).
        rank_sql = "CAST(0 AS REAL)"
    if embedder_key:
        embedding_sql = "fe.text_digest, fe.vector, fe.dimensions"
        embedding_join = f" LEFT JOIN {FactEmbedding._meta.db_table} fe ON fe.fact_id = f.id AND fe.embedder = %s"
        params.append(embedder_key)
    else:
        embedding_sql, embedding_join = "NULL, NULL, NULL", ""
    statuses = [FactStatus.ACTIVE, FactStatus.EXPIRED] if query.explain else [FactStatus.ACTIVE]
    sql = (
        "SELECT f.id, e.entity_type, e.entity_id, e.display_name, f.field, f.value, f.confidence, f.category, "
        "f.sensitivity, f.scope, f.thread_id, f.source, f.source_message_id, f.version, f.updated_at, f.expires_at, "
        f"f.status, {named_sql}, {rank_sql}, {embedding_sql} "
        f"FROM {fact} f JOIN {entity} e ON e.id = f.entity_id{embedding_join} "
        f"WHERE f.tenant_id = %s AND f.subject_id = (SELECT id FROM {subject} WHERE tenant_id = %s AND user_id = %s) "
        "AND f.status IN ("
        + ", ".join(["%s"] * len(statuses))
        + ") "
        # A fact the subject deleted leaves recall at once, not when its undo window
        # closes (the partial unique index on scheduled deletions answers this).
        f"AND NOT EXISTS (SELECT 1 FROM {deletion} d WHERE d.fact_id = f.id AND d.status = %s)"
    )
    return sql, [*params, tenant_id, tenant_id, query.user_id, *statuses, DeletionStatus.SCHEDULED]


def _recall_rows(*, tenant: Tenant, query: RecallQuery, terms: QueryTerms, using: str) -> list[_RecallRow]:
    embedder = configured_embedder()
    embedder_key = embedder.key if query.q.strip() and embedder.enabled else ""
    sql, params = _recall_sql(tenant_id=tenant.pk, query=query, terms=terms, embedder_key=embedder_key)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if connection.vendor == "postgresql":  # every column already of its field's type
        return [_RecallRow._make(row) for row in rows]
    # SQLite hands over naive datetimes, and integers for booleans.
    return [_RecallRow(*row[:14], utc_aware(row[14]), utc_aware(row[15]), row[16], bool(row[17]), float(row[18]),
                       row[19], row[20], row[21]) for row in rows]


def recall_select(
    *,
    tenant: Tenant,
    query: RecallQuery,
    may_see_sensitive: bool,
    now: datetime | None = None,
    using: str = DEFAULT_DB_ALIAS,
) -> RecallResult:
    """The facts a caller may receive for ``query``, best first, and what was left out.

    Default: the subject's `user` entity and `preference`-category facts; other entities
    only when named or matched by `q`; thread-scoped facts only in their thread; sensitive
    ones only when allowed and asked for; never an expired one. On PostgreSQL `q` is
    ranked with ts_rank in the same query, plus the CJK-aware fallback of textmatch.
    ``using``: the database read (a replica's alias, see reviews/recall/replicas.py).
    """
    now = now or timezone.now()
    terms = query_terms(query.q)
    sensitive_allowed = query.include_sensitive and may_see_sensitive
    fields = set(query.fields)
    chosen, excluded = [], []
    for row in _recall_rows(tenant=tenant, query=query, terms=terms, using=using):
        relevance = 0.0
        if terms:
            haystack = " ".join((row.value, row.field, row.entity_id, row.display_name))
            relevance = row.rank + fallback_score(haystack, terms)
        if row.status == FactStatus.EXPIRED or (row.expires_at is not None and row.expires_at <= now):
            reason = Exclusion.EXPIRED
        elif row.sensitivity == Sensitivity.SENSITIVE and not sensitive_allowed:
            reason = Exclusion.SENSITIVE
        elif row.scope == MemoryScope.THREAD and row.thread_id != query.thread_id:
            reason = Exclusion.OTHER_THREAD
        elif fields and row.field not in fields:
            reason = Exclusion.NOT_REQUESTED
        elif query.fact_ids and row.id not in query.fact_ids:
            reason = Exclusion.NOT_REQUESTED
        else:
            reason = None
        in_default_set = (
            row.entity_type == RECALL_USER_ENTITY_TYPE
            or row.category == Category.PREFERENCE
            or row.named
            or query.every_entity
            or bool(query.fact_ids)
        )
        if reason is None and not query.q.strip() and not in_default_set:
            reason = Exclusion.NOT_REQUESTED
        if reason is None:
            chosen.append((relevance, row, in_default_set))
        elif query.explain:
            excluded.append({"id": row.id, "reason": reason})

    if query.q.strip():
        return _ranked_by_relevance(query=query, chosen=chosen, excluded=excluded, using=using)

    chosen.sort(key=_recall_order)
    if query.explain:
        excluded.extend({"id": row.id, "reason": Exclusion.LIMIT} for _, row, _ in chosen[query.limit :])
        excluded.sort(key=lambda item: item["id"])
    chosen = chosen[: query.limit]
    return RecallResult(
        facts=[_recalled_fact(row) for _, row, _ in chosen],
        excluded=excluded,
        scores=[relevance for relevance, _, _ in chosen],
    )


def _recall_order(item) -> tuple:
    """Recall's order without `q`: the user first, categories as SPEC §1 lists them, newest."""
    row = item[1]
    return (
        row.entity_type != RECALL_USER_ENTITY_TYPE,
        _RECALL_CATEGORY_ORDER.get(row.category, len(_RECALL_CATEGORY_ORDER)),
        row.entity_type,
        row.entity_id,
        row.field,
        -row.updated_at.timestamp(),
        row.id,
    )


def _ranked_by_relevance(*, query: RecallQuery, chosen: list, excluded: list, using: str) -> RecallResult:
    """`q`'s ranking by meaning and words (reviews/recall/relevance.py): facts outside the
    default set join only when their relevance passes the threshold; `limit` cuts after."""
    chosen.sort(key=_recall_order)  # ties in relevance keep recall's usual order
    candidates = [
        {"id": row.id, "entity_type": row.entity_type, "field": row.field, "value": row.value,
         "entity_name": row.display_name, "lexical": lexical, "default": in_default_set,
         "embedding_digest": row.embedding_digest, "embedding": row.embedding,
         "embedding_dimensions": row.embedding_dimensions}
        for lexical, row, in_default_set in chosen
    ]
    ranked = rank_by_relevance(
        q=query.q, candidates=candidates, relevant=query.relevant, limit=len(candidates)
    )
    kept = {scored.index for scored in ranked[: query.limit]}
    if query.explain:
        beyond = {scored.index for scored in ranked[query.limit :]}
        for index, (_, row, _) in enumerate(chosen):
            if index not in kept:
                reason = Exclusion.LIMIT if index in beyond else Exclusion.NOT_REQUESTED
                excluded.append({"id": row.id, "reason": reason})
        excluded.sort(key=lambda item: item["id"])
    top = ranked[: query.limit]
    return RecallResult(
        facts=[_recalled_fact(chosen[scored.index][1]) for scored in top],
        excluded=excluded,
        scores=[round(scored.score, 6) for scored in top],
    )


def _recalled_fact(row: _RecallRow) -> dict:
    return {
        "id": row.id,
        "entity_type": row.entity_type,
        "entity_id": row.entity_id,
        "field": row.field,
        "value": row.value,
        "confidence": row.confidence,
        "category": row.category,
        "sensitivity": row.sensitivity,
        "scope": row.scope,
        "source": row.source,
        "source_message_id": row.source_message_id,
        "version": row.version,
        "updated_at": row.updated_at.isoformat(),
    }

