"""Template filters of the subject's pages: dates in the words a person uses."""
from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.translation import gettext, pgettext

register = template.Library()


@register.filter
def when(value) -> str:
    """"today", "yesterday" or "on 8 Nov 2026" (Chinese: 今天, 昨天, 2026年11月8日)."""
    if not value:
        return ""
    day = timezone.localdate(value) if timezone.is_aware(value) else value.date()
    days_ago = (timezone.localdate() - day).days
    if days_ago == 0:
        return gettext("today")
    if days_ago == 1:
        return gettext("yesterday")
    return gettext("on %(date)s") % {"date": date_format(day, pgettext("short date", "j M Y"))}
