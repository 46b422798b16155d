"""The labels of stored codes (fields, relation names, categories, sources) on every page:
the subject's, the reviewer queue and the stats read them from here (reviews/labels.py)."""
from django import template

from .. import labels

register = template.Library()


def _tenant_of(request):
    """Staff pages carry ``request.tenant``; the subject's pages ``request.subject``."""
    tenant = getattr(request, "tenant", None)
    subject = getattr(request, "subject", None)
    return tenant if tenant is not None else getattr(subject, "tenant", None)


@register.simple_tag(takes_context=True)
def field_label(context, entity_type: str, field: str) -> str:
    """``{% field_label c.entity_type c.field %}``: the tenant's label, else the default one."""
    request = context.get("request")
    return labels.labels_cached_on(request, _tenant_of(request)).field(entity_type, field)


@register.filter
def category_label(code: str) -> str:
    return labels.category_label(code)


@register.filter
def source_label(code: str) -> str:
    return labels.source_label(code)


@register.filter
def label_in(labels, language: str) -> str:
    """A tenant's own label in one language (``{{ definition.labels|label_in:"zh-hans" }}``)."""
    return (labels or {}).get(language, "") if isinstance(labels, dict) else ""
