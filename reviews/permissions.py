"""Who may do what, in one place: read by the API, the views and the templates alike.

Staff (Django users with a :class:`Membership`) act inside exactly one tenant with one
role. A subject acts only on their own memory through a portal session. Superusers see
every tenant, in the Django admin only.
"""
from __future__ import annotations

from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404

from .models import Membership, Role, Subject, Tenant

DECIDE_ROLES = (Role.REVIEWER, Role.TENANT_ADMIN)
AUDIT_ROLES = (Role.AUDITOR, Role.TENANT_ADMIN)
ADMIN_ROLES = (Role.TENANT_ADMIN,)


def membership_of(user) -> Membership | None:
    """The user's membership, read with its tenant in one query the first time and kept on
    the user: every staff page asks for both, and as two lazy lookups they were two queries."""
    if not getattr(user, "is_authenticated", False):
        return None
    prefetch_related_objects([user], Prefetch("membership", queryset=Membership.objects.select_related("tenant")))
    try:
        return user.membership
    except Membership.DoesNotExist:
        return None


def staff_tenant(user) -> Tenant:
    """The tenant a staff user works in; 404 for anyone without one (no hint it exists)."""
    membership = membership_of(user)
    if membership is None:
        raise Http404("Not a member of any tenant.")
    return membership.tenant


def role_of(user) -> str | None:
    membership = membership_of(user)
    return membership.role if membership else None


def can_view_queue(user) -> bool:
    return role_of(user) in (*DECIDE_ROLES, Role.AUDITOR)


def can_decide(user) -> bool:
    return role_of(user) in DECIDE_ROLES


def can_comment(user) -> bool:
    """Reviewers (and tenant admins) write to each other on an item; an auditor reads only."""
    return role_of(user) in DECIDE_ROLES


def can_audit(user) -> bool:
    return role_of(user) in AUDIT_ROLES


def can_administer(user) -> bool:
    return role_of(user) in ADMIN_ROLES


# --- Subjects (the self-service portal) ---------------------------------------------------
# A redeemed portal link stores the subject's binding in the session under this key. It is not a
# Django login: request.user stays anonymous, so no staff page or API accepts it.
PORTAL_SESSION_KEY = "portal_subject"


def portal_binding(*, tenant_id: int, subject_id: int, user_id: str) -> dict:
    return {"tenant_id": tenant_id, "subject_id": subject_id, "user_id": user_id}


def portal_subject(request):
    """The one subject this browser session may act as, or None.

    A staff login in the same browser ends the binding: one session is a member of staff
    or a subject, never both (redeeming a portal link likewise signs staff out).
    """
    binding = request.session.get(PORTAL_SESSION_KEY) if hasattr(request, "session") else None
    if binding is not None and getattr(request, "user", None) is not None and request.user.is_authenticated:
        del request.session[PORTAL_SESSION_KEY]
        return None
    if not isinstance(binding, dict):
        return None
    try:
        tenant_id, subject_id, user_id = int(binding["tenant_id"]), int(binding["subject_id"]), str(binding["user_id"])
    except (KeyError, TypeError, ValueError):
        return None
    return (
        Subject.objects.select_related("tenant")
        .filter(pk=subject_id, tenant_id=tenant_id, user_id=user_id)
        .first()
    )
