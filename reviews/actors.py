"""Who acted: the actor every audit event and decision records (SPEC §6).

An :class:`Actor` is a value: a kind and an id. It becomes the stored string
(``reviewer:3``, ``subject:user-42``, ``policy``) through ``str()`` and is read back
through :meth:`Actor.parse`; nothing else spells or splits that format.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from django.db.models import Q

from .models import ActorKind, Source
from .screening import Verbatim

_SEPARATOR = ":"


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    # Built by authentication (a key's source, a signed-in user, a portal link), never
    # from a request's text: the boundary passes it as it is.
    id: Annotated[str, Verbatim("set by authentication, not by the request's text")] = ""
    # Who carried the action for the actor, e.g. ``api_key:1a2b3c4d`` for a subject's answer
    # given in a host app (SPEC §7): recorded in the event's payload, not part of the identity.
    via: Annotated[str, Verbatim("set by authentication: the key a host app answered with")] = field(
        default="", compare=False
    )

    def __post_init__(self):
        object.__setattr__(self, "kind", ActorKind(self.kind))

    def __str__(self) -> str:
        kind = self.kind.value
        return f"{kind}{_SEPARATOR}{self.id}" if self.id else kind

    @classmethod
    def parse(cls, text: str | None) -> Actor | None:
        """The actor a stored string names, or None for an empty or unknown one."""
        kind, _sep, ident = (text or "").partition(_SEPARATOR)
        if kind not in ActorKind.values:
            return None
        return cls(ActorKind(kind), ident)

    @staticmethod
    def of_kind(kind: ActorKind, field: str = "actor") -> Q:
        """A filter for rows whose ``field`` names an actor of ``kind`` (any id)."""
        return Q(**{f"{field}__startswith": f"{ActorKind(kind).value}{_SEPARATOR}"})

    @property
    def staff_id(self) -> int | None:
        """The user id of the staff member this actor is, or None for anyone else."""
        if self.kind == ActorKind.REVIEWER and self.id.isdigit():
            return int(self.id)
        return None

    @property
    def is_subject(self) -> bool:
        return self.kind == ActorKind.SUBJECT

    @property
    def is_reviewer(self) -> bool:
        return self.kind == ActorKind.REVIEWER

    @property
    def source(self) -> str:
        """The source of a value this actor wrote by hand (SPEC §3 step 7, §4).

        Only people (and the review API acting for them) write values by hand: the
        subject's own words are `self_service`, everyone else's edits are `reviewer`'s.
        """
        return Source.SELF_SERVICE if self.is_subject else Source.REVIEWER

    @classmethod
    def reviewer(cls, user) -> Actor:
        return cls(ActorKind.REVIEWER, str(user.pk))

    @classmethod
    def subject(cls, user_id: str) -> Actor:
        return cls(ActorKind.SUBJECT, user_id)

    @classmethod
    def subject_through_key(cls, user_id: str, key) -> Actor:
        """The subject, answering through a host app that holds an API key with scope ``subject``."""
        return cls(ActorKind.SUBJECT, user_id, via=str(cls.api_key(key)))

    @classmethod
    def api_key(cls, key) -> Actor:
        return cls(ActorKind.API_KEY, key.prefix)


POLICY = Actor(ActorKind.POLICY)
SYSTEM = Actor(ActorKind.SYSTEM)
