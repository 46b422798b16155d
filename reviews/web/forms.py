"""Form fields the pages share, so each rule about an input is written once.

A page's GET parameters and POST fields are cleaned by a Django form before anything reads
them; these fields carry the rules of SPEC §1 that the API's fields and the service
boundary (reviews/services/boundary.py) apply too, from reviews/policy/identifiers.py. A value
that breaks one is a form error beside its field (a 400), never a query the database
refuses (a 500) nor a service's refusal nobody catches.
"""
from __future__ import annotations

import re

from django import forms
from django.core.validators import ProhibitNullCharactersValidator
from django.utils.translation import gettext_lazy

from ..policy.identifiers import MAX_IDENTIFIER_LENGTH, identifier_problem, page_refusal
from ..models import BulkDecision
from ..services.candidates import MAX_BULK_ITEMS
from ..services.claims import MAX_CLAIM


def _check_identifier(value: str, name: str) -> None:
    problem = identifier_problem(value)
    if problem is not None:
        raise forms.ValidationError(page_refusal(problem, name), code=problem)


class IdentifierField(forms.CharField):
    """One of the host application's ids (``user_id``, ``thread_id``): 1–128 printable
    characters, no credential inside. Empty is the field's ``required`` to decide. ``name``
    (a lazy translation) says in the refusal what was refused."""

    def __init__(self, *, name=gettext_lazy("The id"), **kwargs):
        self.name = name
        kwargs.setdefault("max_length", MAX_IDENTIFIER_LENGTH)
        super().__init__(**kwargs)

    def validate(self, value):
        super().validate(value)
        if value not in self.empty_values:
            _check_identifier(value, self.name)


class EntityRefField(forms.CharField):
    """An entity written ``type:id`` (``project:flask-migration``): both parts follow the
    identifier rule, the id as the host application's id, the type as a schema name."""

    MALFORMED = gettext_lazy("An entity is written type:id, e.g. project:flask-migration.")

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64 + 1 + MAX_IDENTIFIER_LENGTH)
        super().__init__(**kwargs)

    def validate(self, value):
        super().validate(value)
        if value in self.empty_values:
            return
        entity_type, colon, entity_id = value.partition(":")
        if not colon or not entity_type.strip() or not entity_id.strip():
            raise forms.ValidationError(self.MALFORMED, code="malformed")
        _check_identifier(entity_type, gettext_lazy("The entity's type"))
        _check_identifier(entity_id, gettext_lazy("The entity's id"))


# --- The queue's bulk, undo and claim forms ----------------------------------------------------
# They used to read request.POST by hand: a malformed id was dropped without a word, a
# digit that is not ASCII ("²".isdigit()) reached int() and answered 500, and a list over
# the cap was cut short. Each refusal is a form error now, with its reason, before anything
# is written.

# Only ASCII digits: str.isdigit() and re's \d accept other scripts' digits too. The bounds
# keep a number inside the database's bigint (ids) and integer (versions).
_CANDIDATE_ID = re.compile(r"[0-9]{1,18}", re.ASCII)
_SELECTED = re.compile(r"([0-9]{1,18}):([0-9]{1,9})", re.ASCII)


class _ListField(forms.Field):
    """Every value a form sends under one name (hidden inputs, ticked boxes), each checked
    by ``parse``; a list longer than ``max_items`` is refused whole, never cut short."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {
        "malformed": gettext_lazy(
            "That input is not valid. The selection is malformed; reload the page and try again."
        ),
        "too_many": gettext_lazy("Too many items selected at once."),
    }

    def __init__(self, *, max_items: int, **kwargs):
        self.max_items = max_items
        super().__init__(**kwargs)

    def parse(self, value: str):
        raise NotImplementedError

    def to_python(self, value) -> list:
        if value in self.empty_values:
            return []
        if not isinstance(value, (list, tuple)):
            value = [value]
        if len(value) > self.max_items:
            raise forms.ValidationError(self.error_messages["too_many"], code="too_many")
        parsed = [self.parse(item) if isinstance(item, str) else None for item in value]
        if any(item is None for item in parsed):
            raise forms.ValidationError(self.error_messages["malformed"], code="malformed")
        return parsed


class CandidateIdsField(_ListField):
    """Candidate ids (``ids``): positive whole numbers."""

    def parse(self, value: str) -> int | None:
        return int(value) if _CANDIDATE_ID.fullmatch(value) and int(value) > 0 else None


class SelectionField(_ListField):
    """A bulk selection: each item ``id:version``, the version the reviewer was shown."""

    def parse(self, value: str) -> tuple[int, int] | None:
        match = _SELECTED.fullmatch(value)
        return (int(match.group(1)), int(match.group(2))) if match else None


class BulkDecisionForm(forms.Form):
    """Approve or reject a selection: the ticked items (``selected``) and "select all in
    this filter" (``selected_all``). What a bulk decision needs beyond its shape (a reason
    to reject, at least one item) the service checks (check_bulk_decision), as for the API."""

    selected = SelectionField(max_items=MAX_BULK_ITEMS, required=False)
    selected_all = SelectionField(max_items=MAX_BULK_ITEMS, required=False)
    decision = forms.ChoiceField(
        choices=BulkDecision.choices,
        error_messages={
            "required": gettext_lazy("Choose approve or reject."),
            "invalid_choice": gettext_lazy("Choose approve or reject."),
        },
    )
    # Free text the service screens like every reviewer note (a NUL or a credential is its
    # refusal, shown under the bulk bar), so the form does not refuse a NUL a second way.
    note = forms.CharField(required=False, strip=False, max_length=2000)
    confirmed = forms.CharField(required=False, max_length=64)
    # The flagged items (hidden characters, a look-alike, an instruction) the reviewer
    # confirmed one by one: bulk approval leaves any other flagged item waiting.
    confirm_flagged = forms.Field(required=False, widget=forms.MultipleHiddenInput)

    def clean_confirm_flagged(self):
        values = self.cleaned_data.get("confirm_flagged") or ()
        if not all(isinstance(value, str) and value.isascii() and value.isdigit() for value in values):
            raise forms.ValidationError(gettext_lazy("A confirmed item is named by its number."))
        return frozenset(int(value) for value in values)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["note"].validators = [
            validator for validator in self.fields["note"].validators
            if not isinstance(validator, ProhibitNullCharactersValidator)
        ]

    def clean(self):
        data = super().clean()
        if "selected" in data and "selected_all" in data:
            # One version per item; a ticked box (what the reviewer saw) wins over select-all's.
            versions = dict(data["selected_all"]) | dict(data["selected"])
            if len(versions) > MAX_BULK_ITEMS:
                raise forms.ValidationError(SelectionField.default_error_messages["too_many"], code="too_many")
            data["versions"] = versions
        return data


class UndoBulkForm(forms.Form):
    """Take back a bulk decision: the ids its toast lists."""

    ids = CandidateIdsField(
        max_items=MAX_BULK_ITEMS, error_messages={"required": gettext_lazy("There is nothing to undo.")}
    )


class ClaimForm(forms.Form):
    """Claim the next ``count`` items of the filters the form repeats, or give them back
    (``release``). The filters are the queue's own form's to clean (QueueFilterForm)."""

    DEFAULT_COUNT = 10  # what the claim form's menu starts on

    release = forms.BooleanField(required=False)
    count = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_CLAIM,
        error_messages={
            key: gettext_lazy("Choose how many items to claim.")
            for key in ("invalid", "min_value", "max_value")
        },
    )

    def clean_count(self) -> int:
        count = self.cleaned_data["count"]
        return self.DEFAULT_COUNT if count is None else count
