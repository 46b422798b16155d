"""The per-tenant field schema: SPEC §2's defaults and the lookup the policy uses."""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..models import Cardinality, Category, FieldDefinition, Sensitivity, Tenant
from .pipeline import RELATION_PREFIX, FieldRule, relation_rule

ONE, MANY = Cardinality.ONE, Cardinality.MANY
NORMAL, PERSONAL, SENSITIVE = Sensitivity.NORMAL, Sensitivity.PERSONAL, Sensitivity.SENSITIVE

# (entity_type, field, cardinality, sensitivity, category) — SPEC §2.
DEFAULT_FIELDS: list[tuple[str, str, str, str, str]] = [
    ("user", "name", ONE, NORMAL, Category.IDENTITY),
    ("user", "role", ONE, NORMAL, Category.IDENTITY),
    ("user", "language", ONE, NORMAL, Category.IDENTITY),
    ("user", "location", ONE, PERSONAL, Category.CONSTRAINT),
    ("user", "preference", MANY, NORMAL, Category.PREFERENCE),
    ("user", "health", MANY, SENSITIVE, Category.SCENARIO),
    ("user", "legal_matter", MANY, SENSITIVE, Category.SCENARIO),
    ("user", "finance", MANY, SENSITIVE, Category.SCENARIO),
    ("project", "name", ONE, NORMAL, Category.IDENTITY),
    ("project", "database", ONE, NORMAL, Category.CONSTRAINT),
    ("project", "status", ONE, NORMAL, Category.SCENARIO),
    ("project", "tech_stack", MANY, NORMAL, Category.CONSTRAINT),
    ("organization", "name", ONE, NORMAL, Category.IDENTITY),
    ("organization", "industry", ONE, NORMAL, Category.IDENTITY),
    ("preference", "answer_style", ONE, NORMAL, Category.PREFERENCE),
    ("preference", "code_style", ONE, NORMAL, Category.PREFERENCE),
]
SENSITIVE_DEFAULT_RETENTION_DAYS = 90


def seed_default_schema(tenant: Tenant) -> None:
    FieldDefinition.objects.bulk_create(
        [
            FieldDefinition(
                tenant=tenant,
                entity_type=entity_type,
                field=field,
                cardinality=cardinality,
                sensitivity=sensitivity,
                category=category,
                # SPEC §2: allowed on every normal field, never on personal or sensitive ones.
                auto_approve=sensitivity == NORMAL,
                retention_days=SENSITIVE_DEFAULT_RETENTION_DAYS if sensitivity == SENSITIVE else None,
            )
            for entity_type, field, cardinality, sensitivity, category in DEFAULT_FIELDS
        ],
        ignore_conflicts=True,
    )


# FieldRule's fields, in its order: FieldDefinition has a column of each name.
_RULE_COLUMNS = tuple(rule_field.name for rule_field in fields(FieldRule))


@dataclass
class TenantSchema:
    """A snapshot of one tenant's schema, loaded once per batch."""

    rules: dict[tuple[str, str], FieldRule]
    entity_types: frozenset[str]
    allowed_relation_names: list | None

    @classmethod
    def load(cls, tenant: Tenant) -> "TenantSchema":
        # Plain rows, not model instances: a tenant has dozens of fields, and the queue page
        # and every policy batch load them.
        rows = FieldDefinition.objects.filter(tenant=tenant).values_list(*_RULE_COLUMNS)
        rules = {(row[0], row[1]): FieldRule(*row) for row in rows}
        return cls(
            rules=rules,
            entity_types=frozenset(entity_type for entity_type, _ in rules),
            allowed_relation_names=tenant.allowed_relation_names,
        )

    def knows_entity_type(self, entity_type: str) -> bool:
        return entity_type in self.entity_types

    def rule_for(self, entity_type: str, field: str) -> FieldRule | None:
        if not self.knows_entity_type(entity_type):
            return None
        if field.startswith(RELATION_PREFIX):
            return self.rules.get((entity_type, field)) or relation_rule(
                entity_type, field, self.allowed_relation_names
            )
        return self.rules.get((entity_type, field))
