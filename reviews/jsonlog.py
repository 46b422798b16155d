"""Structured logs (``DJANGO_LOG_FORMAT=json``): one JSON object a line, for log pipelines.

The handler's credential filter (reviews/logs.py) has already masked the message and the
traceback when this formatter runs; it only lays them out, with the request id the
audit events of the same request carry.
"""
import json
import logging
from datetime import datetime, timezone

from .context import current_request_id


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = current_request_id.get()
        if request_id:
            entry["request_id"] = request_id
        status = getattr(record, "status_code", None)
        if isinstance(status, int):
            entry["status"] = status
        if record.exc_info or record.exc_text:
            entry["exception"] = record.exc_text or self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False, default=str)
