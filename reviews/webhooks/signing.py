"""The Standard Webhooks signature (SPEC §7b), made by the ``standardwebhooks`` package:
``v1,`` + base64 of HMAC-SHA256 over ``"{webhook-id}.{webhook-timestamp}.{body}"``, keyed by
the base64-decoded part of the secret after ``whsec_``. The package's verifier is what a
receiver runs, so tests check our headers with it."""
from __future__ import annotations

import base64
import secrets
from datetime import datetime

from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh endpoint secret: 32 random bytes, base64, after ``whsec_``."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def new_webhook_id() -> str:
    """The ``webhook-id`` of one event, the same on every retry."""
    return "msg_" + secrets.token_hex(16)


def signed_headers(*, secret: str, webhook_id: str, at: datetime, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(webhook_id, at, body),
    }
