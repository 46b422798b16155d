"""What a log line may say about a request's address: never recall's question, never a credential.

Recall masks credentials in the question it records, and the access log must not keep the
question at all (it is what an agent asked about a person): ``q`` is dropped, and every
other query value, and parameter name, goes through the credential masker.
"""
from urllib.parse import parse_qsl, quote

from .secrets import mask_secrets

DROPPED_PARAMETERS = frozenset({"q"})
DROPPED = "[dropped]"


def loggable_query(query: str) -> str:
    pairs = parse_qsl(query or "", keep_blank_values=True)
    return "&".join(
        f"{quote(mask_secrets(name).text, safe='[]')}="
        f"{DROPPED if name in DROPPED_PARAMETERS else quote(mask_secrets(value).text, safe='[]')}"
        for name, value in pairs
    )


def loggable_uri(uri: str) -> str:
    """A request URI or Referer with its query string made loggable."""
    path, separator, query = (uri or "").partition("?")
    return f"{path}?{loggable_query(query)}" if separator else path
