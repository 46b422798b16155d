"""Tenants, their API keys and their staff."""
from __future__ import annotations

import hashlib
import secrets as token_source
import time
from datetime import datetime
from typing import Annotated

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from django.utils.text import slugify

from .. import audit
from ..actors import SYSTEM, Actor
from ..audit import GENESIS_HASH, EventDraft
from ..errors import InvalidInput, InvalidTransition, NotFound
from ..models import ActorKind, ApiKey, AuditAction, AuditChainHead, Membership, Role, Scope, Source, Tenant
from ..policy.schema import seed_default_schema
from .boundary import service
from ..screening import Screen, Text, Verbatim

KEY_PREFIX = "mp"
# What names a key (its `prefix`): the 8 hex digits of token_hex(4) in api_key_create.
# The routes naming a key match only this, so no other text reaches the lookup.
KEY_PREFIX_PATTERN = "[0-9a-f]{8}"
# Who locks a staff account's sign-in after too many failures (reviews/web/throttling.py).
LOGIN_THROTTLE = Actor(ActorKind.SYSTEM, "login_throttle")
API_KEY_SOURCES = (Source.CHAT, Source.BUSINESS_SYSTEM)


def hash_api_key(raw_key: str) -> str:
    # Keys carry 256 bits of randomness, so a fast hash is enough (no stretching needed).
    return hashlib.sha256(raw_key.encode()).hexdigest()


@service
def tenant_create(*, slug: Text, name: Text = "", actor: Actor = SYSTEM) -> Tenant:
    if not slug or slugify(slug) != slug:
        raise InvalidInput("A tenant slug uses lowercase letters, digits and hyphens.", details={"slug": slug})
    if Tenant.objects.filter(slug=slug).exists():
        raise InvalidInput(f"Tenant {slug!r} already exists.", details={"slug": "exists"})
    tenant = Tenant.objects.create(slug=slug, name=name or slug)
    seed_default_schema(tenant)
    AuditChainHead.objects.create(tenant_id=tenant.pk, seq=0, hash=GENESIS_HASH)
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.TENANT_CREATED, object_type="tenant", object_id=tenant.pk,
                   after={"slug": slug, "name": tenant.name}),
    )
    return tenant


@service
def api_key_create(
    *,
    tenant: Tenant,
    scopes: Annotated[list[str], Screen.TEXT],
    source: Text = Source.CHAT,
    name: Text = "",
    expires_at: datetime | None = None,
    actor: Actor = SYSTEM,
) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the raw key, which is never stored or shown again.
    ``expires_at``: refused from then on (in the future, or the key would be born dead)."""
    unknown = sorted(set(scopes) - set(Scope.values))
    if unknown or not scopes:
        raise InvalidInput("Unknown or missing scopes.", details={"unknown": unknown, "allowed": list(Scope.values)})
    if source not in API_KEY_SOURCES:
        raise InvalidInput("A key's source is chat or business_system.", details={"source": source})
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput("A key's expiry must be in the future.", details={"expires_at": expires_at.isoformat()})
    prefix = token_source.token_hex(4)
    raw_key = f"{KEY_PREFIX}_{prefix}_{token_source.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        tenant=tenant,
        name=name,
        prefix=prefix,
        key_hash=hash_api_key(raw_key),
        scopes=sorted(set(scopes)),
        source=source,
        expires_at=expires_at,
    )
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.API_KEY_CREATED, object_type="api_key", object_id=prefix,
                   after=api_key_snapshot(key)),
    )
    return key, raw_key


def api_key_snapshot(key: ApiKey) -> dict:
    """What the audit trail says about a key: named by its prefix, never the key itself."""
    return {
        "prefix": key.prefix,
        "name": key.name,
        "scopes": key.scopes,
        "source": key.source,
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
        "expires_at": key.expires_at.isoformat() if key.expires_at else None,
        "replaced_by": key.replaced_by,
    }


@service
def api_key_revoke(
    *,
    tenant: Tenant,
    prefix: Annotated[str, Verbatim("an API key's public prefix: only looked up, never stored from the input")],
    actor: Actor,
) -> ApiKey:
    """Revoke a tenant's key, named by its prefix (another tenant's key is not found).

    This process forgets the key at once; other processes within
    ``MEMORY_API_KEY_CACHE_SECONDS`` (their authentication cache), which is the longest
    a revoked key keeps working.
    """
    key = ApiKey.objects.select_for_update().filter(tenant=tenant, prefix=prefix).first()
    if key is None:
        raise NotFound("No such API key.", details={"prefix": prefix})
    if key.revoked_at is not None:
        raise InvalidTransition("This API key is already revoked.", details={"prefix": prefix})
    before = api_key_snapshot(key)
    key.revoked_at = timezone.now()
    key.save(update_fields=["revoked_at"])
    # Dropped now rather than on commit: if the transaction rolls back, the key is only
    # looked up again on its next call.
    _authenticated_keys.pop(key.key_hash, None)
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.API_KEY_REVOKED, object_type="api_key", object_id=prefix,
                   before=before, after=api_key_snapshot(key)),
    )
    return key


def api_key_authenticate(raw_key: str) -> ApiKey | None:
    """The live key (with its tenant) a raw key stands for, or None.

    Every API call runs this, so the query is written out: building this join with the
    ORM took five times the CPU of everything else a recall does in the database. Rows
    become model instances through the fields' own converters, as the ORM would.
    """
    if not raw_key or len(raw_key) > 200:
        return None
    digest = hash_api_key(raw_key)
    cached = _authenticated_keys.get(digest)
    if cached is not None and cached[0] > time.monotonic():
        return _unexpired(cached[1])
    key_columns, tenant_columns = _ApiKeyLookup.columns()
    with connection.cursor() as cursor:
        cursor.execute(_ApiKeyLookup.sql(), [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    key = _ApiKeyLookup.instance(ApiKey, key_columns, row[: len(key_columns)])
    key.tenant = _ApiKeyLookup.instance(Tenant, tenant_columns, row[len(key_columns) :])
    ttl = settings.MEMORY_API_KEY_CACHE_SECONDS
    if ttl > 0:
        if len(_authenticated_keys) >= _AUTHENTICATED_KEYS_MAX:
            _authenticated_keys.clear()
        _authenticated_keys[digest] = (time.monotonic() + ttl, key)
    return _unexpired(key)


def _unexpired(key: ApiKey) -> ApiKey | None:
    """An expired key is refused on its first call after the hour, cached or not."""
    if key.expires_at is not None and key.expires_at <= timezone.now():
        return None
    return key


# Keys this process authenticated in the last MEMORY_API_KEY_CACHE_SECONDS, by digest.
# A lookup is a database round trip on every API call (a third of a recall's cost); the
# price is that a revoked key, or a tenant's changed thresholds, take effect in each
# process only after that many seconds. Set the setting to 0 to look up every call.
_authenticated_keys: dict[str, tuple[float, ApiKey]] = {}
_AUTHENTICATED_KEYS_MAX = 10_000


def api_key_cache_clear() -> None:
    _authenticated_keys.clear()


class _ApiKeyLookup:
    @staticmethod
    def columns():
        return ApiKey._meta.concrete_fields, Tenant._meta.concrete_fields

    @classmethod
    def sql(cls) -> str:
        key_columns, tenant_columns = cls.columns()
        selected = [f"k.{f.column}" for f in key_columns] + [f"t.{f.column}" for f in tenant_columns]
        return (
            f"SELECT {', '.join(selected)} FROM {ApiKey._meta.db_table} k "
            f"JOIN {Tenant._meta.db_table} t ON t.id = k.tenant_id "
            "WHERE k.key_hash = %s AND k.revoked_at IS NULL"
        )

    @staticmethod
    def instance(model, fields, values):
        converted = []
        for model_field, value in zip(fields, values):
            column = model_field.get_col(model._meta.db_table)
            for convert in connection.ops.get_db_converters(column) + model_field.get_db_converters(connection):
                value = convert(value, column, connection)
            converted.append(value)
        return model.from_db(connection.alias, [f.attname for f in fields], converted)


@service
def staff_create(
    *,
    tenant: Tenant,
    username: Text,
    role: Text,
    password: Annotated[str | None, Verbatim("a login password: Django keeps only its hash; masking would change it")] = None,
    email: Text = "",
    actor: Actor = SYSTEM,
):
    """Create a staff account bound to one tenant with one role."""
    staff_create_check(username=username, role=role)
    User = get_user_model()
    user = User.objects.create_user(username=username, email=email, password=password)
    if password is None:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    staff_add(tenant=tenant, user=user, role=role, actor=actor)
    return user


def staff_create_check(*, username: str, role: str) -> None:
    _check_role(role)
    if not username:
        raise InvalidInput("A username is required.", details={"username": "missing"})
    if get_user_model().objects.filter(username=username).exists():
        raise InvalidInput(f"User {username!r} already exists.", details={"username": "exists"})


def _check_role(role: str) -> None:
    if role not in Role.values:
        raise InvalidInput("Unknown role.", details={"role": role, "allowed": list(Role.values)})


def _staff_snapshot(membership: Membership) -> dict:
    return {"username": membership.user.get_username(), "role": membership.role}


def staff_add_check(*, user, role: str) -> None:
    _check_role(role)
    if user is None:
        raise InvalidInput("Choose an account.", details={"user": None})
    if user.is_superuser:
        raise InvalidInput(
            "Superusers work in the Django admin, not in a tenant.", details={"username": user.get_username()}
        )
    if Membership.objects.filter(user=user).exists():
        raise InvalidInput(
            f"{user.get_username()!r} already works in a tenant.", details={"username": user.get_username()}
        )


@service
def staff_add(
    *,
    tenant: Tenant,
    user: Annotated[object, Verbatim("a staff account (a Django user), not text")],
    role: Text,
    actor: Actor,
) -> Membership:
    """Give an existing account a role in the tenant (an account works in one tenant)."""
    staff_add_check(user=user, role=role)
    membership = Membership.objects.create(user=user, tenant=tenant, role=role)
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.STAFF_ADDED, object_type="user", object_id=user.pk,
                   after=_staff_snapshot(membership)),
    )
    return membership


def _membership(tenant: Tenant, user_id: int) -> Membership:
    # The tenant row first: staff changes of one tenant take turns, so two admins demoting
    # each other cannot both pass the last-admin check.
    Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()
    membership = (
        Membership.objects.select_for_update().select_related("user").filter(tenant=tenant, user_id=user_id).first()
    )
    if membership is None:
        raise NotFound("No such member of this tenant.", details={"user_id": user_id})
    return membership


def staff_is_last_admin(membership: Membership) -> bool:
    """Whether this is the only active tenant admin of its tenant (the services that act
    on it hold the tenant's row lock, so the answer cannot change under them)."""
    if membership.role != Role.TENANT_ADMIN:
        return False
    admins = Membership.objects.filter(tenant_id=membership.tenant_id, role=Role.TENANT_ADMIN, user__is_active=True)
    return list(admins.order_by("pk").values_list("pk", flat=True)) == [membership.pk]


def _keep_an_admin(membership: Membership, *, losing_admin: bool) -> None:
    """A tenant never loses its last tenant admin: nobody could then manage it."""
    if losing_admin and staff_is_last_admin(membership):
        raise InvalidInput(
            "This is the tenant's last tenant admin: make someone else tenant admin first.",
            details={"user_id": membership.user_id, "role": membership.role},
        )


def staff_role_change_check(*, membership: Membership, role: str) -> None:
    _check_role(role)
    _keep_an_admin(membership, losing_admin=role != Role.TENANT_ADMIN)


@service
def staff_role_change(*, tenant: Tenant, user_id: int, role: Text, actor: Actor) -> Membership:
    membership = _membership(tenant, user_id)
    staff_role_change_check(membership=membership, role=role)
    if membership.role == role:
        return membership
    before = _staff_snapshot(membership)
    membership.role = role
    membership.save(update_fields=["role"])
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.STAFF_ROLE_CHANGED, object_type="user", object_id=user_id,
                   before=before, after=_staff_snapshot(membership)),
    )
    return membership


def staff_remove_check(*, membership: Membership) -> None:
    _keep_an_admin(membership, losing_admin=True)


@service
def staff_remove(*, tenant: Tenant, user_id: int, actor: Actor) -> None:
    """Take a person out of the tenant: their membership goes and their account is
    deactivated (kept, so the ``reviewer:<id>`` in past events still names someone)."""
    membership = _membership(tenant, user_id)
    staff_remove_check(membership=membership)
    before = _staff_snapshot(membership)
    user = membership.user
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.STAFF_REMOVED, object_type="user", object_id=user_id,
                   before=before),
    )
    membership.delete()
    user.is_active = False
    user.set_unusable_password()
    user.save(update_fields=["is_active", "password"])


@service
def staff_lockout_record(
    *,
    username: Text,
    ip_address: Annotated[str | None, Screen.TEXT],
    failures: int,
    cool_off_minutes: float,
):
    """Record in the account's tenant that sign-in as ``username`` from ``ip_address`` is
    locked after ``failures`` wrong passwords, for ``cool_off_minutes``.

    A staff account works in one tenant (its Membership): that tenant's chain gets the
    event. A username of nobody's membership (unknown, or a superuser, who has no tenant)
    belongs to no chain: nothing is recorded and None is returned (the caller logs it).
    """
    membership = (
        Membership.objects.filter(**{f"user__{get_user_model().USERNAME_FIELD}": username})
        .select_related("user").first()
    )
    if membership is None:
        return None
    return audit.record(
        membership.tenant_id,
        EventDraft(actor=str(LOGIN_THROTTLE), action=AuditAction.STAFF_LOCKED_OUT, object_type="user",
                   object_id=membership.user_id, reason_code="too_many_failures",
                   after={"username": username, "ip_address": ip_address, "failures": failures,
                          "cool_off_minutes": cool_off_minutes}),
    )
