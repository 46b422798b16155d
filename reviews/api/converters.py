"""Path converters of the API's routes."""


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
