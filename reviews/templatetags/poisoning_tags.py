"""Template filters that feed templates/reviews/_revealed_text.html (SPEC §3 "Poisoning")."""
from django import template

from ..poisoning.reveal import revealed_segments

register = template.Library()


@register.filter
def revealed(value, field: str = ""):
    """Segments of a candidate's ``field`` (its escaped original from ``flag_details``), or
    of a plain text (a fact's value, an audit entry), for ``_revealed_text.html``."""
    if field and hasattr(value, "flag_details"):
        details = value.flag_details or {}
        text = getattr(value, field if field != "entity_name" else "entity_ref_id", "") or ""
        return revealed_segments(text, escaped=details.get(field, ""), confusable=details.get("confusable", ()))
    return revealed_segments("" if value is None else str(value))
