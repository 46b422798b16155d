"""Who acted: the actor string every audit event and decision records (SPEC §6)."""
from dataclasses import dataclass

from .models import Source


@dataclass(frozen=True)
class Actor:
    kind: str  # reviewer | subject | policy | system | api_key
    id: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}" if self.id else self.kind

    @property
    def source(self) -> str:
        """The source of a value this actor wrote by hand (SPEC §3 step 7, §4).

        Only people (and the review API acting for them) write values by hand: the
        subject's own words are `self_service`, everyone else's edits are `reviewer`'s.
        """
        return Source.SELF_SERVICE if self.kind == "subject" else Source.REVIEWER

    @classmethod
    def reviewer(cls, user) -> "Actor":
        return cls("reviewer", str(user.pk))

    @classmethod
    def subject(cls, user_id: str) -> "Actor":
        return cls("subject", user_id)

    @classmethod
    def api_key(cls, key) -> "Actor":
        return cls("api_key", key.prefix)


POLICY = Actor("policy")
SYSTEM = Actor("system")
