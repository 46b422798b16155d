"""Which addresses may receive webhooks (SPEC §7b).

A URL is checked when it is registered and again before every delivery, after DNS
resolution, and the delivery then connects to the very address that passed: a name
that resolved to a public address at registration and to 127.0.0.1 later (DNS
rebinding) is refused at delivery, and one that changes between the check and the
connection cannot slip through, since no second lookup is made.
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from django.conf import settings


class AddressRule(StrEnum):
    """The rule a refused URL broke; named in the 400 and in the delivery log."""

    INVALID_URL = "invalid_url"
    HTTPS_REQUIRED = "https_required"
    UNRESOLVABLE = "unresolvable_host"
    LOOPBACK = "loopback_address"
    PRIVATE = "private_address"
    LINK_LOCAL = "link_local_address"
    METADATA = "metadata_address"


# Cloud instance-metadata services (AWS, GCP, Azure, OpenStack; AWS over IPv6; Alibaba;
# Oracle): named as such in the refusal, before the broader rule they also break.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)


class RefusedAddress(Exception):
    def __init__(self, rule: AddressRule, message: str):
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True)
class Target:
    """A URL that passed, with the address to connect to."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def address_rule(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> AddressRule | None:
    """The rule an address breaks, or None for a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return AddressRule.METADATA
    if address.is_loopback or address.is_unspecified:
        return AddressRule.LOOPBACK
    if address.is_link_local:
        return AddressRule.LINK_LOCAL
    # is_global is False for private ranges and for every other non-public block
    # (shared address space, documentation, reserved, multicast).
    if address.is_private or not address.is_global or address.is_multicast:
        return AddressRule.PRIVATE
    return None


def check_url(url: str, *, allow_private: bool | None = None) -> Target:
    """Resolve ``url`` and return where to connect, or raise :class:`RefusedAddress`."""
    if allow_private is None:
        allow_private = settings.MEMORY_WEBHOOK_ALLOW_PRIVATE
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedAddress(AddressRule.INVALID_URL, "The URL cannot be parsed.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise RefusedAddress(AddressRule.INVALID_URL, "The URL must be http(s)://host/path, without credentials.")
    if parts.scheme != "https" and not allow_private:
        raise RefusedAddress(AddressRule.HTTPS_REQUIRED, "A webhook URL must use https://.")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedAddress(AddressRule.UNRESOLVABLE, f"The host {parts.hostname!r} does not resolve.") from exc
    addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]
    if not addresses:
        raise RefusedAddress(AddressRule.UNRESOLVABLE, f"The host {parts.hostname!r} does not resolve.")
    if not allow_private:
        # Every address the name has must be public: a sender could be given any of them.
        for address in addresses:
            rule = address_rule(address)
            if rule is not None:
                raise RefusedAddress(
                    rule, f"The host {parts.hostname!r} resolves to {address}, which webhooks may not reach."
                )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(parts.scheme, parts.hostname, port, path, str(addresses[0]))
