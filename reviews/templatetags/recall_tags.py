from django import template

from .. import permissions

register = template.Library()


@register.filter
def can_audit(user) -> bool:
    return permissions.can_audit(user)


@register.filter
def can_administer(user) -> bool:
    return permissions.can_administer(user)
