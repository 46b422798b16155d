"""Labels the reviewer pages show for stored codes, in the reviewer's language."""
import difflib
import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

from django import template
from django.template.defaultfilters import truncatechars
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext, gettext_lazy as _, pgettext_lazy

from .. import labels
from ..domain import review_age
from ..models import CandidateFlag, CandidateStatus, EntityType, Kind, MemoryScope, Reason, ReviewAge, Sensitivity

register = template.Library()

REASON_LABELS = {
    Reason.FIELD_NOT_ALLOWED: _("field not in the schema"),
    Reason.INVALID: _("empty or too long"),
    Reason.SECRET_DETECTED: _("credential detected"),
    Reason.BELOW_CONFIDENCE: _("confidence too low"),
    Reason.NEEDS_CONFIRMATION: _("needs the user's confirmation"),
    Reason.UNCONFIRMED_KIND: _("inference or plan to confirm"),
    Reason.SENSITIVE_CONSENT: _("sensitive: needs consent"),
    Reason.DUPLICATE: _("same as the current value"),
    Reason.SUPPRESSED: _("refused earlier"),
    Reason.CONFLICT: _("conflicts with the current value"),
    Reason.CORRECTION: _("explicit correction"),
    Reason.AUTO_APPROVE: _("auto-approved"),
    Reason.NEEDS_REVIEW: _("needs review"),
    Reason.UNGROUNDED: _("not supported by the user's own words"),
    Reason.POISONING: _("hidden characters, a look-alike or an instruction"),
    Reason.REVIEWER_APPROVED: _("approved by a reviewer"),
    Reason.REVIEWER_EDITED: _("edited by a reviewer"),
    Reason.REVIEWER_REJECTED: _("rejected by a reviewer"),
    Reason.DEFERRED: _("sent to the user"),
    Reason.SUBJECT_CONFIRMED: _("confirmed by the user"),
    Reason.SUBJECT_REJECTED: _("rejected by the user"),
    Reason.NEWER_CANDIDATE: _("a newer value came first"),
    Reason.SAME_AS_PUBLISHED: _("its value was published meanwhile"),
    Reason.ERASED: _("erased"),
}


FLAG_LABELS = {
    CandidateFlag.NEW_ENTITY: _("new entity"),
    CandidateFlag.CONTESTED: _("contested by the user"),
    CandidateFlag.SECRET_MASKED: _("credential masked"),
    CandidateFlag.UNSUPPORTED: _("not supported by its message"),
    CandidateFlag.NOT_FROM_USER: _("not the user's own words"),
    CandidateFlag.HIDDEN_CHARACTERS: _("hidden characters"),
    CandidateFlag.CONFUSABLE: _("look-alike word"),
    CandidateFlag.INSTRUCTION_LIKE: _("speaks to the agent"),
}


@register.filter
def flag_label(code: str) -> str:
    return FLAG_LABELS.get(code, code)


@register.filter
def reason_label(code: str) -> str:
    return REASON_LABELS.get(code, code)


STATUS_LABELS = dict(CandidateStatus.choices)


@register.filter
def status_label(code: str) -> str:
    return STATUS_LABELS.get(code, code)


@register.filter
def sensitivity_label(code: str) -> str:
    return Sensitivity(code).label if code in Sensitivity.values else code


# The same filter as label_tags' (one definition, reviews/labels.py), kept here for the
# reviewer templates that load only this library.
register.filter("source_label", labels.source_label)
register.filter("action_label", labels.action_label)
register.filter("moment", labels.moment)


DECISION_LABELS = {
    "approved": _("approved"),
    "edited": _("edited, then approved"),
    "rejected": _("rejected"),
    "deferred": _("sent to the user"),
}


@register.filter
def decision_label(kind: str) -> str:
    return DECISION_LABELS.get(kind, kind)


# Entity types as staff read them (labels.DEFAULT_ENTITY_TYPE_LABELS speaks to the subject:
# their own entity is "You"); a type a tenant added before the vocabulary was closed reads
# as words.
ENTITY_TYPE_LABELS = dict(EntityType.choices)


@register.filter
def entity_type_label(code: str) -> str:
    label = ENTITY_TYPE_LABELS.get(code)
    return str(label) if label else labels.humanise(code).capitalize()


@register.filter
def history_value(value) -> str:
    """A recorded value as an item's history shows it: text as written, nothing as "—",
    anything else (a list, a record) as compact JSON."""
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        return value
    return pretty_json(value)


# Who wrote a message of a conversation (Message.role: what the integrating system sent; an
# unknown role prints as it came).
ROLE_LABELS = {
    "user": pgettext_lazy("message role", "User"),
    "assistant": pgettext_lazy("message role", "Assistant"),
    "system": pgettext_lazy("message role", "System"),
    "tool": pgettext_lazy("message role", "Tool"),
}


@register.filter
def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, role)


@register.filter
def age(moment) -> str:
    """How long ago, in its largest unit ("3 days"): a queue page prints one a line, and
    ``timesince`` would work out the second unit only for it to be cut off. Under a minute
    it says so ("0 minutes" read as a fault)."""
    if not moment:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return gettext("less than a minute")
    return timesince(moment, depth=1)


@register.filter
def clip(text: str, length: int) -> str:
    """``truncatechars`` with a quick way out for text that fits, as most values do (a queue
    line clips three): the same result, without ``Truncator`` translating its ellipsis."""
    text = str(text)
    if len(text) <= length and unicodedata.is_normalized("NFC", text):
        return text
    return truncatechars(text, length)


@register.filter
def count_cap(count: int, cap: int) -> str:
    """A count that stopped counting at ``cap`` says so: "1,000+"."""
    return f"{cap:,}+" if count > cap else f"{count:,}"


@register.filter
def pretty_json(value) -> str:
    """A before/after payload as compact JSON text (the template escapes it)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


# A placeholder id no candidate has: each candidate route is reversed once with it, and an
# item's address is that route with its own id put in (a queue page prints four a line).
_ANY_PK = 987_654_321_987_654_321


@lru_cache(maxsize=64)
def _candidate_route(name: str, script_prefix: str) -> tuple[str, str]:
    head, tail = reverse(name, args=[_ANY_PK]).split(str(_ANY_PK))
    return head, tail


@register.filter
def candidate_url(pk: int, action: str = "") -> str:
    """``{{ c.pk|candidate_url:"approve" }}``: the same address as ``{% url 'reviews:candidate-approve' c.pk %}``
    (no action: the candidate's own page), without resolving the route again for each item."""
    head, tail = _candidate_route(f"reviews:candidate-{action}" if action else "reviews:candidate", get_script_prefix())
    return f"{head}{int(pk)}{tail}"


@dataclass(frozen=True)
class Badge:
    """One badge of a queue line: its CSS class, its text, and the data attribute reviewer.js
    and the tests find it by (``data`` names it without the ``data-`` prefix; ``data_value``
    its value, when it has one). Data only: reviews/queue.html#row prints it."""

    css: str
    text: str
    data: str = ""
    data_value: str = ""


@register.simple_tag(takes_context=True)
def line_badges(context, item) -> list[Badge]:
    """``{% line_badges item as badges %}``: what a queue line says of its item at a glance:
    sending, its status, contested, conflict, sensitivity, credential masked, grounding
    flags, new entity, kind, scope and who holds the claim."""
    c = item.candidate
    flags = c.flags or []
    pending = c.status == CandidateStatus.PENDING_REVIEW
    badges = []
    if context.get("can_decide") and pending:
        badges.append(Badge("pending", gettext("sending your decision…"), "pending-note"))
    if not pending:
        if item.waits_for_subject:
            status = gettext("waiting for %(user)s") % {"user": c.subject.user_id}
        else:
            status = status_label(c.status)
        badges.append(Badge(f"status-{c.status}", status))
    if item.is_contested:
        badges.append(Badge("contested", gettext("contested by the user"), "contested"))
    if item.conflict:
        badges.append(Badge("conflict", gettext("conflict")))
    if item.sensitivity and item.sensitivity != Sensitivity.NORMAL:
        badges.append(Badge(item.sensitivity, sensitivity_label(item.sensitivity)))
    if CandidateFlag.SECRET_MASKED in flags:
        badges.append(Badge("sensitive", gettext("credential masked")))
    badges.extend(
        Badge("conflict", flag_label(flag), "flag", flag)
        for flag in flags
        if flag in CandidateFlag.NEEDS_A_PERSON
    )
    if item.is_new_entity and c.entity_id:
        badges.append(Badge("new", gettext("new entity")))
    if c.kind != Kind.FACT:
        badges.append(Badge("", c.get_kind_display()))
    if c.scope == MemoryScope.THREAD:
        badges.append(Badge("", c.get_scope_display()))
    if item.claimed_by:
        if item.claimed_by_viewer:
            badges.append(Badge("claim mine", gettext("claimed by you"), "claim"))
        else:
            badges.append(Badge("claim", gettext("claimed by %(who)s") % {"who": item.claimed_by}, "claim"))
    return badges


@dataclass(frozen=True)
class Piece:
    """A run of a value's text, and whether it differs from the value it is compared with."""

    text: str
    changed: bool


@dataclass(frozen=True)
class ValueDiff:
    current: list[Piece]
    proposed: list[Piece]


# Latin words and numbers compare whole; any other character alone, so a Chinese value
# compares character by character, and spaces and punctuation by themselves.
_TOKEN = re.compile(r"[A-Za-z0-9]+|.", re.DOTALL)


def _tokens(value: str) -> list[str]:
    return _TOKEN.findall(value)


def _pieces(tokens: list[str], spans: list[tuple[int, int, bool]]) -> list[Piece]:
    pieces: list[Piece] = []
    for start, end, changed in spans:
        if start == end:
            continue
        text = "".join(tokens[start:end])
        if pieces and pieces[-1].changed == changed:
            pieces[-1] = Piece(pieces[-1].text + text, changed)
        else:
            pieces.append(Piece(text, changed))
    return pieces


@register.simple_tag
def value_diff(current, proposed) -> ValueDiff:
    """``{% value_diff conflict.value c.value as diff %}``: the two values of a conflict cut
    into pieces that are the same in both and pieces that differ, for the page to mark."""
    old, new = _tokens(str(current)), _tokens(str(proposed))
    old_spans, new_spans = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        same = tag == "equal"
        old_spans.append((i1, i2, not same))
        new_spans.append((j1, j2, not same))
    return ValueDiff(current=_pieces(old, old_spans), proposed=_pieces(new, new_spans))


@dataclass(frozen=True)
class ShownLine:
    """A conversation line as reviews/queue.html#conversation prints it: each lookup a
    template makes costs some microseconds, and a queue page prints about ninety lines."""

    is_source: bool
    role: str
    pieces: list[Piece]  # ``changed``: the piece is the candidate's evidence, marked
    iso: str
    at: str


@register.simple_tag
def conversation_view(lines) -> list[ShownLine]:
    """``{% conversation_view group.conversation as shown %}``: the lines' data, flat."""
    return [
        ShownLine(
            is_source=line.is_source,
            role=role_label(line.message.role),
            pieces=[Piece(piece, bool(hit)) for piece, hit in line.segments],
            iso=line.message.created_at.isoformat(),
            at=line.at,
        )
        for line in lines
    ]


# What an age badge says beside the time an item has waited: text, so the colour is never
# the only sign of being late.
AGE_BADGE_TEXTS = {
    ReviewAge.WITHIN: _("within the %(hours)d h target"),
    ReviewAge.NEAR: _("near the %(hours)d h target"),
    ReviewAge.OVER: _("over the %(hours)d h target"),
}


def _age_badge(moment, target_hours: int, now) -> Badge:
    standing = review_age(now - moment, target_hours)
    return Badge(f"age-{standing}", str(AGE_BADGE_TEXTS[standing]) % {"hours": target_hours}, "age", standing)


@register.simple_tag(takes_context=True)
def age_badge(context, moment) -> Badge | None:
    """``{% age_badge counts.oldest as badge %}``: how an item that has waited since
    ``moment`` stands against the viewer's tenant's review target (reviews.domain.review_age)."""
    request = context.get("request")
    tenant = getattr(request, "tenant", None)
    if not moment or tenant is None:
        return None
    return _age_badge(moment, tenant.review_target_hours, timezone.now())


@dataclass(frozen=True)
class Row:
    """What a queue line shows of its item, worked out once (reviews/queue.html#row)."""

    ref: str
    long: bool
    confidence: str
    created_iso: str
    age: str
    badges: list[Badge]
    age_badge: Badge | None = None


# A value longer than this shows its first lines on the queue line and a "more" (the whole
# value is one click away, in place); a shorter one is always shown whole.
LONG_VALUE = 160


@register.simple_tag(takes_context=True)
def queue_row(context, item) -> Row:
    """``{% queue_row item as row %}``: a queue line's texts, worked out in one call."""
    c = item.candidate
    return Row(
        ref=f"{c.entity_type}:{c.entity_ref_id}",
        long=len(c.value) > LONG_VALUE,
        confidence="%.2f" % c.confidence,
        created_iso=c.created_at.isoformat(),
        age=age(c.created_at),
        badges=line_badges(context, item),
        # Only an item still waiting for someone is late or on time; a decided one is neither.
        age_badge=age_badge(context, c.created_at) if c.is_open else None,
    )
