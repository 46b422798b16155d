"""What the current request is, for the layers below the web that record it (the audit trail
writes the request id with every event). The request middleware sets it; nothing here imports
web code, so audit and the services stay importable from commands and workers."""
import contextvars

# "" outside a request (commands, workers, the shell).
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("current_request_id", default="")
