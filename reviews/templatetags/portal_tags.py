"""Template filters of the subject's pages: dates in the words a person uses."""
from django import template

from ..labels import moment, when

register = template.Library()
register.filter("when", when)
register.filter("moment", moment)
