"""Audit exports (SPEC §6): streamed now, or written to a file by a background job.

Every export is itself audited (who exported what). A job's file lives under
``MEDIA_ROOT/exports/<tenant>/`` and is served only to that tenant's auditors; an erasure
deletes every file that carried values it removed (:func:`audit_exports_purge`).
"""
from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import audit
from ..actors import SYSTEM, Actor
from ..audit import EventDraft
from ..background import TaskName, publish_tasks, publisher, runs_in_process, task
from ..errors import InvalidInput, NotFound
from ..exports import (
    AuditExporter,
    ChainSnapshot,
    ExportFilters,
    FileVerifyResult,
    RowProblem,
    export_queryset,
    verify_export_file,
)
from ..models import AuditAction, AuditEvent, AuditExport, ExportFormat, ExportStatus, Tenant
from .boundary import screened, service
from ..screening import Text

logger = logging.getLogger(__name__)

# How often a running job writes its progress (seconds): often enough for a progress bar.
PROGRESS_INTERVAL = 0.5


def exports_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "exports"


def export_path(job: AuditExport) -> Path:
    return exports_root() / job.file_name


def _check_format(format: str) -> str:
    if format not in ExportFormat.values:
        raise InvalidInput("Unknown export format.", details={"format": list(ExportFormat.values)})
    return format


def _export_event(*, tenant: Tenant, actor: Actor, action: str, object_id, after: dict) -> None:
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=action, object_type="audit_export", object_id=object_id, after=after),
    )


@screened
def audit_export_stream(
    *, tenant: Tenant, filters: ExportFilters, format: Text, actor: Actor, events: QuerySet | None = None
) -> AuditExporter:
    """Record that ``actor`` exports, then hand back the exporter whose ``stream()`` the
    caller sends (the rows are read while the response is written, page by page).
    ``events`` narrows the export to a selection of the tenant's events (the admin's)."""
    _check_format(format)
    with transaction.atomic():
        _export_event(
            tenant=tenant,
            actor=actor,
            action=AuditAction.AUDIT_EXPORTED,
            object_id="stream",
            after={"format": format, "filters": filters.as_dict(), "selection": events is not None},
        )
    return AuditExporter(tenant=tenant, filters=filters, format=format, events=events)


@service
def audit_export_start(*, tenant: Tenant, filters: ExportFilters, format: Text, actor: Actor) -> AuditExport:
    """Queue a background export; the task starts once this transaction commits."""
    _check_format(format)
    job = AuditExport.objects.create(
        tenant=tenant, requested_by=str(actor), format=format, filters=filters.as_dict()
    )
    _export_event(
        tenant=tenant,
        actor=actor,
        action=AuditAction.AUDIT_EXPORT_REQUESTED,
        object_id=job.pk,
        after={"format": format, "filters": job.filters},
    )
    transaction.on_commit(lambda: _enqueue_export(job.pk))
    return job


def _enqueue_export(export_id: int) -> None:
    """Runs after the commit; never raises: the job row stays queued if the broker is down."""
    if runs_in_process():
        task(TaskName.AUDIT_EXPORT_RUN).delay(export_id)  # eager: errors are recorded on the job, not raised
        return
    publisher.submit(_publish_export, export_id)


def _publish_export(export_id: int) -> None:
    if not publish_tasks(TaskName.AUDIT_EXPORT_RUN, [(export_id,)]):
        # Shown on the job's page, which then offers to run it again.
        AuditExport.objects.filter(pk=export_id, status=ExportStatus.QUEUED).update(
            status=ExportStatus.FAILED, error="The task queue was unavailable; nothing was exported. Run it again."
        )
        logger.warning("export %s not queued: the broker is unavailable", export_id)


def audit_export_get(*, tenant: Tenant, export_id: int) -> AuditExport:
    job = AuditExport.objects.filter(tenant=tenant, pk=export_id).first()
    if job is None:
        raise NotFound("Export not found.")
    return job


def audit_export_run(*, export_id: int) -> AuditExport | None:
    """Write one queued export to its file (the task's body; safe to run twice).

    1. Claim the job (queued → running); a job already claimed is left alone.
    2. Fix the chain snapshot, count the rows, stream them to ``<file>.part``, saving
       progress every ``PROGRESS_INTERVAL`` seconds.
    3. Append the manifest, move the file into place and mark the job ready, unless an
       erasure purged the job meanwhile (then the file is deleted instead).
    """
    claimed = AuditExport.objects.filter(pk=export_id, status=ExportStatus.QUEUED).update(
        status=ExportStatus.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return None
    job = AuditExport.objects.select_related("tenant").get(pk=export_id)
    part = None
    try:
        exporter = AuditExporter(
            tenant=job.tenant, filters=ExportFilters.from_dict(job.filters), format=job.format
        )
        job.rows_total = exporter.count()
        job.head_seq = exporter.snapshot.head_seq
        job.file_name = f"{job.tenant.slug}/audit-{job.pk}-{secrets.token_hex(8)}.{exporter.codec.extension}"
        AuditExport.objects.filter(pk=job.pk).update(
            rows_total=job.rows_total, head_seq=job.head_seq, file_name=job.file_name
        )
        path = export_path(job)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        _write_export(job, exporter, part)
        job.manifest = exporter.manifest()
        finished = AuditExport.objects.filter(pk=job.pk, status=ExportStatus.RUNNING).update(
            status=ExportStatus.READY, rows_done=exporter.rows, manifest=job.manifest, finished_at=timezone.now()
        )
        if not finished:  # purged by an erasure while it ran: the file may hold erased values
            part.unlink(missing_ok=True)
            return job
        part.replace(path)
        with transaction.atomic():
            _export_event(
                tenant=job.tenant,
                actor=_actor_of(job),
                action=AuditAction.AUDIT_EXPORTED,
                object_id=job.pk,
                after={
                    "rows": exporter.rows,
                    "sha256": job.manifest["sha256"],
                    "chain_head": job.manifest["chain_head"],
                },
            )
    except Exception as exc:  # the job is marked failed where an auditor sees it and can run it again
        logger.exception("audit export %s failed", export_id)
        if part is not None:
            part.unlink(missing_ok=True)
        AuditExport.objects.filter(pk=job.pk).update(
            status=ExportStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
        )
    job.refresh_from_db()
    return job


def _actor_of(job: AuditExport) -> Actor:
    return Actor.parse(job.requested_by) or SYSTEM


def _write_export(job: AuditExport, exporter: AuditExporter, part: Path) -> None:
    last_report = time.monotonic()
    with part.open("wb") as out:
        for chunk in exporter.data_chunks():
            out.write(chunk)
            if time.monotonic() - last_report >= PROGRESS_INTERVAL:
                last_report = time.monotonic()
                AuditExport.objects.filter(pk=job.pk).update(rows_done=exporter.rows)
        out.write(exporter.codec.trailer(exporter.manifest()))


def audit_exports_purge(*, tenant_id: int, erased: Q) -> int:
    """Retire every export file holding a row of the events matched by ``erased`` (whose
    values an erasure just removed). Runs inside the erasure's transaction; files are
    deleted once it commits. Returns how many files go."""
    doomed = []
    jobs = AuditExport.objects.select_for_update().filter(
        tenant_id=tenant_id, status__in=(ExportStatus.READY, ExportStatus.RUNNING)
    )
    for job in jobs:
        filters = ExportFilters.from_dict(job.filters)
        manifest = job.manifest or {}
        if job.status == ExportStatus.READY and not manifest.get("rows"):
            continue
        # A running job may not have fixed its head yet: it could still read anything.
        first, last = manifest.get("first_seq") or 1, manifest.get("last_seq") or job.head_seq or 2**62
        snapshot = ChainSnapshot(job.head_seq, "", first, last)
        if not export_queryset(tenant_id, filters, snapshot).filter(erased).exists():
            continue
        doomed.append(job)
    if not doomed:
        return 0
    files = [export_path(job) for job in doomed if job.file_name and job.status == ExportStatus.READY]
    AuditExport.objects.filter(pk__in=[job.pk for job in doomed]).update(
        status=ExportStatus.PURGED, error="Deleted: an erasure removed values this file carried.", file_name=""
    )
    transaction.on_commit(lambda: [path.unlink(missing_ok=True) for path in files])
    return len(doomed)


def audit_file_verify(
    stream, *, tenant: Tenant | None = None, manifest: dict | None = None, check_values: bool = True
) -> FileVerifyResult:
    """Verify an exported file (:func:`reviews.exports.verify_export_file`), then hold its
    manifest against this database: the chain head it names must be the event stored at
    that sequence, so even a file re-hashed end to end is caught. ``tenant`` (a page's)
    refuses a file of another tenant."""
    result = verify_export_file(stream, manifest=manifest, check_values=check_values)
    manifest = result.manifest or {}
    tenant_id = manifest.get("tenant_id")
    if tenant is not None and tenant_id != tenant.pk:
        result.problems.insert(0, RowProblem(0, None, _("the file is not an export of this tenant")))
        return result
    head = manifest.get("chain_head") or {}
    if tenant_id is None or not head.get("seq"):
        return result
    stored = AuditEvent.objects.filter(tenant_id=tenant_id, seq=head["seq"]).values_list("hash", flat=True).first()
    if stored is None:
        result.problems.append(RowProblem(0, None, _("this database has no event at the chain head the manifest names")))
    elif stored != head.get("hash"):
        result.problems.append(RowProblem(0, None, _("the chain head in the manifest does not match this database")))
    return result
