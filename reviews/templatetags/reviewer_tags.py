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
from django.utils.translation import gettext, gettext_lazy as _, ngettext, pgettext_lazy

from .. import labels
from .label_tags import field_label
from .poisoning_tags import revealed
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


@register.simple_tag
def select_options(field) -> list[dict]:
    """``{% select_options form.sort as options %}``: a filter's dropdown options as text
    (reviews/queue.html#select). The one selected is what the server applies: the value
    asked for, else the field's initial one (the status: "pending review"), not the list's
    first option. A queue page prints eleven dropdowns of some seventy options: as plain
    data they cost the template a lookup each, not a comparison and a lazy translation."""
    current = field.value() or field.initial
    if current is None:
        current = ""
    return [{"value": str(value), "text": str(text), "selected": value == current} for value, text in field.field.choices]


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


def line_badges(item, *, can_decide: bool) -> list[dict[str, str]]:
    """What a queue line says of its item at a glance: sending, its status, contested,
    conflict, sensitivity, credential masked, grounding flags, new entity, kind, scope and who
    holds the claim. Each badge is a dict (``css``, ``text``, and ``data``: the data attribute
    reviewer.js and the tests find it by, without its ``data-`` prefix, with ``data_value`` its
    value when it has one), printed by reviews/queue.html#row."""
    c = item.candidate
    flags = c.flags or []
    pending = c.status == CandidateStatus.PENDING_REVIEW
    badges = []
    if can_decide and pending:
        badges.append(_badge("pending", gettext("sending your decision…"), "pending-note"))
    if not pending:
        if item.waits_for_subject:
            status = gettext("waiting for %(user)s") % {"user": c.subject.user_id}
        else:
            status = status_label(c.status)
        badges.append(_badge(f"status-{c.status}", status))
    if item.is_contested:
        badges.append(_badge("contested", gettext("contested by the user"), "contested"))
    if item.conflict:
        badges.append(_badge("conflict", gettext("conflict")))
    if item.sensitivity and item.sensitivity != Sensitivity.NORMAL:
        badges.append(_badge(item.sensitivity, sensitivity_label(item.sensitivity)))
    if CandidateFlag.SECRET_MASKED in flags:
        badges.append(_badge("sensitive", gettext("credential masked")))
    badges.extend(
        _badge("conflict", flag_label(flag), "flag", flag) for flag in flags if flag in CandidateFlag.NEEDS_A_PERSON
    )
    if item.is_new_entity and c.entity_id:
        badges.append(_badge("new", gettext("new entity")))
    if c.kind != Kind.FACT:
        badges.append(_badge("", c.get_kind_display()))
    if c.scope == MemoryScope.THREAD:
        badges.append(_badge("", c.get_scope_display()))
    if item.claimed_by:
        if item.claimed_by_viewer:
            badges.append(_badge("claim mine", gettext("claimed by you"), "claim"))
        else:
            badges.append(_badge("claim", gettext("claimed by %(who)s") % {"who": item.claimed_by}, "claim"))
    return badges


def _badge(css: str, text, data: str = "", data_value: str = "") -> dict[str, str]:
    return {"css": css, "text": str(text), "data": data, "data_value": data_value}


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


@register.simple_tag
def conversation_view(lines) -> list[dict]:
    """``{% conversation_view group.conversation as shown %}``: each line as
    reviews/queue.html#conversation prints it, a dict of texts and the line's time (a queue
    page prints about ninety lines, and each lookup, loop and filter there costs some
    microseconds; the time's one filter, moment, is the rule every staff page follows).

    A line's text comes in three parts around the candidate's evidence, which is marked:
    ``before``, ``marked`` and ``after`` (``marked`` empty: the whole text is in ``before``).
    The source line holds the evidence at most once (selectors.queue.evidence_segments)."""
    shown = []
    for line in lines:
        before, marked, after = [], "", []
        for text, hit in line.segments:
            if hit and not marked:
                marked = text
            else:
                (after if marked else before).append(text)
        shown.append({
            "is_source": line.is_source,
            "role": str(role_label(line.message.role)),
            "before": "".join(before),
            "marked": marked,
            "after": "".join(after),
            "iso": line.message.created_at.isoformat(),
            "at": line.message.created_at,  # shown by the template's moment filter, as every staff time is
        })
    return shown


# What an age badge says beside the time an item has waited: text, so the colour is never
# the only sign of being late.
AGE_BADGE_TEXTS = {
    ReviewAge.WITHIN: _("within the %(hours)d h target"),
    ReviewAge.NEAR: _("near the %(hours)d h target"),
    ReviewAge.OVER: _("over the %(hours)d h target"),
}


def _age_badge(moment, target_hours: int, now) -> dict[str, str]:
    standing = review_age(now - moment, target_hours)
    return _badge(f"age-{standing}", str(AGE_BADGE_TEXTS[standing]) % {"hours": target_hours}, "age", standing)


@register.simple_tag(takes_context=True)
def age_badge(context, moment) -> dict[str, str] | None:
    """``{% age_badge counts.oldest as badge %}``: how an item that has waited since
    ``moment`` stands against the viewer's tenant's review target (reviews.domain.review_age)."""
    request = context.get("request")
    tenant = getattr(request, "tenant", None)
    if not moment or tenant is None:
        return None
    return _age_badge(moment, tenant.review_target_hours, timezone.now())


@register.simple_tag
def group_texts(group) -> dict[str, str]:
    """``{% group_texts group as texts %}``: a queue group's accessible name (``label``) and
    its thread's summary (``summary``), translated once per group (reviews/queue.html#group)."""
    names = {"user": group.user_id, "thread": group.thread_id}
    count = len(group.conversation)
    return {
        "label": gettext("%(user)s, thread %(thread)s") % names if group.thread_id else group.user_id,
        "summary": ngettext(
            "%(user)s · thread %(thread)s · %(counter)s message",
            "%(user)s · thread %(thread)s · %(counter)s messages",
            count,
        ) % {**names, "counter": count},
    }


# A value longer than this shows its first lines on the queue line and a "more" (the whole
# value is one click away, in place); a shorter one is always shown whole.
LONG_VALUE = 160


@register.simple_tag(takes_context=True)
def queue_line(context, item) -> dict:
    """``{% queue_line item as line %}``: everything an item's line prints (reviews/queue.html
    #item, #row and #quick), worked out once per item.

    The template engine spends microseconds on every variable, filter and tag it renders, and
    a queue page prints twenty lines of some sixty values each: done there, the lines cost
    more than the rest of the request. Here each value is computed once, as text ready to be
    escaped, and the template reads dict keys (a dict, not an object: the engine tries
    ``line[key]`` first, which succeeds, before any attribute lookup). Ids and versions are
    strings, so no locale formats them. Texts are data: the template escapes each one."""
    c = item.candidate
    can_decide = bool(context.get("can_decide"))
    # Only a value the boundary found hidden parts or look-alikes in has anything to mark
    # (flag_details keeps the escaped original and the words); any other prints as it is.
    details = c.flag_details or {}
    segments = revealed(c, "value") if details.get("value") or details.get("confusable") else []
    pk, version = str(c.pk), str(c.version)
    pending = c.status == CandidateStatus.PENDING_REVIEW
    label = field_label(context, c.entity_type, c.field)
    ref = f"{c.entity_type}:{c.entity_ref_id}"
    user_id = c.subject.user_id
    contested = item.is_contested
    css = "item"
    if not c.is_open:
        css += " decided"
    if item.waits_for_subject:
        css += " waiting"
    return {
        "pk": pk,
        "version": version,
        "css": css,
        "data_open": "1" if pending else "0",
        "ref": ref,
        "field": c.field,
        "label": label,
        "value": c.value,
        "value_short": clip(c.value, 40),
        "long": len(c.value) > LONG_VALUE,
        "user_id": user_id,
        "show_user": not item.conversation,  # a group with a thread names the user in its summary
        "selectable": can_decide and c.is_open,
        "select_text": gettext("Select %(ref)s %(field)s “%(value)s”")
        % {"ref": ref, "field": label, "value": clip(c.value, 60)},
        "own_url": candidate_url(c.pk),
        "body_url": f"{candidate_url(c.pk, 'body')}?version={version}",
        "open_text": gettext("Open item #%(id)s: its context and every action") % {"id": pk},
        "decidable": can_decide and pending,
        "conflict": bool(item.conflict),
        "approve_url": candidate_url(c.pk, "settle" if item.conflict else "approve"),
        "contested": contested,
        "defer_url": "" if contested else candidate_url(c.pk, "defer"),
        "undo": bool(item.undo_until and can_decide),
        "badges": line_badges(item, can_decide=can_decide),
        "confidence": "%.2f" % c.confidence,
        "created_iso": c.created_at.isoformat(),
        "age": age(c.created_at),
        # Only an item still waiting for someone is late or on time; a decided one is neither.
        "age_badge": age_badge(context, c.created_at) if c.is_open else None,
        # The value as the opened item shows it: hidden parts written out and marked,
        # look-alike words marked (SPEC §3 "Poisoning"); plain text needs no include.
        "value_segments": [
            {"text": s.text, "hidden": s.hidden, "confusable": s.confusable} for s in segments
        ] if any(s.hidden or s.confusable for s in segments) else [],
    }
