"""The subject's self-service pages, "my memories" (SPEC §4).

A redeemed link binds the browser session to one subject of one tenant
(:func:`reviews.permissions.portal_subject`); every view reads the subject from there
and passes ``user_id`` to the services, which refuse anything that is not that subject's
(another subject's id is simply not found: 404). Views parse, call a service, render; on
``request.htmx`` they answer with the named partial instead of the page.
"""
from __future__ import annotations

from functools import wraps

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..actors import Actor
from ..errors import DomainError, NotFound, Unavailable
from ..web.forms import EntityRefField, IdentifierField
from ..labels import labels_cached_on
from ..permissions import PORTAL_SESSION_KEY, portal_binding, portal_subject
from ..selectors.portal import (
    conversation_label,
    entity_label,
    describe_counts,
    describe_erasure,
    erasure_preview,
    MAX_SEARCH_LENGTH,
    subject_deletions,
    subject_explanation,
    subject_fact,
    subject_fact_editor,
    subject_memories,
    subject_scopes,
    subject_waiting,
    subject_waiting_count,
    subject_waiting_item,
)
from ..services.candidates import Resolution, candidate_approve, candidate_reject, candidate_settle_conflict
from ..services.deletions import (
    due_deletions_carry_out,
    fact_deletion_schedule,
    fact_deletion_undo,
    fact_erase_preview,
)
from ..services.erasure import facts_delete, subject_erase
from ..services.facts import fact_edit
from ..services.portal import (
    PortalLinkRefused,
    fact_contest,
    fact_value_add,
    portal_link_check,
    portal_link_redeem,
    subject_export,
    subject_set_paused,
)

RECEIPT_SESSION_KEY = "portal_receipt"
SAVED_SESSION_KEY = "portal_saved_fact"
# A portal session outlives a closed tab for a while, but not a day on a shared device.
PORTAL_SESSION_SECONDS = 2 * 3600
KEEP_RETENTION, KEEP_UNTIL_DELETED = "retention", "forever"
# What the services may tell a subject; pages translate an error's message by its text.
SERVICE_MESSAGES = [
    gettext_noop("Someone else decided this item first."),
    gettext_noop("This item is waiting for a reviewer, not for you."),
    gettext_noop("This item changed since you loaded it: look at it again before deciding."),
    gettext_noop("This item was closed: the value it proposes is published now."),
    gettext_noop("This item was closed: a newer value for its field was published."),
    gettext_noop("The value cannot be empty."),
    gettext_noop("The value is longer than 1000 characters."),
    gettext_noop("The value contains a null character."),
    gettext_noop("The value looks like a credential; credentials are never stored."),
    gettext_noop("This fact changed since you loaded it."),
    gettext_noop("Another fact already holds this value."),
    gettext_noop("Write the value to keep."),
    gettext_noop("The tenant's schema no longer allows this field."),
    gettext_noop("Only a fact a reviewer approved can be contested; edit or delete this one directly."),
    gettext_noop("Too late to undo: this memory is already deleted."),
    gettext_noop("A relation points to one of your entries: choose one, or create it."),
    gettext_noop("Choose the kind of the new entry."),
    gettext_noop("This kind of memory holds one value: correct it instead."),
    gettext_noop("Memory is paused: resume it to add something."),
    gettext_noop("You deleted this value before, so we do not keep it again."),
    gettext_noop("This value cannot be added."),
]
SCOPE_LABELS = {
    "thread_id": gettext_lazy("Conversation"),
    "entity": gettext_lazy("About"),
    "field": gettext_lazy("Field"),
    "fact_id": gettext_lazy("Memory"),
    "user_id": gettext_lazy("Your id"),
    "all": gettext_lazy("Everything"),
}


# --- Forms: parsing only --------------------------------------------------------------------


class VersionForm(forms.Form):
    version = forms.IntegerField(min_value=1)


class ConfirmForm(VersionForm):
    keep = forms.ChoiceField(choices=[(KEEP_RETENTION, KEEP_RETENTION), (KEEP_UNTIL_DELETED, KEEP_UNTIL_DELETED)],
                             required=False)
    value = forms.CharField(required=False, strip=True, max_length=5000)


class CorrectForm(ConfirmForm):
    value = forms.CharField(required=True, strip=True, max_length=5000)


class SettleForm(VersionForm):
    resolution = forms.ChoiceField(choices=[(r, r) for r in (Resolution.KEEP_OLD, Resolution.TAKE_NEW, Resolution.EDIT)])
    value = forms.CharField(required=False, strip=True, max_length=5000)


class FactEditForm(forms.Form):
    # Empty is the service's to refuse, and fine when a relation points to a new entry.
    value = forms.CharField(required=False, strip=True, max_length=5000)
    version = forms.IntegerField(min_value=1, required=False)
    new_entity_type = forms.CharField(required=False, max_length=64)
    new_entity_name = forms.CharField(required=False, strip=True, max_length=5000)


class FactAddForm(FactEditForm):
    version = None


class NoteForm(forms.Form):
    note = forms.CharField(required=False, strip=True, max_length=1000)


class ScopeForm(forms.Form):
    thread_id = IdentifierField(name=gettext_lazy("The conversation"), required=False)
    entity = EntityRefField(required=False)
    field = forms.CharField(required=False, max_length=80)

    def clean(self):
        data = super().clean()
        if not any(data.get(name) for name in ("thread_id", "entity", "field")):
            raise forms.ValidationError(gettext_lazy("Choose a conversation, a topic or a kind of memory."))
        return data


class PauseForm(forms.Form):
    paused = forms.TypedChoiceField(choices=[("1", "1"), ("0", "0")], coerce=lambda v: v == "1")


# What a subject types to confirm "forget me": the phrase in their language (or English).
FORGET_PHRASE = gettext_lazy("forget me")


class ForgetForm(forms.Form):
    confirm_text = forms.CharField(required=False, max_length=100)

    def clean_confirm_text(self):
        typed = " ".join((self.cleaned_data.get("confirm_text") or "").split()).casefold()
        if typed not in {str(FORGET_PHRASE).casefold(), "forget me"}:
            raise forms.ValidationError(
                gettext_lazy("Type %(phrase)s to confirm you want everything deleted."),
                params={"phrase": f"“{FORGET_PHRASE}”"},
            )
        return typed


class InvalidForm(DomainError):
    code = "invalid"
    http_status = 400

    def __init__(self, form: forms.Form):
        errors = [str(e) for field_errors in form.errors.values() for e in field_errors]
        super().__init__(" ".join(errors) or _("Please check the form."), details=form.errors.get_json_data())


def _parse(form_class, data):
    form = form_class(data)
    if not form.is_valid():
        raise InvalidForm(form)
    return form.cleaned_data


# --- The session binding --------------------------------------------------------------------


def subject_required(view):
    """Bind ``request.subject`` and ``request.portal_actor`` or answer the signed-out page.

    Pages are never cached (they show personal data, often on a shared phone): like every
    answer of the app, NoStoreMiddleware marks them ``no-store``.
    """

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        subject = portal_subject(request)
        if subject is None:
            return render(request, "portal/signed_out.html", {"expired": True}, status=403)
        request.subject = subject
        request.portal_actor = Actor.subject(subject.user_id)
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from None

    return wrapper


def _scope(request) -> dict:
    """The keyword arguments that pin a service call to the session's subject."""
    return {"tenant": request.subject.tenant, "user_id": request.subject.user_id, "actor": request.portal_actor}


def _context(request, **extra) -> dict:
    return {"subject": request.subject, "waiting_count": subject_waiting_count(request.subject), **extra}


# --- Entry ----------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def enter(request, token: str):
    """GET shows a button (previews and mail scanners must not spend the link); POST spends it."""
    try:
        if request.method == "GET":
            portal_link_check(token=token)
            response = render(request, "portal/enter.html", {"token": token})
        else:
            link = portal_link_redeem(token=token)
            # A fresh session holding only this subject: whoever was signed in here is not anymore.
            logout(request)
            request.session[PORTAL_SESSION_KEY] = portal_binding(
                tenant_id=link.tenant_id, subject_id=link.subject_id, user_id=link.subject.user_id
            )
            request.session.set_expiry(PORTAL_SESSION_SECONDS)
            response = redirect("reviews:portal_home")
    except PortalLinkRefused as refused:
        response = render(request, "portal/link_refused.html", {"why": refused.why}, status=refused.http_status)
    # The token is in the URL: never send it to another site in a Referer header.
    # ("no-referrer" would also blank the Origin of our own POST, which CSRF checks.)
    response["Referrer-Policy"] = "same-origin"
    response["X-Robots-Tag"] = "noindex"
    return response


@require_POST
def sign_out(request):
    request.session.flush()
    return render(request, "portal/signed_out.html", {"expired": False})


# --- My memories ----------------------------------------------------------------------------


@require_GET
@subject_required
def home(request):
    # Deletions past their undo window are carried out now at the latest (no broker needed).
    due_deletions_carry_out(subject=request.subject)
    deletions = subject_deletions(request.subject)
    q = request.GET.get("q", "").strip()[:MAX_SEARCH_LENGTH]
    sections = subject_memories(request.subject, hide=deletions.scheduled_fact_ids, q=q)
    total = sum(len(section.items) for section in sections)
    context = _context(request, sections=sections, total=total, deletions=deletions, tab="home", q=q,
                       saved=request.session.pop(SAVED_SESSION_KEY, None))
    # The search box swaps the list alone; a plain GET (no JavaScript) gets the whole page.
    template = "portal/home.html#memories" if request.htmx and "q" in request.GET else "portal/home.html"
    return render(request, template, context)


@require_GET
@subject_required
def about(request):
    """What we remember, why, for how long and who can see it: from the tenant's schema."""
    return render(request, "portal/about.html", _context(request, explanation=subject_explanation(request.subject),
                                                         tab="about"))


@require_GET
@subject_required
def deletions_status(request):
    """The deletions panel alone, for htmx to poll while one is scheduled."""
    due_deletions_carry_out(subject=request.subject)
    if not request.htmx:
        return redirect("reviews:portal_home")
    return render(request, "portal/home.html#deletions", _context(request, deletions=subject_deletions(request.subject)))


@require_POST
@subject_required
def deletion_undo(request, deletion_id: int):
    try:
        deletion = fact_deletion_undo(deletion_id=deletion_id, **_scope(request))
    except NotFound:
        raise
    except DomainError as exc:
        messages.error(request, _(exc.message))
        return redirect("reviews:portal_home")
    messages.success(request, _("Undone: we keep this memory."))
    return redirect(f"{reverse('reviews:portal_home')}#fact-{deletion.fact_id}")


def _fact_page(request, fact_id: int, *, error: DomainError | None = None, value: str | None = None, status=200):
    item = subject_fact(request.subject, fact_id)
    context = _context(request, item=item, error=error, value=item.fact.value if value is None else value, tab="home",
                       editor=subject_fact_editor(request.subject, item))
    return render(request, "portal/fact.html", context, status=status)


@require_GET
@subject_required
def fact_detail(request, fact_id: int):
    return _fact_page(request, fact_id)


@require_POST
@subject_required
def fact_correct(request, fact_id: int):
    try:
        data = _parse(FactEditForm, request.POST)
        fact = fact_edit(fact_id=fact_id, value=data["value"], expected_version=data["version"],
                         new_entity_type=data["new_entity_type"], new_entity_name=data["new_entity_name"],
                         **_scope(request))
    except NotFound:
        raise
    except DomainError as exc:
        return _fact_page(request, fact_id, error=exc, value=request.POST.get("value", ""), status=exc.http_status)
    return _saved_in_view(request, fact.pk)


def _saved_in_view(request, fact_id: int):
    """The confirmation shows inside the saved card, where the page scrolls to, not at
    the top of the page out of sight."""
    request.session[SAVED_SESSION_KEY] = fact_id
    return redirect(f"{reverse('reviews:portal_home')}#fact-{fact_id}")


@require_POST
@subject_required
def fact_add(request, fact_id: int):
    """Another value of the same many field (a one field is corrected instead)."""
    try:
        data = _parse(FactAddForm, request.POST)
        candidate = fact_value_add(fact_id=fact_id, value=data["value"], new_entity_type=data["new_entity_type"],
                                   new_entity_name=data["new_entity_name"], **_scope(request))
    except NotFound:
        raise
    except DomainError as exc:
        return _fact_page(request, fact_id, error=exc, status=exc.http_status)
    if candidate.fact_id is None:
        messages.success(request, _("Sent to our team: they check it before we remember it."))
        return redirect("reviews:portal_home")
    return _saved_in_view(request, candidate.fact_id)


@require_http_methods(["GET", "POST"])
@subject_required
def fact_remove(request, fact_id: int):
    """GET: what deleting this fact removes; POST: schedule it (undoable for a while)."""
    if request.method == "POST":
        fact_deletion_schedule(fact_id=fact_id, **_scope(request))
        return redirect("reviews:portal_home")
    item = subject_fact(request.subject, fact_id)
    receipt = fact_erase_preview(fact_id=fact_id, **_scope(request))
    context = _context(request, item=item, reaches=describe_erasure(receipt.as_dict()), tab="home",
                       undo_seconds=settings.MEMORY_UNDO_SECONDS)
    return render(request, "portal/fact_delete.html", context)


@require_POST
@subject_required
def fact_contest_view(request, fact_id: int):
    try:
        data = _parse(NoteForm, request.POST)
        fact_contest(fact_id=fact_id, note=data["note"], **_scope(request))
    except NotFound:
        raise
    except DomainError as exc:
        return _fact_page(request, fact_id, error=exc, status=exc.http_status)
    messages.success(request, _("Sent back to our team. We stop using it until they have looked again."))
    return redirect("reviews:portal_waiting")


# --- Waiting for you ------------------------------------------------------------------------


def _waiting_page(request, *, error: DomainError | None = None, error_item: int | None = None, status=200):
    waiting = subject_waiting(request.subject)
    if error_item not in {item.candidate.pk for item in waiting.questions}:
        error_item = None  # the item is gone (decided meanwhile): say so at the top
    context = _context(request, waiting=waiting, error=error, error_item=error_item, tab="waiting")
    return render(request, "portal/waiting.html", context, status=status)


@require_GET
@subject_required
def waiting(request):
    return _waiting_page(request)


def _item_done(request, candidate_id: int, message: str):
    """htmx swaps the card for a one-line note; a plain form goes back to the list."""
    if request.htmx:
        # The badge in the tabs changes too: swapped out of band, so it never goes stale.
        context = _context(request, message=message, candidate_id=candidate_id)
        return render(request, "portal/waiting.html#item_done", context)
    messages.success(request, message)
    return redirect("reviews:portal_waiting")


def _item_failed(request, candidate_id: int, exc: DomainError):
    if request.htmx:
        try:
            item = subject_waiting_item(request.subject, candidate_id)
        except NotFound:
            context = _context(request, message=_(exc.message), candidate_id=candidate_id)
            return render(request, "portal/waiting.html#item_done", context, status=exc.http_status)
        context = {"item": item, "error": exc, "error_item": candidate_id}
        return render(request, "portal/waiting.html#item", context, status=exc.http_status)
    return _waiting_page(request, error=exc, error_item=candidate_id, status=exc.http_status)


def _decide_item(request, candidate_id: int, action):
    try:
        message = action()
    except NotFound:
        raise
    except DomainError as exc:
        return _item_failed(request, candidate_id, exc)
    return _item_done(request, candidate_id, message)


def _approve(request, candidate_id: int, form_class, done: str):
    def action():
        data = _parse(form_class, request.POST)
        candidate_approve(
            candidate_id=candidate_id,
            version=data["version"],
            value=data["value"] or None,
            keep=data["keep"] == KEEP_UNTIL_DELETED,
            **_scope(request),
        )
        return done

    return _decide_item(request, candidate_id, action)


@require_POST
@subject_required
def item_confirm(request, candidate_id: int):
    return _approve(request, candidate_id, ConfirmForm, _("Thank you: we will remember it."))


@require_POST
@subject_required
def item_correct(request, candidate_id: int):
    return _approve(request, candidate_id, CorrectForm, _("Thank you: we will remember it as you wrote it."))


@require_POST
@subject_required
def item_reject(request, candidate_id: int):
    def action():
        data = _parse(VersionForm, request.POST)
        candidate_reject(candidate_id=candidate_id, version=data["version"], **_scope(request))
        return _("Done: we will not remember it, and will not suggest it again.")

    return _decide_item(request, candidate_id, action)


@require_POST
@subject_required
def conflict_settle(request, candidate_id: int):
    def action():
        data = _parse(SettleForm, request.POST)
        candidate_settle_conflict(
            candidate_id=candidate_id,
            version=data["version"],
            resolution=data["resolution"],
            value=data["value"] or None,
            **_scope(request),
        )
        return _("Settled: we remember the value you chose.")

    return _decide_item(request, candidate_id, action)


# --- Controls -------------------------------------------------------------------------------


@require_GET
@subject_required
def controls(request):
    context = _context(request, scopes=subject_scopes(request.subject), tab="controls")
    return render(request, "portal/controls.html", context)


@require_POST
@subject_required
def pause(request):
    try:
        data = _parse(PauseForm, request.POST)
    except DomainError as exc:
        messages.error(request, _(exc.message))
        return redirect("reviews:portal_controls")
    subject = subject_set_paused(paused=data["paused"], **_scope(request))
    if request.htmx:
        # The "Memory is paused" banner at the top changes with it (out of band).
        return render(request, "portal/controls.html#pause", {"subject": subject, "oob": True})
    if subject.collection_paused:
        messages.success(request, _("Paused. We will not remember anything new until you resume."))
    else:
        messages.success(request, _("Resumed. We will learn from your chats again."))
    return redirect("reviews:portal_controls")


@require_GET
@subject_required
def export(request):
    document = subject_export(**_scope(request))
    response = JsonResponse(document, json_dumps_params={"ensure_ascii": False, "indent": 2})
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="my-memories-{stamp}.json"'
    return response


# The subject is told what happened in their words; the operator's cause is in the log.
UNAVAILABLE_MESSAGE = gettext_lazy(
    "Nothing was deleted: part of the service is unavailable right now. Please try again in a few minutes."
)


@require_http_methods(["GET", "POST"])
@subject_required
def delete_scope(request):
    """GET: what a deletion by conversation, topic or field would remove; POST: do it."""
    source = request.POST if request.method == "POST" else request.GET
    try:
        scope = _parse(ScopeForm, source)
        scope = {name: scope[name] or None for name in ("thread_id", "entity", "field")}
        counts = erasure_preview(request.subject, **scope)
    except NotFound:
        raise
    except DomainError as exc:
        messages.error(request, _(exc.message))
        return redirect("reviews:portal_controls")
    error = None
    if request.method == "POST":
        try:
            receipt = facts_delete(**_scope(request), **scope)
        except Unavailable:  # nothing was deleted: the page says so and offers it again
            error = Unavailable(UNAVAILABLE_MESSAGE)
        else:
            return _show_receipt(request, receipt.as_dict())
    context = _context(request, counts=describe_counts(counts), scope=_describe_scope(request.subject, scope), form_scope=scope,
                       forget=False, tab="controls", error=error)
    return render(request, "portal/erase_confirm.html", context, status=error.http_status if error else 200)


@require_http_methods(["GET", "POST"])
@subject_required
def forget(request):
    """"Forget me": a confirmation naming what goes, then the erasure and its receipt."""
    counts = erasure_preview(request.subject)
    error = None
    if request.method == "POST":
        try:
            _parse(ForgetForm, request.POST)
        except DomainError as exc:
            error = exc
        else:
            try:
                receipt = subject_erase(**_scope(request))
            except Unavailable:  # nothing was erased: the page says so and offers it again
                error = Unavailable(UNAVAILABLE_MESSAGE)
            else:
                return _show_receipt(request, receipt.as_dict())
    context = _context(request, counts=describe_counts(counts), forget=True, error=error, tab="controls",
                       phrase=FORGET_PHRASE)
    return render(request, "portal/erase_confirm.html", context, status=error.http_status if error else 200)


def _describe_scope(subject, scope: dict) -> list[tuple[str, str]]:
    """The scope in the subject's words: a conversation by its first words, never its id."""
    labels = {
        "thread_id": lambda v: conversation_label(subject, v),
        "entity": lambda v: entity_label(None, *v.partition(":")[::2]),
        "field": lambda v: labels_cached_on(subject, subject.tenant).field("user", v),
        "fact_id": lambda v: None,
        "user_id": lambda v: None,
    }
    described = []
    for key, value in scope.items():
        if not value:
            continue
        text = _("yes") if value is True else labels.get(key, str)(value)
        if text is not None:
            described.append((str(SCOPE_LABELS.get(key, key)), text))
    return described


def _show_receipt(request, receipt: dict):
    """Keep the receipt in the session and redirect, so a reload does not delete twice."""
    request.session[RECEIPT_SESSION_KEY] = receipt
    return redirect("reviews:portal_receipt")


@require_GET
@subject_required
def receipt(request):
    data = request.session.get(RECEIPT_SESSION_KEY)
    if not isinstance(data, dict):
        return redirect("reviews:portal_controls")
    context = _context(
        request,
        receipt=data,
        at=parse_datetime(data.get("at") or ""),
        counts=describe_counts(data.get("deleted") or {}),
        redacted=[(key, label, n) for key, label, n in describe_counts(data.get("redacted") or {}) if n],
        scope=_describe_scope(request.subject, data.get("scope") or {}),
        tab="controls",
    )
    return render(request, "portal/receipt.html", context)

