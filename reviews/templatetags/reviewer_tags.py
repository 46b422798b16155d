"""Labels the reviewer pages show for stored codes, in the reviewer's language."""
import json
import unicodedata
from functools import lru_cache
from html import escape

from django import template
from django.template.defaultfilters import truncatechars
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince
from django.utils.translation import gettext_lazy as _

from .. import labels
from ..models import CandidateFlag, CandidateStatus, Reason, Sensitivity

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
    Reason.REVIEWER_APPROVED: _("approved by a reviewer"),
    Reason.REVIEWER_EDITED: _("edited by a reviewer"),
    Reason.REVIEWER_REJECTED: _("rejected by a reviewer"),
    Reason.DEFERRED: _("sent to the user"),
    Reason.SUBJECT_CONFIRMED: _("confirmed by the user"),
    Reason.SUBJECT_REJECTED: _("rejected by the user"),
    Reason.NEWER_CANDIDATE: _("a newer value came first"),
    Reason.ERASED: _("erased"),
}


FLAG_LABELS = {
    CandidateFlag.NEW_ENTITY: _("new entity"),
    CandidateFlag.CONTESTED: _("contested by the user"),
    CandidateFlag.SECRET_MASKED: _("credential masked"),
    CandidateFlag.UNSUPPORTED: _("not supported by its message"),
    CandidateFlag.NOT_FROM_USER: _("not the user's own words"),
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


DECISION_LABELS = {
    "approved": _("approved"),
    "edited": _("edited, then approved"),
    "rejected": _("rejected"),
    "deferred": _("sent to the user"),
}


@register.filter
def decision_label(kind: str) -> str:
    return DECISION_LABELS.get(kind, kind)


@register.filter
def age(moment) -> str:
    """How long ago, in its largest unit ("3 days"): a queue page prints one a line, and
    ``timesince`` would work out the second unit only for it to be cut off."""
    return timesince(moment, depth=1) if moment else ""


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


def _conversation_line(line) -> str:
    text = "".join(f"<mark>{escape(piece)}</mark>" if hit else escape(piece) for piece, hit in line.segments)
    source = ' class="source"' if line.is_source else ""
    return (
        f'<li{source}><span class="role">{escape(line.message.role)}</span>'
        f'<span class="text">{text}</span>'
        f'<time class="at" datetime="{escape(line.message.created_at.isoformat())}">{escape(line.at)}</time></li>'
    )


@register.simple_tag
def conversation_lines(lines) -> SafeString:
    """``{% conversation_lines group.conversation %}``: a conversation's ``<li>`` lines, the
    source lines marked and their evidence in ``<mark>``. Built here, once per line, instead
    of by a template loop: a queue page shows some 90 lines and the loop's variable lookups
    cost about 55 µs a line (20 µs here). Every piece of text, what users wrote (the
    segments) and every stored value, is escaped as ``{{ }}`` escapes it (``html.escape``
    with quotes); the only markup is this function's own."""
    return mark_safe("\n".join(_conversation_line(line) for line in lines))
