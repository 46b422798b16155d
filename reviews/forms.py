"""Form fields the pages share, so each rule about an input is written once.

A page's GET parameters and POST fields are cleaned by a Django form before anything reads
them; these fields carry the rules of SPEC §1 that the API's fields and the service
boundary (reviews/services/boundary.py) apply too, from reviews/identifiers.py. A value
that breaks one is a form error beside its field (a 400), never a query the database
refuses (a 500) nor a service's refusal nobody catches.
"""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy

from .identifiers import MAX_IDENTIFIER_LENGTH, identifier_problem, refusal_message


def _check_identifier(value: str, name: str) -> None:
    problem = identifier_problem(value)
    if problem is not None:
        raise forms.ValidationError(refusal_message(problem, name), code=problem)


class IdentifierField(forms.CharField):
    """One of the host application's ids (``user_id``, ``thread_id``): 1–128 printable
    characters, no credential inside. Empty is the field's ``required`` to decide."""

    def __init__(self, *, name: str = "The id", **kwargs):
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
        _check_identifier(entity_type, "The entity's type")
        _check_identifier(entity_id, "The entity's id")
