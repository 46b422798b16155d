"""Sign-in throttling (django-axes): what a lockout answers, and its audit event.

Axes counts wrong passwords per username and client address; at MEMORY_LOGIN_FAILURE_LIMIT
it locks that pair out for MEMORY_LOGIN_COOL_OFF_MINUTES (each further try restarts the
cool-off), and refuses even the right password meanwhile. The lockout itself is audited
once, when it happens, in the account's tenant.

Password spraying tries many usernames from one address, a try or two each, and never
reaches a pair's limit: :func:`address_locked_out` adds up the failures Axes recorded for
the address across usernames within the cool-off, and the sign-in view refuses the
address at MEMORY_LOGIN_ADDRESS_FAILURE_LIMIT.
"""
import logging

from axes.helpers import get_client_ip_address
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Sum
from django.dispatch import receiver
from django.shortcuts import render
from django.utils import timezone

from ..policy.normalize import keyed_digest
from ..services.tenants import staff_lockout_record

logger = logging.getLogger(__name__)


def cool_off_minutes() -> float:
    return settings.AXES_COOLOFF_TIME.total_seconds() / 60


def tracked_username(request, credentials=None) -> str | None:
    """The name Axes counts failures under, stores (``AccessAttempt``) and logs.

    The username itself when it names an account (an admin can unlock it by name);
    otherwise a keyed digest: people type their password into the username field, and a
    credential never reaches the database or a log.
    """
    typed = credentials.get("username") if credentials else request.POST.get("username")
    if not typed:
        return typed
    users = get_user_model()._default_manager
    if "\x00" not in typed and users.filter(**{get_user_model().USERNAME_FIELD: typed}).exists():
        return typed
    return "unknown:" + keyed_digest(["sign-in username", typed])[:16]


def locked_out_response(request, original_response=None, credentials=None):
    """The sign-in page again, saying why the password was not even tried (429)."""
    context = {"locked_out": True, "minutes": f"{cool_off_minutes():g}", "next": request.POST.get("next", "")}
    return render(request, "registration/login.html", context, status=429)


def address_failures(request) -> int:
    """Failed sign-ins from the request's address within the cool-off, whichever usernames."""
    recent = AccessAttempt.objects.filter(
        ip_address=get_client_ip_address(request), attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME
    )
    return recent.aggregate(failures=Sum("failures_since_start"))["failures"] or 0


def address_locked_out(request) -> bool:
    return address_failures(request) >= settings.MEMORY_LOGIN_ADDRESS_FAILURE_LIMIT


@receiver(user_locked_out, dispatch_uid="reviews.web.throttling.record_lockout")
def record_lockout(sender, request, username, ip_address, **kwargs):
    # Axes signals every refused try of a locked pair; the lockout is the try that reached
    # the limit (later ones only extend it), so one event per lockout.
    if getattr(request, "axes_failures_since_start", None) != settings.AXES_FAILURE_LIMIT:
        return
    event = staff_lockout_record(
        username=username or "", ip_address=ip_address, failures=settings.AXES_FAILURE_LIMIT,
        cool_off_minutes=cool_off_minutes(),
    )
    if event is None:
        # Not a tenant's staff account (unknown: the name is a digest; or a superuser): no
        # chain to write to, so only this line says it happened.
        logger.warning("sign-in locked out for %s from %s: not a tenant's staff account, no audit event",
                       username, ip_address)
