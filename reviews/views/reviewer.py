"""The reviewer dashboard (SPEC §4): the queue, decisions, conflicts, entities.

Views parse, call a service, render. Every action is a plain POST form that redirects
back (works without JavaScript); with htmx the same view answers with the item's partial.
"""
from __future__ import annotations

from functools import wraps
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST

from ..actors import POLICY, Actor
from ..errors import DomainError, InvalidInput, InvalidTransition, NotFound, StaleVersion
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    BulkDecision,
    Candidate,
    CandidateStatus,
    Entity,
    Fact,
    FactStatus,
    Notice,
    Reason,
    ReviewDecision,
    Sensitivity,
)
from ..web.forms import BulkDecisionForm, ClaimForm, IdentifierField, UndoBulkForm
from ..models.comments import MAX_COMMENT_LENGTH
from ..permissions import can_comment, can_decide, can_view_queue, staff_tenant
from ..templatetags.reviewer_tags import FLAG_LABELS
from ..policy.schema import TenantSchema
from ..selectors.queue import (
    AGE_OVER_TARGET,
    ANY_RELATION,
    QUEUE_STATUS_ALL,
    QUEUE_STATUS_OPEN,
    QueueClaims,
    QueueCounts,
    QueueCursor,
    QueueFilters,
    QueueSort,
    actor_names,
    queue_groups,
    review_queue_counts,
    review_queue_items,
    review_queue_page,
    queue_selection,
)
from ..domain import UNDO_SECONDS
from ..services.candidates import (
    Resolution,
    UndoRefused,
    candidate_approve,
    candidate_defer,
    candidate_reject,
    candidate_settle_conflict,
    candidate_undo,
    MAX_BULK_ITEMS,
    candidates_bulk_decide,
    check_bulk_decision,
)
from ..selectors.item_history import candidate_comments, candidate_history
from ..services.comments import candidate_comment_add
from ..services.claims import candidates_claim, candidates_claims_renew, candidates_release
from ..services.entities import entity_merge
from ..services.waiting import stale_details

CLAIM_SIZES = (5, 10, 20, 50)

# --- Access -----------------------------------------------------------------------------------


def staff_view(view):
    """Signed-in staff of a tenant who may see the queue; anyone else finds nothing here.

    A subject's portal session is not a Django login, so it is sent to the sign-in page.
    """

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.tenant = staff_tenant(request.user)
        if not can_view_queue(request.user):
            raise Http404
        request.can_decide = can_decide(request.user)
        return view(request, *args, **kwargs)

    return wrapper


def _require_decider(request) -> None:
    if not request.can_decide:
        raise PermissionDenied(_("Your role may view the queue but not decide."))


def decider_view(view):
    """A POST by someone who may decide; an auditor is refused (403), never silently ignored."""

    @require_POST
    @staff_view
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        _require_decider(request)
        return view(request, *args, **kwargs)

    return wrapper


def _back(request, fallback: str) -> str:
    """Where a form says to go back to: a path on this site, else ``fallback``. Only a path
    (``/…``): redirect() would take any other word for a view's name to look up."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if (
        target.startswith("/")
        and target.isprintable()
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False)
    ):
        return target
    return fallback


_MESSAGE_LEVELS = {Notice.SUCCESS: messages.SUCCESS, Notice.STALE: messages.WARNING, Notice.ERROR: messages.ERROR}


def _flash(request, level: Notice, text: str) -> None:
    """The answer as a message for the page the plain (no-htmx) form goes back to."""
    messages.add_message(request, _MESSAGE_LEVELS[level], text)


# --- Queue ------------------------------------------------------------------------------------

# Each item is a line with approve and defer (its body comes when it is opened), each group
# its conversation; 20 of them render well inside the page's time budget (see
# bench/review_queue.py), and "More" brings the next 20.
QUEUE_PAGE_SIZE_HTML = 20

YES_NO = [("", gettext_lazy("any")), ("yes", gettext_lazy("yes")), ("no", gettext_lazy("no"))]
STATUS_CHOICES = [
    (QUEUE_STATUS_OPEN, gettext_lazy("open (review, then user)")),
    *CandidateStatus.choices,
    (QUEUE_STATUS_ALL, gettext_lazy("all")),
]
SORT_CHOICES = [
    (QueueSort.OLDEST, gettext_lazy("oldest first")),
    (QueueSort.NEWEST, gettext_lazy("newest first")),
    (QueueSort.CONFIDENCE, gettext_lazy("lowest confidence first")),
    (QueueSort.PRIORITY, gettext_lazy("contested and conflicts first")),
]
FLAG_CHOICES = [("", gettext_lazy("any")), *FLAG_LABELS.items(), ("conflict", gettext_lazy("conflict"))]
CLAIM_CHOICES = [
    (QueueClaims.POOL, gettext_lazy("unclaimed and mine")),
    (QueueClaims.MINE, gettext_lazy("only mine")),
    (QueueClaims.ALL, gettext_lazy("everyone's, claimed too")),
]
AGE_CHOICES = [
    ("", gettext_lazy("any age")),
    ("lt1d", gettext_lazy("less than a day")),
    ("1to7d", gettext_lazy("1 to 7 days")),
    ("gt7d", gettext_lazy("more than 7 days")),
    ("gt30d", gettext_lazy("more than 30 days")),
    (AGE_OVER_TARGET, gettext_lazy("over the review target")),
]


class QueueFilterForm(forms.Form):
    q = forms.CharField(label=gettext_lazy("Search"), max_length=200, required=False)
    sort = forms.ChoiceField(label=gettext_lazy("Sort"), choices=SORT_CHOICES, required=False)
    flag = forms.ChoiceField(label=gettext_lazy("Flag"), choices=FLAG_CHOICES, required=False)
    claims = forms.ChoiceField(label=gettext_lazy("Claimed items"), choices=CLAIM_CHOICES, required=False)
    status = forms.ChoiceField(label=gettext_lazy("Status"), choices=STATUS_CHOICES, required=False)
    entity_type = forms.ChoiceField(label=gettext_lazy("Entity type"), required=False)
    field = forms.ChoiceField(label=gettext_lazy("Field"), required=False)
    sensitivity = forms.ChoiceField(
        label=gettext_lazy("Sensitivity"), choices=[("", gettext_lazy("any")), *Sensitivity.choices], required=False
    )
    min_confidence = forms.FloatField(label=gettext_lazy("Confidence from"), min_value=0, max_value=1, required=False)
    max_confidence = forms.FloatField(label=gettext_lazy("to"), min_value=0, max_value=1, required=False)
    conflict = forms.ChoiceField(label=gettext_lazy("Conflict"), choices=YES_NO, required=False)
    new_entity = forms.ChoiceField(label=gettext_lazy("New entity"), choices=YES_NO, required=False)
    age = forms.ChoiceField(label=gettext_lazy("Age"), choices=AGE_CHOICES, required=False)
    user_id = IdentifierField(name=gettext_lazy("The user"), label=gettext_lazy("User"), required=False)

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        # Kept: the queue page's items need the same schema (review_queue_items).
        self.schema = TenantSchema.load(tenant)
        any_choice = [("", _("any"))]
        self.fields["entity_type"].choices = any_choice + [(t, t) for t in sorted(self.schema.entity_types)]
        self.fields["field"].choices = [
            *any_choice,
            *[(f, f) for f in sorted({f for _t, f in self.schema.rules})],
            (ANY_RELATION, _("any relation (relation:*)")),
        ]

    def filters(self) -> QueueFilters:
        """The filters asked for; what failed to validate is left out (and shown as an error)."""
        data = {name: value for name, value in self.cleaned_data.items() if value not in (None, "")} if self.is_bound else {}
        for name in ("conflict", "new_entity"):
            if name in data:
                data[name] = data[name] == "yes"
        data.setdefault("status", CandidateStatus.PENDING_REVIEW)
        return QueueFilters(**data)


def _queue_filters(data, tenant) -> tuple[QueueFilterForm, QueueFilters]:
    """The queue's filters from a query (or the claim form, which repeats them)."""
    data = {key: data.get(key) for key in QueueFilterForm.base_fields if data.get(key) not in (None, "")}
    form = QueueFilterForm(data or None, tenant=tenant, initial={"status": CandidateStatus.PENDING_REVIEW})
    if form.is_bound:
        form.is_valid()  # errors are shown beside the fields; the valid filters still apply
    return form, form.filters() if form.is_bound else QueueFilters()


@require_GET
@staff_view
def queue(request):
    context = _queue_context(request, request.GET, here=request.get_full_path())
    if request.htmx and request.GET.get("cursor"):  # "More": the next page of groups
        return render(request, "reviews/queue.html#page", context)
    # A filter that does not validate is left out and named (beside its field, and above the
    # results the filter form swaps in): the valid ones still apply, and the answer is a 400.
    status = 400 if context["form"].errors else 200
    if request.htmx:  # the filter form swaps the counts and the first page
        return render(request, "reviews/queue.html#results", context, status=status)
    return render(request, "reviews/queue.html", context, status=status)


def _queue_context(request, data: QueryDict, *, here: str, defer_counts: bool = True) -> dict:
    """One page of the queue for the filters (and cursor) in ``data``, with its counts.

    ``defer_counts``: the headline is not counted here but asked for by the page once it is
    shown (``counts_url``, :func:`queue_counts`). A sparse filter's or a search's capped count
    reads thousands of rows (10-45 ms at a million items), as long as the rest of the page:
    the items come first, and the counts follow without holding them up."""
    form, filters = _queue_filters(data, request.tenant)
    viewer = str(Actor.reviewer(request.user))
    if request.can_decide:
        candidates_claims_renew(tenant=request.tenant, actor=Actor.reviewer(request.user))
    cursor = None
    if data.get("cursor"):
        try:
            cursor = QueueCursor.decode(data["cursor"])
        except InvalidInput:
            messages.error(request, _("That page link is broken; showing the first page."))
    page = review_queue_page(
        tenant=request.tenant, filters=filters, cursor=cursor, limit=QUEUE_PAGE_SIZE_HTML, viewer=viewer
    )
    query = data.copy()
    query.pop("cursor", None)
    next_url = None
    if page.next_cursor is not None:
        query["cursor"] = page.next_cursor.encode()
        next_url = f"{reverse('reviews:queue')}?{query.urlencode()}"
    query.pop("cursor", None)
    filter_query = query.urlencode()
    context = _item_context(
        request,
        here=here,
        form=form,
        groups=queue_groups(
            review_queue_items(
                tenant=request.tenant, candidates=page.candidates, viewer=viewer, lazy_bodies=True, schema=form.schema
            )
        ),
        lazy_bodies=True,
        next_page_url=next_url,
        filter_query=filter_query,
    )
    if not (request.htmx and data.get("cursor")):  # "More" brings groups only
        if defer_counts:
            context["counts_url"] = f"{reverse('reviews:queue-counts')}?{filter_query}"
        else:
            context.update(_counts_context(request, filters, filter_query=filter_query))
    return context


def select_all_label(counts: QueueCounts, filters: QueueFilters) -> str:
    """The "select all in this filter" link, with the number it selects when it is known."""
    if counts.in_filter > MAX_BULK_ITEMS:
        return _("Select the first %(count)d in this filter") % {"count": MAX_BULK_ITEMS}
    if set(filters.phases) <= set(OPEN_CANDIDATE_STATUSES):  # every item counted can be decided
        return ngettext(
            "Select the %(count)d in this filter", "Select all %(count)d in this filter", counts.in_filter
        ) % {"count": counts.in_filter}
    return _("Select every open item in this filter")


@require_GET
@staff_view
def queue_counts(request):
    """The queue's headline for the filters in the query (the page asks for it once shown).

    Filters that do not validate are left out, as on the page, and the answer is a 400 that
    still carries the counts of the valid ones. With htmx: the counts and, out of band, the
    "Release mine" button (shown when the viewer holds claims); without JavaScript (the
    page's <noscript> link): a page of its own with a link back to the queue."""
    form, filters = _queue_filters(request.GET, request.tenant)
    query = request.GET.copy()
    query.pop("cursor", None)
    filter_query, queue_url = query.urlencode(), reverse("reviews:queue")
    context = {
        **_counts_context(request, filters, filter_query=filter_query),
        "can_decide": request.can_decide,
        "queue_url": queue_url,
        "form": form,
        "back_url": f"{queue_url}?{filter_query}" if filter_query else queue_url,
    }
    status = 400 if form.errors else 200
    if request.htmx:
        return render(request, "reviews/queue.html#counts_answer", context, status=status)
    return render(request, "reviews/queue_counts.html", context, status=status)


def _counts_context(request, filters: QueueFilters, *, filter_query: str) -> dict:
    """The queue's headline for these filters, and its "select all" link."""
    counts = review_queue_counts(tenant=request.tenant, filters=filters, viewer=str(Actor.reviewer(request.user)))
    return {"counts": counts, "select_all_label": select_all_label(counts, filters), "filter_query": filter_query}


@require_GET
@staff_view
def candidate_detail(request, pk: int):
    """An item's own page: the item open with every action, its whole history (every audit
    event that touched it) and the comments its reviewers wrote each other."""
    candidate = _candidate_or_404(request.tenant, pk)
    return _candidate_page(request, candidate, CommentForm())


def _candidate_page(request, candidate: Candidate, comment_form: "CommentForm", *, status: int = 200):
    context = _item_context(
        request,
        here=request.get_full_path() if request.method == "GET" else reverse("reviews:candidate", args=[candidate.pk]),
        item=review_queue_items(tenant=request.tenant, candidates=[candidate], viewer=str(Actor.reviewer(request.user)))[0],
        expanded=True,
        show_conversation=True,
        history=candidate_history(candidate=candidate),
        **_comments_context(request, candidate, comment_form),
    )
    return render(request, "reviews/candidate.html", context, status=status)


def _comments_context(request, candidate: Candidate, form: "CommentForm") -> dict:
    return {
        "comment_candidate": candidate,
        "comments": candidate_comments(candidate=candidate),
        "comment_form": form,
        "can_comment": can_comment(request.user),
    }


class CommentForm(forms.Form):
    body = forms.CharField(
        label=gettext_lazy("Add a comment for your colleagues"),
        max_length=MAX_COMMENT_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"required": gettext_lazy("Write something first: an empty comment is not posted.")},
    )


@require_POST
@staff_view
def candidate_comment(request, pk: int):
    """Add a comment to an item (reviewers and tenant admins; an auditor reads them, 403).
    With htmx the comment thread is swapped in place; without, the page is shown again."""
    if not can_comment(request.user):
        raise PermissionDenied(_("Your role may read comments but not add them."))
    candidate = _candidate_or_404(request.tenant, pk)
    form = CommentForm(request.POST)
    if form.is_valid():
        try:
            candidate_comment_add(
                tenant=request.tenant, candidate_id=candidate.pk, author=request.user,
                body=form.cleaned_data["body"], actor=Actor.reviewer(request.user),
            )
        except NotFound:
            raise Http404 from None
        except DomainError as error:
            form.add_error("body", error_message(error))
    if form.errors:
        if request.htmx:
            # The field keeps the focus it had (htmx focuses autofocus in what it swaps in).
            context = {**_comments_context(request, candidate, form), "answer": True}
            return render(request, "reviews/candidate.html#comments", context, status=400)
        return _candidate_page(request, candidate, form, status=400)
    if request.htmx:
        context = {
            **_comments_context(request, candidate, CommentForm()),
            "history": candidate_history(candidate=candidate),
            "answer": True,
        }
        return render(request, "reviews/candidate.html#comments_answer", context)
    messages.success(request, _("Comment added."))
    return redirect(f"{reverse('reviews:candidate', args=[candidate.pk])}#comments")


@require_GET
@staff_view
def candidate_body(request, pk: int):
    """An item's body, which the queue fetches when the reviewer first opens the item: its
    context, the fact's history and the edit, reject and settle forms (the line carries only
    approve and defer). Its forms come back to the queue page they are shown on. Anything but
    htmx asking is sent to the candidate's own page, which shows the same."""
    candidate = _candidate_or_404(request.tenant, pk)
    if not request.htmx:
        return redirect("reviews:candidate", pk=candidate.pk)
    shown_on = request.htmx.current_url_abs_path or ""
    here = shown_on if shown_on.startswith("/") and shown_on.isprintable() else reverse("reviews:queue")
    context = _item_context(
        request,
        here=here,
        item=review_queue_items(tenant=request.tenant, candidates=[candidate], viewer=str(Actor.reviewer(request.user)))[0],
    )
    shown_version = request.GET.get("version", "")
    if shown_version.isdigit() and int(shown_version) != candidate.version:
        # The line is out of date (a colleague decided, or undid, since the page loaded): the
        # whole item is swapped for what it is now, open, saying who decided it.
        context.update(expanded=True)
        if not candidate.is_open or candidate.status == CandidateStatus.PENDING_USER:
            context.update(notice_level=Notice.STALE, notice=stale_message(candidate, opened=True))
        response = render(request, "reviews/queue.html#item", context)
        response["HX-Retarget"] = f"#item-{candidate.pk}"
        response["HX-Reswap"] = "outerHTML"
        return response
    return render(request, "reviews/queue.html#item_body", context)


def _item_context(request, *, here: str, **extra) -> dict:
    """What the item partial needs beside the item: who may act, and where to come back to
    (``here``: the page a plain form goes back to)."""
    return {
        "can_decide": request.can_decide,
        "here": here,
        "queue_url": reverse("reviews:queue"),
        "viewer": str(Actor.reviewer(request.user)),
        "undo_seconds": UNDO_SECONDS,
        "claim_sizes": CLAIM_SIZES,
        "reject_reasons": request.tenant.reject_reasons,
        **extra,
    }


def _candidate_or_404(tenant, pk: int) -> Candidate:
    candidate = (
        Candidate.objects.filter(tenant=tenant, pk=pk).select_related("subject", "entity", "conflict_fact").first()
    )
    if candidate is None:
        raise Http404
    return candidate


# --- Decisions --------------------------------------------------------------------------------


class DecisionForm(forms.Form):
    version = forms.IntegerField(min_value=1)
    value = forms.CharField(required=False, strip=False, max_length=4000)
    note = forms.CharField(required=False, max_length=2000)
    # One of the tenant's reject reasons (Tenant.reject_reasons); the note adds to it.
    reason_label = forms.CharField(required=False, max_length=200)
    resolution = forms.ChoiceField(choices=[(r, r) for r in Resolution.ALL], required=False)


DONE_MESSAGES = {
    ReviewDecision.APPROVE: gettext_lazy("Approved: %(field)s = “%(value)s” is published."),
    ReviewDecision.EDIT: gettext_lazy("Edited and approved: %(field)s = “%(value)s” is published."),
    ReviewDecision.REJECT: gettext_lazy("Rejected: %(field)s = “%(value)s”."),
    ReviewDecision.DEFER: gettext_lazy("Sent to %(user)s to confirm: %(field)s = “%(value)s”. It waits for them now."),
}
# A settlement says which outcome it chose, naming the value that is published now.
SETTLED_MESSAGES = {
    Resolution.KEEP_OLD: gettext_lazy(
        "Kept the current value: %(field)s = “%(published)s” stays published; “%(value)s” was rejected."
    ),
    Resolution.TAKE_NEW: gettext_lazy("Took the proposed value: %(field)s = “%(published)s” is published."),
    Resolution.EDIT: gettext_lazy("Published the merged value: %(field)s = “%(published)s”."),
    Resolution.KEEP_BOTH: gettext_lazy("Kept both: %(field)s = “%(published)s” and “%(current)s” are published."),
}


def done_message(kind: ReviewDecision, decided: Candidate, *, resolution: str = "") -> str:
    """What a decision did, naming the value that is published now (``resolution``: how a
    settlement settled)."""
    conflict = Fact.objects.filter(pk=decided.conflict_fact_id).only("value").first() if decided.conflict_fact_id else None
    published = Fact.objects.filter(pk=decided.fact_id).only("value").first() if decided.fact_id else None
    if kind == ReviewDecision.SETTLE and resolution == Resolution.KEEP_OLD:
        published = conflict
    message = SETTLED_MESSAGES[resolution] if kind == ReviewDecision.SETTLE else DONE_MESSAGES[kind]
    return message % {
        "field": decided.field,
        "value": decided.value,
        "user": decided.subject.user_id,
        "published": published.value if published else decided.value,
        "current": conflict.value if conflict else "",
    }


def stale_message(candidate: Candidate, *, opened: bool = False) -> str:
    """Who decided first and what they decided, for the reviewer who came second: whose
    decision was refused, or who only opened the item (nothing of theirs was sent)."""
    if candidate.is_open or candidate.reason in (Reason.SAME_AS_PUBLISHED, Reason.NEWER_CANDIDATE):
        return rejudged_message(candidate, opened=opened)
    who = actor_names([candidate.decided_by]).get(candidate.decided_by) or _("someone")
    text = _(
        "%(who)s decided this item first: %(status)s (%(field)s = “%(value)s”) at %(when)s. "
        "It is shown as it is now."
    ) if opened else _(
        "%(who)s decided this item first: %(status)s (%(field)s = “%(value)s”) at %(when)s. "
        "Your decision was not applied."
    )
    return text % {
        "who": who,
        "status": candidate.get_status_display(),
        "field": candidate.field,
        "value": candidate.value,
        "when": formats.localize(timezone.localtime(candidate.decided_at)) if candidate.decided_at else "—",
    }


def rejudged_message(candidate: Candidate, *, opened: bool = False) -> str:
    """The published value of the item's field changed after it was shown: it was judged
    again (a conflict with the value published now, or closed), naming that value."""
    current = stale_details(candidate).get("current_value")
    if current is None:
        text = _("Nothing is published for %(field)s any more; this item was judged again.")
    elif candidate.is_open:
        text = _("The published value of %(field)s changed to “%(current)s”; this item was judged again.")
    else:
        text = _("%(field)s = “%(current)s” was published meanwhile; this item was closed (%(status)s).")
    tail = _("It is shown as it is now.") if opened else _("Your decision was not applied.")
    return "%s %s" % (
        text % {"field": candidate.field, "current": current, "status": candidate.get_status_display()},
        tail,
    )


def error_message(error: DomainError) -> str:
    """A domain error in the reviewer's language, chosen by its code and details."""
    details = error.details or {}
    if isinstance(error, InvalidInput):
        if details.get("reason") == "required":
            return _("A reason is required to reject.")
        if details.get("reason_label") == "unknown":
            return _("Pick one of the tenant's reject reasons.")
        value_problem = details.get("value")
        if value_problem == "empty":
            return _("The value cannot be empty.")
        if value_problem == "too_long":
            return _("The value is too long.")
        if value_problem == "secret_detected":
            return _("The value looks like a credential; credentials are never stored.")
        if value_problem == "required":
            return _("Write the value to keep.")
        if details.get("body") == "empty":
            return _("Write something first: an empty comment is not posted.")
        if details.get("body") == "too_long":
            return _("A comment is at most %(count)d characters.") % {"count": MAX_COMMENT_LENGTH}
        if details.get("items") == "empty":
            return _("Select at least one item.")
        if details.get("items") == "too_many":
            return _("Too many items selected at once.")
        return _("That input is not valid.")
    if isinstance(error, InvalidTransition):
        if "status" in details:
            return _("This item is no longer open (it is %(status)s).") % {
                "status": CandidateStatus(details["status"]).label if details["status"] in CandidateStatus.values else details["status"]
            }
        if "field" in details:
            return _("The tenant's schema no longer allows this field.")
        return _("Both values can be kept only on a field that holds many values.")
    if isinstance(error, NotFound):
        return _("That item does not exist.")
    return _("That did not work.")


def _no_options(data: dict) -> dict:
    return {}


def _decide(request, pk: int, kind: ReviewDecision, service, options=_no_options):
    """Run one decision: parse the form, call the service, tell the reviewer what happened.

    ``options(cleaned_data)`` gives the service's arguments beyond the ones every decision
    takes (tenant, candidate, version, note, actor). A decision that went through offers
    its undo for UNDO_SECONDS (a toast with htmx, the message otherwise). With htmx a refusal
    is the item with its notice under a 4xx status: 409 when the item moved on (decided by
    someone else, no longer open), 400 for bad input; the page's script swaps both in.
    """
    form = DecisionForm(request.POST)
    notice_level, notice, undo_ids, status = Notice.SUCCESS, "", [], 200
    if not form.is_valid():
        notice_level, notice, status = Notice.ERROR, _("The form was incomplete; reload the page and try again."), 400
    else:
        data = form.cleaned_data
        actor = Actor.reviewer(request.user)
        try:
            decided = service(
                tenant=request.tenant,
                candidate_id=pk,
                version=data["version"],
                note=data["note"],
                actor=actor,
                **options(data),
            )
        except StaleVersion:
            notice_level, notice, status = Notice.STALE, stale_message(_candidate_or_404(request.tenant, pk)), 409
        except NotFound:
            raise Http404 from None
        except DomainError as error:
            notice_level, notice = Notice.ERROR, error_message(error)
            status = 400 if isinstance(error, InvalidInput) else 409
        else:
            if kind == ReviewDecision.APPROVE and decided.reason == Reason.REVIEWER_EDITED:
                kind = ReviewDecision.EDIT
            notice = done_message(kind, decided, resolution=data["resolution"])
            undo_ids = [decided.pk]
            candidates_claims_renew(tenant=request.tenant, actor=actor)
    if request.htmx:
        return _item_response(request, pk, notice=notice, notice_level=notice_level, undo_ids=undo_ids, status=status)
    _flash(request, notice_level, notice)
    return redirect(_back(request, reverse("reviews:queue")))


def _item_response(request, pk: int, *, notice: str, notice_level: str, undo_ids=(), status: int = 200):
    """The item as it is now, the toast (out of band) saying what happened, and the page's
    headline and "Release mine" counted again for the page's filters (out of band): after
    ten decisions the headline no longer says what it said before them."""
    candidate = _candidate_or_404(request.tenant, pk)
    viewer = str(Actor.reviewer(request.user))
    here = _back(request, reverse("reviews:queue"))
    _form, filters = _queue_filters(QueryDict(urlsplit(here).query), request.tenant)
    query = QueryDict(urlsplit(here).query, mutable=True)
    query.pop("cursor", None)
    # Decided on the item's own page: its history below gains the decision's event too
    # (out of band, as after a comment), so the page does not need a reload to show it.
    on_item_page = urlsplit(here).path == reverse("reviews:candidate", args=[candidate.pk])
    return render(
        request,
        "reviews/queue.html#item_and_toast",
        _item_context(
            request,
            here=here,
            item=review_queue_items(tenant=request.tenant, candidates=[candidate], viewer=viewer)[0],
            notice=notice,
            notice_level=notice_level,
            undo_ids=list(undo_ids),
            history=candidate_history(candidate=candidate) if on_item_page else None,
            **_counts_context(request, filters, filter_query=query.urlencode()),
        ),
        status=status,
    )


@decider_view
def approve(request, pk: int):
    """Approve; with a changed value it is edit-then-approve."""
    return _decide(
        request, pk, ReviewDecision.APPROVE, candidate_approve, lambda data: {"value": data["value"] if data["value"].strip() else None}
    )


@decider_view
def reject(request, pk: int):
    return _decide(
        request, pk, ReviewDecision.REJECT, candidate_reject, lambda data: {"reason_label": data["reason_label"]}
    )


@decider_view
def defer(request, pk: int):
    return _decide(request, pk, ReviewDecision.DEFER, candidate_defer)


def _settlement(data: dict) -> dict:
    if not data["resolution"]:
        raise InvalidInput("Choose how to settle.", details={"resolution": "required"})
    return {
        "resolution": data["resolution"],
        "value": data["value"] if data["resolution"] == Resolution.EDIT else None,
    }


@decider_view
def settle(request, pk: int):
    return _decide(request, pk, ReviewDecision.SETTLE, candidate_settle_conflict, _settlement)


UNDO_REFUSALS = {
    UndoRefused.NOTHING: gettext_lazy("There is no decision of yours on this item to undo."),
    UndoRefused.EXPIRED: gettext_lazy(
        "Too late to undo: a decision can be undone for %(seconds)s seconds. Decide the item again instead."
    ),
    UndoRefused.MOVED: gettext_lazy(
        "Not undone: the item or its fact changed after your decision (someone or something else acted on it)."
    ),
}


def undo_refusal_message(error: InvalidTransition) -> str:
    return UNDO_REFUSALS.get((error.details or {}).get("undo"), UNDO_REFUSALS[UndoRefused.NOTHING]) % {
        "seconds": UNDO_SECONDS
    }


@decider_view
def undo(request, pk: int):
    """Take back one's own decision on an item (the toast's Undo, key u)."""
    try:
        restored = candidate_undo(tenant=request.tenant, candidate_id=pk, actor=Actor.reviewer(request.user))
    except NotFound:
        raise Http404 from None
    except InvalidTransition as error:
        notice_level, notice = Notice.ERROR, undo_refusal_message(error)
    else:
        notice_level = Notice.SUCCESS
        notice = _("Undone: %(field)s = “%(value)s” is back to %(status)s.") % {
            "field": restored.field,
            "value": restored.value,
            "status": restored.get_status_display(),
        }
    if request.htmx:
        return _item_response(request, pk, notice=notice, notice_level=notice_level)
    _flash(request, notice_level, notice)
    return redirect(_back(request, reverse("reviews:queue")))


@decider_view
def undo_bulk(request):
    """Take back a bulk decision: each item of it that can still be undone."""
    form = UndoBulkForm(request.POST)
    if not form.is_valid():
        return _refused(request, _form_error(form))
    undone, refused = [], []
    for candidate_id in form.cleaned_data["ids"]:
        try:
            candidate_undo(tenant=request.tenant, candidate_id=candidate_id, actor=Actor.reviewer(request.user))
        except (NotFound, InvalidTransition):
            refused.append(candidate_id)
        else:
            undone.append(candidate_id)
    if undone:
        messages.success(request, _("Undone: %(count)d items are back in the queue.") % {"count": len(undone)})
    if refused:
        messages.error(
            request,
            _("%(count)d items could not be undone (too late, or changed since): %(ids)s.")
            % {"count": len(refused), "ids": ", ".join(f"#{pk}" for pk in refused)},
        )
    return redirect(_back(request, reverse("reviews:queue")))


def _form_error(form: forms.Form) -> str:
    """The first reason a form gave, for a notice that has room for one."""
    return next(iter(form.errors.values()))[0]


def _refused(request, notice: str):
    """Input refused before anything was done: the reason in the toast (400) with htmx, else
    as the message of the page the form goes back to."""
    if request.htmx:
        return render(request, "reviews/bulk.html#refused", {"notice": notice}, status=400)
    _flash(request, Notice.ERROR, notice)
    return redirect(_back(request, reverse("reviews:queue")))


@decider_view
def claim(request):
    """Claim the next N items of the current filters (key c), or give one's claims back.

    With htmx the answer is the queue region for those filters (the claims on the cards, the
    counts) and, out of band, the toast and the "Release mine" button; otherwise a redirect
    back with the message.
    """
    actor = Actor.reviewer(request.user)
    level, status = Notice.SUCCESS, 200
    form = ClaimForm(request.POST)
    if not form.is_valid():
        level, status, notice = Notice.ERROR, 400, _form_error(form)
    elif form.cleaned_data["release"]:
        released = candidates_release(tenant=request.tenant, actor=actor)
        notice = _("Released %(count)d claimed items.") % {"count": len(released)}
    else:
        _form, filters = _queue_filters(request.POST, request.tenant)
        try:
            claimed = candidates_claim(
                tenant=request.tenant, actor=actor, count=form.cleaned_data["count"], filters=filters
            )
        except InvalidInput:
            level, status, notice = Notice.ERROR, 400, _("Choose how many items to claim.")
        else:
            if claimed:
                notice = _("Claimed %(count)d items for %(minutes)s minutes; colleagues do not see them meanwhile.") % {
                    "count": len(claimed), "minutes": f"{settings.MEMORY_REVIEW_CLAIM_MINUTES:g}"}
            else:
                level, notice = Notice.STALE, _("Nothing left to claim in these filters.")
    back = _back(request, reverse("reviews:queue"))
    if not request.htmx:
        _flash(request, level, notice)
        return redirect(back)
    # The queue page the claim was made on (its address, as the filter form last pushed it),
    # from its first page.
    query = QueryDict(urlsplit(back).query, mutable=True)
    query.pop("cursor", None)
    here = f"{urlsplit(back).path}?{query.urlencode()}" if query else urlsplit(back).path
    # Counted at once: the claim has just changed "claimed by you" and "Release mine".
    context = _queue_context(request, query, here=here, defer_counts=False)
    context.update(claim_notice=notice, claim_level=level)
    return render(request, "reviews/queue.html#claimed", context, status=status)


# Above this many items a bulk decision asks once more, naming the count: with the whole
# filter selected, most of the items are not on the reviewer's screen.
BULK_CONFIRM_ABOVE = 50


@require_GET
@staff_view
def bulk_select(request):
    """"Select all in this filter": every open item of the filters, each with its version now.

    With htmx the selection goes into the bulk bar (hidden inputs); without JavaScript it is
    a page of its own with the same bar.
    """
    _require_decider(request)
    _form, filters = _queue_filters(request.GET, request.tenant)
    selection = queue_selection(
        tenant=request.tenant, filters=filters, limit=MAX_BULK_ITEMS, viewer=str(Actor.reviewer(request.user))
    )
    query = request.GET.urlencode()
    context = {
        "selection_values": [f"{pk}:{version}" for pk, version in selection],
        "here": f"{reverse('reviews:queue')}?{query}" if query else reverse("reviews:queue"),
    }
    if request.htmx:
        return render(request, "reviews/bulk.html#selection", context)
    return render(request, "reviews/bulk.html", context)


def bulk_notices(decision: str, outcome) -> tuple[str, list[tuple[str, str]]]:
    """What a bulk decision did: a summary, and one line per item it left alone."""
    if outcome.decided:
        done = ngettext("Approved %(count)d item.", "Approved %(count)d items.", len(outcome.decided)) if decision == BulkDecision.APPROVE \
            else ngettext("Rejected %(count)d item.", "Rejected %(count)d items.", len(outcome.decided))
        summary = done % {"count": len(outcome.decided)}
    else:
        summary = _("Nothing was decided.")
    details = []
    names = actor_names({item.get("decided_by", "") for item in outcome.stale})
    for item in outcome.stale:
        if item.get("status") in OPEN_CANDIDATE_STATUSES or item.get("decided_by") == str(POLICY):
            details.append((
                Notice.STALE,
                _("Item #%(id)s was judged again: the published value is now “%(current)s”; it was left as it was.")
                % {"id": item["id"], "current": item.get("current_value") or "—"},
            ))
            continue
        details.append((
            Notice.STALE,
            _("Item #%(id)s was already decided by %(who)s (%(status)s); it was left as it was.")
            % {"id": item["id"], "who": names.get(item.get("decided_by", "")) or _("someone"), "status": item.get("status", "")},
        ))
    if outcome.failed:
        details.append((
            Notice.ERROR,
            _("%(count)d items could not be decided: %(ids)s.")
            % {"count": len(outcome.failed), "ids": ", ".join(f"#{item['id']}" for item in outcome.failed)},
        ))
    return summary, details


def _page_filters(request) -> tuple[QueueFilters, str]:
    """The filters of the queue page an htmx request came from (its address, as pushed)."""
    query = QueryDict(urlsplit(request.htmx.current_url or "").query)
    return _queue_filters(query, request.tenant)[1], query.urlencode()


@decider_view
def bulk(request):
    """Approve or reject a selection: the ticked items and "select all in this filter".

    Each item is checked against the version the reviewer was shown (or, for select-all,
    the version when it was selected). Above BULK_CONFIRM_ABOVE items the reviewer confirms
    the count first. A refusal leaves the selection as it was.
    """
    form = BulkDecisionForm(request.POST)
    valid = form.is_valid()
    data = form.cleaned_data
    versions = data.get("versions", {})
    decision = data.get("decision", "")
    context = _item_context(
        request,
        here=_back(request, reverse("reviews:queue")),
        selection_values=[f"{pk}:{version}" for pk, version in versions.items()],
        count=len(versions),
    )
    if not valid:
        return _bulk_refused(request, context, error=_form_error(form), status=400)
    try:
        bulk_request = {
            "items": list(versions.items()),
            "decision": decision,
            "note": data["note"],
            "actor": Actor.reviewer(request.user),
        }
        check_bulk_decision(**bulk_request)  # a refusal comes before the question
        if len(versions) > BULK_CONFIRM_ABOVE and data["confirmed"] != f"{decision}:{len(versions)}":
            return _bulk_refused(request, context, confirm=decision)
        outcome = candidates_bulk_decide(
            tenant=request.tenant, confirmed_flagged=data["confirm_flagged"], **bulk_request
        )
    except DomainError as error:
        return _bulk_refused(request, context, error=error_message(error))
    summary, details = bulk_notices(decision, outcome)
    if not request.htmx:
        _flash(request, Notice.SUCCESS if outcome.decided else Notice.STALE, summary)
        for level, text in details:
            _flash(request, level, text)
        return redirect(context["here"])
    candidates_claims_renew(tenant=request.tenant, actor=Actor.reviewer(request.user))
    filters, filter_query = _page_filters(request)
    shown = {pk for pk, _version in data["selected"]}
    changed = shown & ({*outcome.decided} | {item["id"] for item in outcome.stale})
    viewer = str(Actor.reviewer(request.user))
    context.update(
        _counts_context(request, filters, filter_query=filter_query),
        summary=summary,
        details=details,
        decided_ids=outcome.decided,
        lazy_bodies=True,
        toast_level=Notice.SUCCESS if outcome.decided else Notice.STALE,
        items=review_queue_items(
            tenant=request.tenant,
            candidates=list(Candidate.objects.filter(tenant=request.tenant, pk__in=changed).select_related(
                "subject", "entity", "conflict_fact")),
            viewer=viewer,
            lazy_bodies=True,
        ),
    )
    return render(request, "reviews/bulk.html#outcome", context)


def _bulk_refused(request, context: dict, *, error: str = "", confirm: str = "", status: int = 200):
    """An error or the confirmation question: with htmx under the bar (the selection on the
    page stays as it is), otherwise the bulk page holding the whole selection. Input the
    form refuses is a 400; the service's refusals (a reason to reject, an empty selection)
    answer 200 as they always have."""
    context.update(error=error, confirm=confirm)
    if request.htmx:
        return render(request, "reviews/bulk.html#status", context, status=status)
    return render(request, "reviews/bulk.html", context, status=status)


# --- Entities ---------------------------------------------------------------------------------


def _entity_or_404(tenant, pk: int) -> Entity:
    entity = Entity.objects.filter(tenant=tenant, pk=pk).select_related("subject").first()
    if entity is None:
        raise Http404
    return entity


@require_GET
@staff_view
def entity_detail(request, pk: int):
    entity = _entity_or_404(request.tenant, pk)
    return render(
        request,
        "reviews/entity.html",
        {
            "entity": entity,
            "aliases": list(entity.aliases.order_by("alias")),
            "facts": list(Fact.objects.filter(entity=entity).order_by("status", "field", "-updated_at")),
            "candidates": list(
                Candidate.objects.filter(entity=entity, status__in=OPEN_CANDIDATE_STATUSES)
                .order_by("created_at", "id")[:100]
            ),
            "merge_targets": list(
                Entity.objects.filter(subject=entity.subject, entity_type=entity.entity_type)
                .exclude(pk=entity.pk)
                .order_by("entity_id")
            ),
            "can_decide": request.can_decide,
            "active": FactStatus.ACTIVE,
        },
    )


@decider_view
def entity_merge_view(request, pk: int):
    """Merge this entity into another of the same subject and type."""
    source = _entity_or_404(request.tenant, pk)
    try:
        target_id = int(request.POST.get("target", ""))
    except ValueError:
        messages.error(request, _("Choose the entity to merge into."))
        return redirect("reviews:entity", pk=source.pk)
    try:
        target = entity_merge(
            tenant=request.tenant, source_id=source.pk, target_id=target_id, actor=Actor.reviewer(request.user)
        )
    except NotFound:
        raise Http404 from None
    except DomainError:
        messages.error(request, _("Only two different entities of the same user and type can be merged."))
        return redirect("reviews:entity", pk=source.pk)
    messages.success(
        request, _("Merged %(source)s into %(target)s.") % {"source": source.ref, "target": target.ref}
    )
    return redirect("reviews:entity", pk=target.pk)
