"""The deterministic core under the services: the candidate pipeline (SPEC §3), grounding,
normalisation, the tenant schema, identifiers and the state transitions. Nothing here writes
an audit event or knows about requests."""
