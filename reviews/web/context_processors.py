"""The closed vocabularies templates compare against, by name, in every page's context.

A template that asks ``{% if item.source == Source.CHAT %}`` names the enumeration's member,
so renaming a value changes one place and a misspelt member fails loudly in the tests
(tests/core/test_template_vocabularies.py), where ``== "chat"`` would quietly stop
matching. Django's enumeration types are made to be used so in templates (they are not
called there). Every page is rendered with its request, so every page has them.
"""
from ..models import (
    CandidateStatus,
    DeliveryStatus,
    EntityType,
    ExportStatus,
    MemoryScope,
    Sensitivity,
    Source,
)
from ..selectors.portal import DecidedBy

VOCABULARIES = {
    vocabulary.__name__: vocabulary
    for vocabulary in (
        CandidateStatus, DecidedBy, DeliveryStatus, EntityType, ExportStatus, MemoryScope, Sensitivity, Source,
    )
}


def vocabularies(request) -> dict:
    return VOCABULARIES
