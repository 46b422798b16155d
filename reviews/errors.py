"""Domain errors. Services raise these; the API and the pages translate them (SPEC §7)."""


class DomainError(Exception):
    code = "error"
    http_status = 400

    def __init__(self, message: str, *, details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidInput(DomainError):
    code = "invalid"
    http_status = 400


class NotFound(DomainError):
    """Also what another tenant's object looks like: it does not exist for the caller."""

    code = "not_found"
    http_status = 404


class Forbidden(DomainError):
    code = "forbidden"
    http_status = 403


class StaleVersion(DomainError):
    """Someone decided first: the caller's version is no longer current."""

    code = "stale_version"
    http_status = 409


class InvalidTransition(DomainError):
    """The object is not in a state this action starts from."""

    code = "invalid_transition"
    http_status = 409


class Unavailable(DomainError):
    """A service this action depends on cannot be reached; nothing was changed, try again."""

    code = "unavailable"
    http_status = 503
