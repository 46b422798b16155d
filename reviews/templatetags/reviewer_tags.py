"""Labels the reviewer pages show for stored codes, in the reviewer's language."""
import json
import unicodedata
from functools import lru_cache
from html import escape

from django import template
from django.template.defaultfilters import truncatechars
from django.urls import get_script_prefix, reverse
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince
from django.utils.translation import gettext, gettext_lazy as _

from .. import labels
from ..models import CandidateFlag, CandidateStatus, Kind, MemoryScope, Notice, Reason, Sensitivity

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


# --- A queue line's badges and quick decisions ------------------------------------------------
#
# Built here rather than by template tags: a queue page prints twenty lines, and these
# parts, a dozen conditions and two forms a line, cost some 8 ms a page in the template
# engine (its variable lookups and escaping, about 5 µs each), against 1 ms here; the line's
# summary (its text, badges, confidence and age) about 3 ms more, and the item's head (its
# attributes, notice and checkbox: item_head) a third of what an item cost. The rest of the
# item (reviews/queue.html#item: the body, the undo form, the subject's note) stays a
# template. As there, every value is escaped
# (``escape``: html.escape with quotes, as ``{{ }}`` does) and the translated texts are the
# same msgids the template used; blocktranslate's are filled with escaped values.


def _badge(css: str, text, extra: str = "") -> str:
    return f'<span class="badge{" " + css if css else ""}"{extra}>{escape(str(text))}</span>'


def _line_badges(context, item) -> str:
    """The badges of a line's summary (:func:`line_summary`): what a queue line says of its
    item at a glance: sending, its status, contested, conflict, sensitivity, credential
    masked, grounding flags, new entity, kind, scope and who holds the claim."""
    c = item.candidate
    flags = c.flags or []
    pending = c.status == CandidateStatus.PENDING_REVIEW
    badges = []
    if context.get("can_decide") and pending:
        badges.append(_badge("pending", gettext("sending your decision…"), " data-pending-note"))
    if not pending:
        if item.waits_for_subject:
            status = gettext("waiting for %(user)s") % {"user": c.subject.user_id}
        else:
            status = status_label(c.status)
        badges.append(_badge(f"status-{escape(c.status)}", status))
    if item.is_contested:
        badges.append(_badge("contested", gettext("contested by the user"), " data-contested"))
    if item.conflict:
        badges.append(_badge("conflict", gettext("conflict")))
    if item.sensitivity and item.sensitivity != Sensitivity.NORMAL:
        badges.append(_badge(escape(item.sensitivity), sensitivity_label(item.sensitivity)))
    if CandidateFlag.SECRET_MASKED in flags:
        badges.append(_badge("sensitive", gettext("credential masked")))
    badges.extend(
        _badge("conflict", flag_label(flag), f' data-flag="{escape(flag)}"')
        for flag in flags
        if flag in CandidateFlag.NEEDS_A_PERSON
    )
    if item.is_new_entity and c.entity_id:
        badges.append(_badge("new", gettext("new entity")))
    if c.kind != Kind.FACT:
        badges.append(_badge("", c.get_kind_display()))
    if c.scope == MemoryScope.THREAD:
        badges.append(_badge("", c.get_scope_display()))
    if item.claimed_by:
        if item.claimed_by_viewer:
            badges.append(_badge("claim mine", gettext("claimed by you"), " data-claim"))
        else:
            badges.append(_badge("claim", gettext("claimed by %(who)s") % {"who": item.claimed_by}, " data-claim"))
    return "".join(f"\n        {badge}" for badge in badges)


@register.simple_tag(takes_context=True)
def line_summary(context, item, label: str) -> SafeString:
    """``<summary class="line">{% line_summary item label %}</summary>``: what a queue line
    shows of its item: the entity, the field's label, the value, the badges, and on the
    right the user (when no conversation names them), the confidence and the age. Ids and
    numbers print unlocalised, as the line's ``localize off`` printed them."""
    c = item.candidate
    confidence = "%.2f" % c.confidence
    user = "" if item.conversation else f'<span class="user">{escape(str(c.subject.user_id))}</span>'
    title = escape(gettext("Confidence"))  # outside the f-string, where makemessages finds it
    return mark_safe(
        f'\n      <span class="ref" id="item-{int(c.pk)}-title">{escape(str(c.entity_type))}:{escape(str(c.entity_ref_id))}</span>'
        f'\n      <span class="field" title="{escape(str(c.field))}">{escape(str(label))}</span>'
        f'\n      <span class="text value-inline" data-value>{escape(str(c.value))}</span>'
        f'\n      <span class="flags">{_line_badges(context, item)}\n      </span>'
        f'\n      <span class="right">'
        f'\n        {user}'
        f'\n        <span class="confidence" title="{title}"><meter min="0" max="1"'
        f' value="{confidence}" aria-hidden="true"></meter>{confidence}</span>'
        f'\n        <time datetime="{escape(c.created_at.isoformat())}">{escape(age(c.created_at))}</time>'
        f'\n      </span>\n    '
    )


@register.simple_tag(takes_context=True)
def item_head(context, item, label: str) -> SafeString:
    """``{% item_head item label %}``: a queue item up to its line, built here as the line's
    summary is (a page prints twenty; in the template engine these attributes, the
    checkbox's spoken name and the ``<details>`` opening cost about a third of an item).
    It opens ``<article>`` and ``<details>``; reviews/queue.html#item closes them. In order:

    * the ``<article>``: decided or waiting, open (``data-open``), the outcome of the
      decision just made (``notice_level``) and ``hx-swap-oob`` when it is swapped in out
      of band (``oob``);
    * the decision's notice, unless it succeeded (the toast says that);
    * the checkbox for bulk decisions, named for a screen reader by the item's reference,
      field and value;
    * ``<details>``: on a list (``lazy_bodies``) it fetches its body when first opened
      (reviewer.js sends the event ``fetch-body``: when the item is opened, or ahead for
      the focused item and the next two), else it holds the body and is open when
      ``expanded``;
    * the line's summary (:func:`line_summary`).

    Values are escaped as ``{{ }}`` escapes them; ids print unlocalised."""
    c = item.candidate
    pk = int(c.pk)
    notice, notice_level = context.get("notice"), context.get("notice_level")
    classes = "item" + (" decided" if not c.is_open else "") + (" waiting" if item.waits_for_subject else "")
    opened = "1" if c.status == CandidateStatus.PENDING_REVIEW else "0"
    outcome = f' data-outcome="{escape(str(notice_level))}"' if notice_level else ""
    oob = ' hx-swap-oob="true"' if context.get("oob") else ""
    notice_line = ""
    if notice and notice_level != Notice.SUCCESS:
        level = escape(str(notice_level))
        notice_line = f'<p class="notice {level}" role="status" data-notice="{level}">{conditional_escape(notice)}</p>'
    select = ""
    if context.get("can_decide") and c.is_open:
        spoken = gettext("Select %(ref)s %(field)s “%(value)s”") % {
            "ref": escape(f"{c.entity_type}:{c.entity_ref_id}"),
            "field": conditional_escape(label),
            "value": escape(clip(c.value, 60)),
        }
        select = (
            f'<label class="select-box"><input type="checkbox" name="selected" value="{pk}:{int(c.version)}"'
            f' form="bulk-form" data-select><span class="visually-hidden">{spoken}</span></label>'
        )
    if context.get("lazy_bodies"):
        details = (
            f'<details class="expand" data-expand hx-get="{candidate_url(pk, "body")}?version={int(c.version)}"'
            ' hx-trigger="fetch-body" hx-target="find [data-body]" hx-swap="innerHTML">'
        )
    else:
        details = f'<details class="expand" data-expand{" open" if context.get("expanded") else ""}>'
    return mark_safe(
        f'\n<article class="{classes}" id="item-{pk}" data-item data-open="{opened}"{outcome} tabindex="-1"'
        f' aria-labelledby="item-{pk}-title"{oob}>'
        f"\n  {notice_line}"
        f'\n  <div class="select-col">{select}</div>'
        f"\n  {details}"
        f'\n    <summary class="line">{line_summary(context, item, label)}</summary>'
    )


@register.simple_tag
def body_pending(candidate) -> SafeString:
    """``{% body_pending c %}``: what a listed item's body holds until it is fetched (and all
    it holds without JavaScript): a link to the item's own page. A tag for the reason
    :func:`item_head` is one: a blocktranslate a line costs more than the rest of it."""
    pk = int(candidate.pk)
    text = gettext("Open item #%(id)s: its context and every action") % {"id": pk}
    return mark_safe(f'<p class="meta" data-body-pending><a href="{candidate_url(pk)}">{text}</a></p>')


def _quick_form(context, url: str, action: str, button: str, *, extra_fields: str) -> str:
    return (
        f'\n    <form method="post" action="{url}" hx-post="{url}" hx-target="closest .item" hx-swap="outerHTML"'
        f' data-action="{action}">{context["decision_hidden"]}{extra_fields}\n      {button}\n    </form>'
    )


def _quick_button(css: str, text: str, spoken: str, key: str, extra: str = "") -> str:
    """A decision's button: its text, what a screen reader hears after it (``spoken``,
    already escaped) and its key."""
    return (
        f'<button type="submit" class="{css}"{extra}>{escape(text)}<span class="visually-hidden"> {spoken}</span>'
        f' <kbd aria-hidden="true">{key}</kbd></button>'
    )


@register.simple_tag(takes_context=True)
def quick_decisions(context, item, label: str) -> SafeString:
    """``<div class="quick">{% quick_decisions item label %}</div>``: the decisions a line
    offers without opening it: approve (``a``; on a conflict, take the proposed value, the
    settle forms being in the body) and ask the user (``d``). Each form carries the page's
    ``decision_hidden`` (CSRF, next) and the version the reviewer saw."""
    c = item.candidate
    if not (context.get("can_decide") and c.status == CandidateStatus.PENDING_REVIEW):
        return mark_safe("")
    version = f'<input type="hidden" name="version" value="{int(c.version)}">'
    what = f"{escape(str(label))} “{escape(clip(c.value, 40))}”"
    # Each text is translated outside the f-strings, where makemessages (xgettext) finds it.
    if item.conflict:
        text = gettext("Take proposed")
        first = _quick_form(
            context, candidate_url(c.pk, "settle"), "take-new",
            _quick_button("ok small", text, what, "a", ' data-resolution="take_new"'),
            extra_fields=f'{version}<input type="hidden" name="resolution" value="take_new">',
        )
    else:
        text = gettext("Approve")
        first = _quick_form(
            context, candidate_url(c.pk, "approve"), "approve", _quick_button("ok small", text, what, "a"),
            extra_fields=version,
        )
    text = gettext("Ask the user")
    defer = _quick_button("secondary small", text, f"({escape(c.subject.user_id)}, {escape(str(label))})", "d")
    return mark_safe(first + _quick_form(context, candidate_url(c.pk, "defer"), "defer", defer, extra_fields=version))
