"""How the tenant admin console shows settings' values and the changes events record."""
from django import template
from django.utils.translation import gettext as _

from ..models import Role
from ..selectors.audit import changed_values

register = template.Library()


@register.filter
def setting_value(value) -> str:
    """A setting as a person reads it: empty as —, booleans as yes/no, maps and lists inline."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, dict):
        return ", ".join(f"{key}: {setting_value(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value) or "—"
    return str(value)


@register.filter
def change_value(value, name: str) -> str:
    """A recorded change's value: a staff member's role by its label, anything else as
    :func:`setting_value` shows it."""
    if name == "role" and value in Role.values:
        return str(Role(value).label)
    return setting_value(value)


@register.filter
def event_changes(event) -> list[tuple[str, object, object]]:
    """(name, before, after) for each value an event's payload records as changed."""
    payload = getattr(event, "payload", None)
    before = (payload.before if payload else None) or {}
    after = (payload.after if payload else None) or {}
    return changed_values(before, after)


@register.filter
def attribute(obj, name: str):
    """An attribute named by a variable (the schema form's select of each attribute)."""
    return getattr(obj, name, None)
