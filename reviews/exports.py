"""The audit export format (SPEC §6): rows, CSV / JSON Lines encoding, the manifest, and
the verification of an exported file.

Every exported row carries what its hash covers (tenant id, seq, time, actor, action,
object, subject, digests, reason code, request id) plus ``prev_hash`` and ``hash``, so a
recipient recomputes each row's hash from the file alone; where the export is a
contiguous stretch of the chain (no filter but time) the links between rows are walked too.
The readable values (``before``, ``after``, ``reason``) ride along while they exist; an
erased event exports its digests with ``erased: true`` and no values.

An export ends with a manifest record: row count, sequence and time range, filters, the
chain head when the export started and the SHA-256 of every byte before the manifest.
JSON Lines: a last line ``{"manifest": {...}}``; CSV: a last record ``#manifest,<json>``.

Reads are keyset queries of ``CHUNK`` events, so memory stays flat however long the chain.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import IO, Iterable, Iterator

from django.db.models import Max, Min, Q, QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from .audit import GENESIS_HASH, event_hash
from .models import AuditChainHead, AuditEvent, ExportFormat, Tenant
from .policy.normalize import digest_matches
from .screening import Identifier, Text

CHUNK = 2000
MANIFEST_KIND = "memory-portal.audit-export"
CSV_MANIFEST_MARK = "#manifest"
# What the chain hash covers, in the order of audit.event_hash, then the values and links.
HASHED_COLUMNS = [
    "tenant_id",
    "seq",
    "created_at",
    "actor",
    "action",
    "object_type",
    "object_id",
    "subject_user_id",
    "before_digest",
    "after_digest",
    "reason_digest",
    "reason_code",
    "request_id",
]
COLUMNS = [*HASHED_COLUMNS, "before", "after", "reason", "erased", "prev_hash", "hash"]
# What one keyset page selects: the event's columns, then its payload's (a LEFT JOIN).
_SELECT = [
    *HASHED_COLUMNS,
    "prev_hash",
    "hash",
    "payload__event_id",
    "payload__before",
    "payload__after",
    "payload__reason",
]
_CREATED_AT = HASHED_COLUMNS.index("created_at")
_SEQ = HASHED_COLUMNS.index("seq")
_DIGESTS = slice(HASHED_COLUMNS.index("before_digest"), HASHED_COLUMNS.index("reason_digest") + 1)


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


# --- Filters -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportFilters:
    """What to export. ``since`` is inclusive, ``until`` exclusive; ``action`` and ``actor``
    match exactly or, ending in ``*``, as a prefix (``fact.*``, ``reviewer:*``); ``object``
    is ``type`` or ``type:id``."""

    since: datetime | None = None
    until: datetime | None = None
    action: Text = ""
    actor: Text = ""
    user_id: Identifier = ""
    object: Text = ""

    @property
    def selects_rows(self) -> bool:
        """Filters that pick rows out of the chain (time only narrows a stretch of it)."""
        return bool(self.action or self.actor or self.user_id or self.object)

    def as_dict(self) -> dict:
        data = asdict(self)
        for key in ("since", "until"):
            data[key] = data[key].isoformat() if data[key] else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "ExportFilters":
        values = {key: data.get(key) or "" for key in ("action", "actor", "user_id", "object")}
        for key in ("since", "until"):
            raw = data.get(key)
            values[key] = datetime.fromisoformat(raw) if isinstance(raw, str) and raw else raw or None
        return cls(**values)

    def row_condition(self) -> Q:
        condition = Q()
        for column, wanted in (("action", self.action), ("actor", self.actor)):
            if wanted.endswith("*"):
                condition &= Q(**{f"{column}__startswith": wanted[:-1]})
            elif wanted:
                condition &= Q(**{column: wanted})
        if self.user_id:
            condition &= Q(subject_user_id=self.user_id)
        if self.object:
            object_type, _colon, object_id = self.object.partition(":")
            condition &= Q(object_type=object_type)
            if object_id:
                condition &= Q(object_id=object_id)
        return condition


# --- Reading -------------------------------------------------------------------------------


@dataclass
class ChainSnapshot:
    """Which stretch of the chain an export covers, fixed when it starts."""

    head_seq: int
    head_hash: str
    seq_from: int
    seq_to: int

    @property
    def empty(self) -> bool:
        return self.seq_from > self.seq_to


def chain_snapshot(tenant_id: int, filters: ExportFilters) -> ChainSnapshot:
    """Fix the head, then turn the time range into a sequence range.

    Events up to the head are committed (the head moves in the same transaction), so the
    export is a consistent prefix even while new events arrive. A sequence range (rather
    than a time filter per row) keeps a time-bounded export a contiguous, walkable chain.
    """
    head = AuditChainHead.objects.filter(tenant_id=tenant_id).first()
    head_seq, head_hash = (head.seq, head.hash) if head else (0, GENESIS_HASH)
    seq_from, seq_to = 1, head_seq
    events = AuditEvent.objects.filter(tenant_id=tenant_id, seq__lte=head_seq)
    if filters.since:
        seq_from = events.filter(created_at__gte=filters.since).aggregate(first=Min("seq"))["first"] or head_seq + 1
    if filters.until:
        seq_to = events.filter(created_at__lt=filters.until).aggregate(last=Max("seq"))["last"] or 0
    return ChainSnapshot(head_seq, head_hash, seq_from, seq_to)


def export_queryset(tenant_id: int, filters: ExportFilters, snapshot: ChainSnapshot) -> QuerySet:
    return AuditEvent.objects.filter(
        filters.row_condition(), tenant_id=tenant_id, seq__gte=snapshot.seq_from, seq__lte=snapshot.seq_to
    )


def iter_row_batches(events: QuerySet, chunk: int = CHUNK) -> Iterator[list[dict]]:
    """Keyset pages of one tenant's events (with their values) in sequence order."""
    last_seq = 0
    while True:
        batch = list(events.filter(seq__gt=last_seq).order_by("seq").values_list(*_SELECT)[:chunk])
        if not batch:
            return
        yield [export_row(item) for item in batch]
        last_seq = batch[-1][_SEQ]


def export_row(item: tuple) -> dict:
    """An event (a ``_SELECT`` tuple: its columns, then its payload's) as an exported row.

    Tuples rather than ``values()`` dicts: this runs a million times in a large export.
    """
    row = dict(zip(HASHED_COLUMNS, item))
    row["created_at"] = item[_CREATED_AT].isoformat()
    prev_hash, hash_, payload_id, before, after, reason = item[len(HASHED_COLUMNS) :]
    if payload_id is None:
        row["before"], row["after"], row["reason"] = None, None, ""
        row["erased"] = any(item[_DIGESTS])
    else:
        row["before"], row["after"], row["reason"], row["erased"] = before, after, reason, False
    row["prev_hash"] = prev_hash
    row["hash"] = hash_
    return row


def event_rows(events: QuerySet) -> list[dict]:
    """Events (a sliced, ordered queryset) as exported rows: the API's page of the log."""
    return [export_row(item) for item in events.values_list(*_SELECT)]


# --- Encoding ------------------------------------------------------------------------------

# Spreadsheets run a cell that starts with one of these as a formula; "'" marks an escaped
# cell, so it is escaped too and un-escaping is exact.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _csv_uncell(text: str) -> str:
    return text[1:] if text.startswith("'") else text


class JsonLinesCodec:
    content_type = "application/x-ndjson; charset=utf-8"
    extension = "jsonl"

    def header(self) -> bytes:
        return b""

    def rows(self, rows: Iterable[dict]) -> bytes:
        return "".join(_dumps(row) + "\n" for row in rows).encode()

    def trailer(self, manifest: dict) -> bytes:
        return (_dumps({"manifest": manifest}) + "\n").encode()


class CsvCodec:
    content_type = "text/csv; charset=utf-8"
    extension = "csv"

    def _encode(self, records: Iterable[list]) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows(records)
        return buffer.getvalue().encode()

    def header(self) -> bytes:
        return self._encode([COLUMNS])

    def rows(self, rows: Iterable[dict]) -> bytes:
        return self._encode(
            [
                _csv_cell(_dumps(row[c]) if c in ("before", "after") and row[c] is not None else row[c])
                for c in COLUMNS
            ]
            for row in rows
        )

    def trailer(self, manifest: dict) -> bytes:
        return self._encode([[CSV_MANIFEST_MARK, _dumps(manifest)]])


CODECS = {ExportFormat.JSONL: JsonLinesCodec(), ExportFormat.CSV: CsvCodec()}


# --- Writing -------------------------------------------------------------------------------


@dataclass
class AuditExporter:
    """One export: encodes the rows in chunks, tracking what the manifest states.

    ``events`` defaults to the tenant's events selected by ``filters``; the admin action
    passes its own selection (still one tenant's).
    """

    tenant: Tenant
    filters: ExportFilters
    format: str = ExportFormat.JSONL
    events: QuerySet | None = None
    chunk: int = field(default_factory=lambda: CHUNK)
    rows: int = 0
    first: dict | None = None
    last: dict | None = None
    _digest: "hashlib._Hash" = field(default_factory=hashlib.sha256, repr=False)
    _finished: bool = False
    _final: dict | None = None

    def __post_init__(self):
        self.codec = CODECS[ExportFormat(self.format)]
        self.snapshot = chain_snapshot(self.tenant.pk, self.filters)
        selection = export_queryset(self.tenant.pk, self.filters, self.snapshot)
        self.events = selection if self.events is None else self.events & selection
        self.contiguous = self.events is selection and not self.filters.selects_rows

    @property
    def content_type(self) -> str:
        return self.codec.content_type

    def file_name(self, stem: str = "") -> str:
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        return f"audit-{self.tenant.slug}-{stem or stamp}.{self.codec.extension}"

    def count(self) -> int:
        return 0 if self.snapshot.empty else self.events.count()

    def _emit(self, data: bytes) -> bytes:
        self._digest.update(data)
        return data

    def data_chunks(self) -> Iterator[bytes]:
        """The header and the rows, one chunk per keyset page."""
        yield self._emit(self.codec.header())
        if not self.snapshot.empty:
            for batch in iter_row_batches(self.events, self.chunk):
                self.first = self.first or batch[0]
                self.last = batch[-1]
                self.rows += len(batch)
                yield self._emit(self.codec.rows(batch))
        self._finished = True

    def manifest(self) -> dict:
        """What the export holds; fixed (and the same on every call) once the rows are written."""
        if self._final is not None:
            return self._final
        snapshot = self.snapshot
        manifest = {
            "kind": MANIFEST_KIND,
            "version": 1,
            "tenant": self.tenant.slug,
            "tenant_id": self.tenant.pk,
            "format": str(self.format),
            "generated_at": timezone.now().isoformat(),
            "filters": self.filters.as_dict(),
            "rows": self.rows,
            "first_seq": self.first["seq"] if self.first else None,
            "last_seq": self.last["seq"] if self.last else None,
            "first_event_at": self.first["created_at"] if self.first else None,
            "last_event_at": self.last["created_at"] if self.last else None,
            "chain_head": {"seq": snapshot.head_seq, "hash": snapshot.head_hash},
            # Rows are one unbroken stretch of the chain: the links can be walked.
            "contiguous": self.contiguous,
            "from_genesis": self.contiguous and snapshot.seq_from <= 1,
            "sha256": self._digest.hexdigest(),
        }
        if self._finished:
            self._final = manifest
        return manifest

    def stream(self) -> Iterator[bytes]:
        yield from self.data_chunks()
        yield self.codec.trailer(self.manifest())

    def response(self) -> StreamingHttpResponse:
        """The export as a download, read from the database while it is sent."""
        response = StreamingHttpResponse(self.stream(), content_type=self.content_type)
        response["Content-Disposition"] = f'attachment; filename="{self.file_name()}"'
        return response


# --- Verifying a file ----------------------------------------------------------------------


@dataclass(frozen=True)
class RowProblem:
    line: int
    seq: int | None
    problem: str

    def __str__(self) -> str:
        if not self.line:
            return _("file: %(problem)s") % {"problem": self.problem}
        if self.seq is None:
            return _("line %(line)s: %(problem)s") % {"line": self.line, "problem": self.problem}
        return _("line %(line)s (event #%(seq)s): %(problem)s") % {
            "line": self.line,
            "seq": self.seq,
            "problem": self.problem,
        }


@dataclass
class FileVerifyResult:
    rows: int = 0
    manifest: dict | None = None
    problems: list[RowProblem] = field(default_factory=list)
    last_hash: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_problem(self) -> RowProblem | None:
        return self.problems[0] if self.problems else None


def event_from_row(row: dict) -> AuditEvent:
    values = {column: row[column] for column in HASHED_COLUMNS}
    values["created_at"] = datetime.fromisoformat(row["created_at"])
    return AuditEvent(**values)


_HEADER: dict = {}


def _decode_jsonl(stream: IO[bytes]) -> Iterator[tuple[int, bytes, dict | None, dict | None]]:
    """(line number, raw bytes, row, manifest) per line; a line that is not JSON gives neither."""
    for number, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            yield number, raw, None, None
            continue
        if isinstance(record, dict) and set(record) == {"manifest"}:
            yield number, b"", None, record["manifest"]
        else:
            yield number, raw, record if isinstance(record, dict) else None, None


def _decode_csv(stream: IO[bytes]) -> Iterator[tuple[int, bytes, dict | None, dict | None]]:
    """As _decode_jsonl; bytes that are not UTF-8, or a cell past the csv module's limit,
    end the file there as one invalid row (what follows cannot be read as CSV)."""
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    reader = csv.reader(text)
    try:
        yield from _csv_rows(reader)
    except (UnicodeDecodeError, csv.Error):
        yield reader.line_num + 1, b"", None, None


def _csv_rows(reader) -> Iterator[tuple[int, bytes, dict | None, dict | None]]:
    codec = CsvCodec()
    header = next(reader, None)
    if header != COLUMNS:
        yield 1, b"", None, None
        return
    yield 1, codec.header(), _HEADER, None  # counts toward the digest, not as a row
    for record in reader:
        line = reader.line_num
        if record and record[0] == CSV_MANIFEST_MARK:
            try:
                yield line, b"", None, json.loads(record[1])
            except (IndexError, ValueError):
                yield line, b"", None, None
            continue
        raw = codec._encode([record])
        if len(record) != len(COLUMNS):
            yield line, raw, None, None
            continue
        cells = dict(zip(COLUMNS, (_csv_uncell(cell) for cell in record)))
        try:
            row = {
                **cells,
                "tenant_id": int(cells["tenant_id"]),
                "seq": int(cells["seq"]),
                "before": json.loads(cells["before"]) if cells["before"] else None,
                "after": json.loads(cells["after"]) if cells["after"] else None,
                "erased": cells["erased"] == "true",
            }
        except ValueError:
            row = None
        yield line, raw, row, None


def _row_problem(row: dict, *, check_values: bool) -> str | None:
    try:
        event = event_from_row(row)
        expected = event_hash(prev_hash=row["prev_hash"], event=event)
    except (KeyError, TypeError, ValueError):
        return _("row is missing columns or has malformed ones")
    if expected != row["hash"]:
        return _("content does not match its hash")
    if check_values and not row.get("erased"):
        if (
            not digest_matches(row.get("before"), row["before_digest"])
            or not digest_matches(row.get("after"), row["after_digest"])
            or not digest_matches(row.get("reason") or "", row["reason_digest"])
        ):
            return _("values do not match their digests")
    return None


def _link_problem(previous: dict, row: dict) -> str | None:
    seq = previous.get("seq", 0)
    if not isinstance(seq, int) or isinstance(seq, bool):  # a malformed row, already named
        return _("sequence gap: expected event #%(seq)s") % {"seq": "?"}
    if row.get("seq") != seq + 1:
        return _("sequence gap: expected event #%(seq)s") % {"seq": seq + 1}
    if row.get("prev_hash") != previous.get("hash"):
        return _("previous-hash link does not match the row before it")
    return None


def verify_export_file(
    stream: IO[bytes], *, manifest: dict | None = None, check_values: bool = True, max_problems: int = 20
) -> FileVerifyResult:
    """Verify an exported file from its own content, naming each broken row.

    1. Each row: its hash recomputed from its columns; its values against their digests
       (``check_values`` needs this installation's digest key).
    2. A contiguous export: the sequence has no gap and each ``prev_hash`` is the hash of
       the row before it (the first row of a from-genesis export links to genesis).
    3. The manifest (the file's own, or ``manifest`` given separately): row count, SHA-256
       of the bytes before it, and the chain head a contiguous export must end at.
    """
    start = stream.read(1)
    stream.seek(0)
    decode = _decode_jsonl if start in (b"{", b"") else _decode_csv
    result = FileVerifyResult()
    digest = hashlib.sha256()
    row_problems: list[RowProblem] = []
    link_problems: list[RowProblem] = []
    file_manifest = None
    previous = first = None
    first_line = 0

    def note(problems: list, line: int, seq, problem: str) -> None:
        if len(problems) < max_problems:
            problems.append(RowProblem(line, seq, problem))

    for line, raw, row, found_manifest in decode(stream):
        if found_manifest is not None:
            if not isinstance(found_manifest, dict):
                note(row_problems, line, None, _("not a valid export row"))
                continue
            file_manifest = found_manifest
            continue
        if file_manifest is not None:
            note(row_problems, line, None, _("content after the manifest"))
        digest.update(raw)
        if row is _HEADER:
            continue
        if row is None:
            note(row_problems, line, None, _("not a valid export row"))
            previous = None
            continue
        result.rows += 1
        if first is None:
            first, first_line = row, line
        problem = _row_problem(row, check_values=check_values)
        if problem:
            note(row_problems, line, row.get("seq"), problem)
        if previous is not None:
            link = _link_problem(previous, row)
            if link:
                note(link_problems, line, row.get("seq"), link)
        previous = row
        result.last_hash = row.get("hash", "")

    manifest = result.manifest = manifest or file_manifest
    problems = row_problems
    if manifest is None:
        problems.append(RowProblem(0, None, _("no manifest: the file's completeness cannot be checked")))
    else:
        if manifest.get("contiguous"):
            problems += link_problems
            if manifest.get("from_genesis") and first is not None and (
                first.get("seq") != 1 or first.get("prev_hash") != GENESIS_HASH
            ):
                problems.append(
                    RowProblem(first_line, first.get("seq"), _("the export does not start at the first event"))
                )
        problems += _manifest_problems(manifest, result, digest.hexdigest())
    result.problems = sorted(problems, key=lambda p: (p.line == 0, p.line))[:max_problems]
    return result


def _manifest_problems(manifest: dict, result: FileVerifyResult, sha256: str) -> list[RowProblem]:
    problems = []
    if manifest.get("rows") != result.rows:
        counted = _("the manifest counts %(manifest)s rows, the file has %(file)s") % {
            "manifest": manifest.get("rows"),
            "file": result.rows,
        }
        problems.append(RowProblem(0, None, counted))
    if manifest.get("sha256") != sha256:
        problems.append(RowProblem(0, None, _("the file's content does not match the manifest's SHA-256")))
    head = manifest.get("chain_head") or {}
    if (
        manifest.get("contiguous")
        and result.rows
        and manifest.get("last_seq") == head.get("seq")
        and result.last_hash != head.get("hash")
    ):
        problems.append(RowProblem(0, None, _("the last row is not the chain head the manifest names")))
    return problems
