from .audit import AuditChainHead, AuditEvent, AuditPayload
from .choices import (
    CandidateStatus,
    Cardinality,
    Category,
    ExtractionStatus,
    FactStatus,
    Kind,
    MemoryScope,
    Reason,
    Role,
    Scope,
    Sensitivity,
    Source,
)
from .exports import AuditExport, ExportFormat, ExportStatus
from .memory import Candidate, Entity, EntityAlias, Fact, FactVersion, Message, RecallRecord, SuppressedValue
from .portal import PortalLink
from .tenancy import ApiKey, FieldDefinition, Membership, Subject, Tenant

__all__ = [
    "ApiKey",
    "AuditChainHead",
    "AuditEvent",
    "AuditExport",
    "AuditPayload",
    "Candidate",
    "CandidateStatus",
    "Cardinality",
    "Category",
    "Entity",
    "EntityAlias",
    "ExportFormat",
    "ExportStatus",
    "ExtractionStatus",
    "Fact",
    "FactStatus",
    "FactVersion",
    "FieldDefinition",
    "Kind",
    "Membership",
    "MemoryScope",
    "Message",
    "PortalLink",
    "Reason",
    "RecallRecord",
    "Role",
    "Scope",
    "Sensitivity",
    "Source",
    "Subject",
    "SuppressedValue",
    "Tenant",
]
