"""Path converters of the API's routes (and the pages naming the same things), registered
here once, whichever urls module is imported first."""
from django.urls import register_converter

from ..services.tenants import KEY_PREFIX_PATTERN


class IdentifierConverter:
    """A SPEC §1 identifier as a path segment, ``/`` included.

    Clients send ``org/7`` percent-encoded (``users/org%2F7/facts``), but the server decodes
    ``%2F`` before routing, so the path arrives as ``users/org/7/facts``. The converter
    takes any characters and each route ends in its own fixed suffix (``/facts``,
    ``/facts/<id>``, ``/portal-link``), so the identifier is everything before it. Whether
    it is well formed is the view's check (``ApiView.initial``): a malformed one is a 400,
    not an unmatched route.
    """

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class KeyPrefixConverter:
    """An API key's prefix. Anything else names no key: it is not routed (a 404), instead of
    reaching the database, which refuses some text outright (a NUL is a 500 there)."""

    regex = KEY_PREFIX_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IdentifierConverter, "identifier")
register_converter(KeyPrefixConverter, "key_prefix")
