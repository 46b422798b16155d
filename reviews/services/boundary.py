"""The service boundary: what every write service does before and around its body.

Every write service in ``reviews/services`` is declared with :func:`service` (or, for a
service that runs no transaction of its own, :func:`screened`) instead of a bare
``@transaction.atomic``. The decorator does three things, in this order:

1. **Screens its text.** Each parameter (and each field of a dataclass input) says how
   it is screened where it is declared, with a marker from :mod:`reviews.screening`
   (``value: Correction``, ``user_id: Identifier``,
   ``password: Annotated[str, Verbatim("why")]``), read with
   ``typing.get_type_hints(include_extras=True)``; its name plays no part:

   - ``Screen.TEXT``: free text kept as written with every credential masked by
     :func:`reviews.secrets.mask_secrets`: notes and reasons, recall queries, and also
     vocabulary and schema names (masking never changes a valid member, and an invalid
     one is refused by the service anyway). Strings inside lists, tuples, mappings and
     dataclass inputs (``CandidateInput``, ``MessageInput``, ``RecallQuery``, filters)
     are screened field by field.
   - ``Screen.FACT_TEXT``: text proposed to become or explain a fact (a candidate's
     value, evidence, entity name): masked like ``TEXT`` here; the service that records
     the candidate clears its invisible characters and flags it (:mod:`reviews.poisoning`),
     since the flag and the escaped original belong on the row only it writes.
   - ``Screen.IDENTIFIER`` (and ``OPTIONAL_IDENTIFIER``): checked by
     :func:`reviews.policy.identifiers.identifier_problem` (SPEC §1); one that breaks the rules,
     a credential inside included, is refused.
   - ``Screen.CORRECTION``: a value a person typed for a published fact, a new entry or a
     schema/policy change (mappings and lists screened item by item): refused when it
     holds a credential (a correction that would publish "[redacted …]" helps nobody).
   - ``Verbatim(why)``: passed as is, with its reason (a password Django hashes, a
     signed token checked by its signature).

   Any problem (an identifier refused, a NUL in a text) raises one
   :class:`~reviews.errors.InvalidInput` naming every offending argument by its path
   (``messages.3.user_id``), before the body runs: nothing is stored.

   *A new text parameter cannot be forgotten*: when the module defining a service is
   imported, the decorator reads every parameter's annotation (and, for a dataclass,
   every field's). A parameter that may carry a ``str`` (``str``, ``str | None``,
   ``list[str]``, a mapping, or no annotation at all) and declares no screen raises
   :class:`ServiceDeclarationError` right there, so the project does not even start
   until someone decides what the new parameter is.

2. **Runs the body in ``transaction.atomic``** (``service`` only).

3. **Retries deadlocks and serialization failures** (SQLSTATE 40P01 / 40001, which
   Django raises as ``OperationalError`` with the psycopg error as its cause) up to
   :data:`RETRY_ATTEMPTS` times with a small jittered, growing pause, logging each
   retry. Only when the service opened the transaction itself: PostgreSQL aborts the
   *whole* transaction of the victim, so inside a caller's transaction a retry would run
   in an aborted transaction or, rolled back to a savepoint, still hold the caller's
   earlier locks (the same cycle again) and read the caller's old snapshot. There the
   error goes up to whoever owns the transaction. The arguments are screened once, so
   every attempt runs on the same screened values; callbacks registered with
   ``on_commit`` in a failed attempt are dropped with its rollback.

Lock order, for the writers this decorator wraps: see :func:`reviews.models.locks.lock_subject`.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import random
import re
import time
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from django.db import DatabaseError, transaction

from ..errors import InvalidInput
from ..policy.identifiers import identifier_problem, refusal_message
from ..poisoning.characters import remove_hidden, transform_around_hidden
from ..screening import Screen, Verbatim
from ..secrets import PLACEHOLDER, mask_secrets
from ..transactions import in_transaction

logger = logging.getLogger(__name__)

RETRY_ATTEMPTS = 5
RETRY_BASE_SECONDS = 0.02
RETRY_MAX_SECONDS = 0.5
# Deadlock detected, serialization failure: the transaction lost a race and may run again.
RETRYABLE_SQLSTATES = {"40P01": "deadlock", "40001": "serialization failure"}

NULL_CHARACTER = "null_character"
SECRET_DETECTED = "secret_detected"


class ServiceDeclarationError(TypeError):
    """A service parameter (or dataclass field) that may carry text declares no screen."""


# --- Declaration (import time) ---------------------------------------------------------

Marker = Screen | Verbatim


def _marker(annotation, where: str, name: str) -> Marker | None:
    """The one marker an ``Annotated`` annotation (or an optional one) carries, if any."""
    candidates = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        candidates.extend(typing.get_args(annotation))
    found = [
        item
        for candidate in candidates
        if typing.get_origin(candidate) is typing.Annotated
        for item in candidate.__metadata__
        if isinstance(item, (Screen, Verbatim))
    ]
    if len(set(found)) > 1:
        raise ServiceDeclarationError(f"{where}: {name!r} declares more than one screen: {found}")
    return found[0] if found else None


def _carries(annotation) -> tuple[bool, set[type]]:
    """(may carry a str itself, the dataclasses inside) of an annotation."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any or annotation is object:
        return True, set()
    if annotation is str:
        return True, set()
    if typing.get_origin(annotation) is typing.Annotated:
        return _carries(typing.get_args(annotation)[0])
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return False, {annotation}
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type) and issubclass(annotation, (Mapping, list, tuple, set, frozenset)):
            return True, set()  # a container of unknown items
        return False, set()
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return True, set()
    text, found = False, set()
    for argument in typing.get_args(annotation):
        if argument is Ellipsis or argument is type(None):
            continue
        argument_text, argument_found = _carries(argument)
        text, found = text or argument_text, found | argument_found
    return text, found


def _declared(name: str, annotation, where: str) -> Marker | None:
    """The marker of one parameter or field; ServiceDeclarationError for text without one."""
    marker = _marker(annotation, where, name)
    if isinstance(marker, Verbatim):
        return marker
    text, nested = _carries(annotation)
    for cls in nested:
        _dataclass_screens(cls)
    if marker is None and text:
        raise ServiceDeclarationError(
            f"{where}: parameter {name!r} may carry text but declares no screen: annotate it "
            "Annotated[..., Screen.TEXT | FACT_TEXT | IDENTIFIER | CORRECTION] or Verbatim(\"why\") "
            "(reviews.screening)."
        )
    return marker


def _hints(owner, where: str) -> dict:
    try:
        return typing.get_type_hints(owner, include_extras=True)
    except NameError as error:
        raise ServiceDeclarationError(f"{where}: an annotation names what its module cannot see: {error}") from error


def _screens_something(marker: Marker | None, annotation) -> bool:
    if marker is not None:
        return not isinstance(marker, Verbatim)
    # A dataclass whose fields are all verbatim (the Actor) costs nothing at each call.
    return any(_dataclass_screens(cls) for cls in _carries(annotation)[1])


@dataclass(frozen=True)
class _Screen:
    name: str
    screen: Screen | None  # None: a dataclass (or a container of them), screened by its own fields
    required: bool


@functools.cache
def _dataclass_screens(cls: type) -> tuple[_Screen, ...]:
    where = f"{cls.__module__}.{cls.__qualname__}"
    hints = _hints(cls, where)
    screens = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        annotation = hints.get(field.name, inspect.Parameter.empty)
        marker = _declared(field.name, annotation, where)
        if _screens_something(marker, annotation):
            required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            screens.append(_Screen(field.name, marker, required))
    return tuple(screens)


def _function_screens(function) -> tuple[_Screen, ...]:
    where = f"{function.__module__}.{function.__qualname__}"
    hints = _hints(function, where)
    screens = []
    for parameter in inspect.signature(function).parameters.values():
        annotation = hints.get(parameter.name, inspect.Parameter.empty)
        marker = _declared(parameter.name, annotation, where)
        if _screens_something(marker, annotation):
            screens.append(_Screen(parameter.name, marker, parameter.default is inspect.Parameter.empty))
    return tuple(screens)


# --- Screening (call time) ---------------------------------------------------------------


class _Problems(dict):
    def add(self, path: str, problem: str) -> None:
        self.setdefault(path, problem)


def _screen_items(value, path: str, problems: _Problems, screen_item, *, mappings: bool):
    """``value`` with ``screen_item`` applied to each item of a list, tuple or (with
    ``mappings``) mapping, and a dataclass screened field by field by its own rules."""
    if mappings and isinstance(value, Mapping):
        return {key: screen_item(item, f"{path}.{key}", problems) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        screened = [screen_item(item, f"{path}.{index}", problems) for index, item in enumerate(value)]
        if isinstance(value, tuple):
            # Nothing changed: the tuple itself, so a dataclass holding it is not rebuilt.
            unchanged = all(after is before for after, before in zip(screened, value))
            return value if unchanged else type(value)(screened)
        return screened
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _screen_dataclass(value, path, problems)
    return value


def _masked_text(text: str) -> str:
    return mask_secrets(text).text


def _screen_text(value, path: str, problems: _Problems):
    """Hidden characters removed (SPEC §3 "Poisoning"), then credentials masked: a key
    split by a zero-width space is whole again before the mask looks for it."""
    if isinstance(value, str):
        if "\x00" in value:
            problems.add(path, NULL_CHARACTER)
            return value
        masked = _masked_text(remove_hidden(value))
        return value if masked == value else masked  # the same object when nothing changed
    return _screen_items(value, path, problems, _screen_text, mappings=True)


def _screen_fact_text(value, path: str, problems: _Problems):
    """Credentials masked as if the hidden characters were not there, which stay for the
    candidate service to flag and show escaped (reviews.poisoning)."""
    if isinstance(value, str):
        if "\x00" in value:
            problems.add(path, NULL_CHARACTER)
            return value
        masked = transform_around_hidden(value, _masked_text)
        return value if masked == value else masked
    return _screen_items(value, path, problems, _screen_fact_text, mappings=True)


def _screen_identifier(value, path: str, problems: _Problems, *, required: bool):
    if value is None or value == "":
        if required:
            problems.add(path, "empty")
        return value
    if isinstance(value, (list, tuple)):
        return value if not value else type(value)(
            _screen_identifier(item, f"{path}.{index}", problems, required=True) for index, item in enumerate(value)
        )
    if isinstance(value, str):
        problem = identifier_problem(value)
        if problem is not None:
            problems.add(path, problem)
    return value  # not text (a Django user's numeric id): nothing to check here


def _screen_correction(value, path: str, problems: _Problems):
    """Refuses a credential, never masks one: the value comes back as it was given, less
    its hidden characters (which a person typing a correction does not mean to publish)."""
    if isinstance(value, str):
        if "\x00" in value:
            problems.add(path, NULL_CHARACTER)
            return value
        clean = remove_hidden(value)
        if mask_secrets(clean).found:
            problems.add(path, SECRET_DETECTED)
        return value if clean == value else clean
    return _screen_items(value, path, problems, _screen_correction, mappings=True)


def _screen(value, screen: _Screen, path: str, problems: _Problems):
    match screen.screen:
        case None:
            return _screen_nested(value, path, problems)
        case Screen.TEXT:
            return _screen_text(value, path, problems)
        case Screen.FACT_TEXT:
            return _screen_fact_text(value, path, problems)
        case Screen.IDENTIFIER:
            return _screen_identifier(value, path, problems, required=screen.required)
        case Screen.OPTIONAL_IDENTIFIER:
            return _screen_identifier(value, path, problems, required=False)
        case Screen.CORRECTION:
            return _screen_correction(value, path, problems)
    return value


def _screen_nested(value, path: str, problems: _Problems):
    return _screen_items(value, path, problems, _screen_nested, mappings=False)


def _screen_dataclass(value, path: str, problems: _Problems):
    changes = {}
    for screen in _dataclass_screens(type(value)):
        current = getattr(value, screen.name)
        screened = _screen(current, screen, f"{path}.{screen.name}", problems)
        if screened is not current:
            changes[screen.name] = screened
    return dataclasses.replace(value, **changes) if changes else value


_MESSAGES = {
    NULL_CHARACTER: "Text cannot contain a null character.",
    SECRET_DETECTED: "The value looks like a credential; credentials are never stored.",
}


def screen_arguments(screens: tuple[_Screen, ...], arguments: dict) -> dict:
    """The arguments with their text masked; InvalidInput naming every refused one."""
    problems = _Problems()
    screened = dict(arguments)
    for screen in screens:
        if screen.name in arguments:
            screened[screen.name] = _screen(arguments[screen.name], screen, screen.name, problems)
    if problems:
        path, first = next(iter(problems.items()))
        message = _MESSAGES.get(first) or refusal_message(first, path)
        raise InvalidInput(message, details=dict(problems))
    return screened


_PLACEHOLDER_PATTERN = re.compile(re.escape(PLACEHOLDER).replace(re.escape("{kind}"), r"([a-z_]+)"))


def masked_kinds(text: str) -> tuple[str, ...]:
    """The kinds of credential the boundary masked out of ``text``, read from its placeholders.

    The policy (SPEC §3 step 2) rejects a value that held a credential; the boundary has
    already replaced it, so the placeholder is what still says so.
    """
    return tuple(dict.fromkeys(_PLACEHOLDER_PATTERN.findall(text or "")))


# --- The decorators ------------------------------------------------------------------------


def _is_retryable(error: BaseException) -> str | None:
    while error is not None:
        what = RETRYABLE_SQLSTATES.get(getattr(error, "sqlstate", None) or "")
        if what:
            return what
        error = error.__cause__
    return None


def retry_pause(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``: small, growing, jittered so racers part."""
    return min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)


def _declare(function, *, atomic: bool):
    screens = _function_screens(function)
    signature = inspect.signature(function)
    name = f"{function.__module__.rsplit('.', 1)[-1]}.{function.__name__}"
    parameters = signature.parameters.values()
    # A service whose parameters are all keyword-only (nearly every one) called with
    # keywords that fit them needs no binding: they are its arguments as they are.
    # Signature.bind cost 4 µs a call, a fifth of a recall's screening.
    keyword_only = all(parameter.kind is inspect.Parameter.KEYWORD_ONLY for parameter in parameters)
    names = frozenset(signature.parameters)
    required = frozenset(parameter.name for parameter in parameters if parameter.default is inspect.Parameter.empty)

    def bind(args, kwargs) -> tuple[tuple, dict]:
        if keyword_only and not args and kwargs.keys() <= names and required <= kwargs.keys():
            return (), screen_arguments(screens, kwargs)
        bound = signature.bind(*args, **kwargs)  # the TypeError a wrong call deserves
        bound.arguments.update(screen_arguments(screens, bound.arguments))
        return bound.args, bound.kwargs

    @functools.wraps(function)
    def call(*args, **kwargs):
        args, kwargs = bind(args, kwargs)
        if not atomic:
            return function(*args, **kwargs)
        if in_transaction():
            # Part of the caller's transaction: a savepoint, and the caller's to retry.
            with transaction.atomic():
                return function(*args, **kwargs)
        attempt = 1
        while True:
            try:
                with transaction.atomic():
                    return function(*args, **kwargs)
            except DatabaseError as error:
                what = _is_retryable(error)
                if what is None or attempt >= RETRY_ATTEMPTS:
                    raise
                pause = retry_pause(attempt)
                logger.warning("%s: %s, attempt %d of %d; retrying in %.0f ms",
                               name, what, attempt, RETRY_ATTEMPTS, pause * 1000)
                time.sleep(pause)
                attempt += 1

    call.screens = screens
    return call


def service(function):
    """A write service: screened arguments, one transaction, retried when it lost a deadlock."""
    return _declare(function, atomic=True)


def screened(function):
    """A service that keeps its own transactions (or none): screened arguments only."""
    return _declare(function, atomic=False)
