"""A subject with memory in every place a value can hide, built through the services.

Each value is a made-up word, so finding it anywhere in a dump of the database means a
copy survived. ``OTHER`` values belong to another subject of the same tenant and must
survive every deletion of the first.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from reviews.actors import Actor
from reviews.models import Subject
from reviews.recall.query import RecallQuery
from reviews.services.facts import fact_edit
from reviews.recall.service import recall_perform
from tests.conftest import candidate, store_message

USER = "u-erase"
OTHER_USER = "u-keep"
REVIEWER = Actor("reviewer", "test")

NAME = "Zephyrine"
LOCATION_OLD = "Quixotown"
LOCATION = "Yarrowvale"
HEALTH = "migrainexia"
DATABASE = "Vexodb"
TECH = "Flaskorama"
PROJECT_NAME = "Glimmerforge Migration"
PROJECT_STATUS = "Snarkwhistle"
THREAD_PREFERENCE = "tangerine tables"
PREFERENCE = "pistachio prose"
OTHER_NAME = "Okonkwo"

VALUES = {
    "name": [NAME],
    "location": [LOCATION_OLD, LOCATION],
    "health": [HEALTH],
    "project": [DATABASE, TECH, PROJECT_STATUS],
    "project_name": [PROJECT_NAME],
    "thread": [THREAD_PREFERENCE],
    "preference": [PREFERENCE],
}
ALL_VALUES = [value for values in VALUES.values() for value in values]


@dataclass
class Memory:
    tenant: object
    subject: Subject
    other: Subject
    facts: dict = field(default_factory=dict)
    recall_id: int | None = None


def add_message(tenant, user_id, message_id, thread_id, content):
    return store_message(tenant, user_id, message_id, content, thread_id=thread_id, extraction_status="done")


def build_memory(tenant, publish, submit) -> Memory:
    """Threads t-1 (name, location, health), t-2 (project), t-3 (a thread-scoped preference)."""
    add_message(tenant, USER, "m1", "t-1", f"Hi, I am {NAME} and I live in {LOCATION_OLD}.")
    add_message(tenant, USER, "m2", "t-1", f"My doctor says it is {HEALTH} again.")
    add_message(tenant, USER, "m3", "t-2", f"{PROJECT_NAME} moves to {DATABASE}, written in {TECH}, {PROJECT_STATUS}.")
    add_message(tenant, USER, "m4", "t-3", f"Here, lay it out as {THREAD_PREFERENCE} please.")
    add_message(tenant, USER, "m5", "t-2", f"Always answer in {PREFERENCE}.")
    add_message(tenant, OTHER_USER, "o1", "t-9", f"I am {OTHER_NAME}.")

    facts = {
        "name": publish(tenant, USER, field="name", value=NAME, source_message_id="m1",
                        evidence=f"I am {NAME}"),
        "location": publish(tenant, USER, field="location", value=LOCATION_OLD, source_message_id="m1",
                            evidence=f"I live in {LOCATION_OLD}"),
        "health": publish(tenant, USER, field="health", value=HEALTH, source_message_id="m2"),
        "database": publish(tenant, USER, entity_type="project", entity_id="glimmerforge",
                            entity_name=PROJECT_NAME, field="database", value=DATABASE, source_message_id="m3"),
        "tech": publish(tenant, USER, entity_type="project", entity_id="glimmerforge",
                        field="tech_stack", value=TECH, source_message_id="m3"),
        "thread": publish(tenant, USER, field="preference", value=THREAD_PREFERENCE, scope="thread",
                          thread_id="t-3", source_message_id="m4"),
        "preference": publish(tenant, USER, field="preference", value=PREFERENCE, source_message_id="m5"),
        "other": publish(tenant, OTHER_USER, field="name", value=OTHER_NAME, source_message_id="o1"),
    }
    # A correction: the old location lives on as version 1.
    facts["location"] = fact_edit(
        tenant=tenant, fact_id=facts["location"].pk, value=LOCATION, actor=REVIEWER, reason="moved"
    )
    # A candidate still waiting for review holds a value too.
    submit(tenant, USER, candidate(entity_type="project", entity_id="glimmerforge", field="status",
                                   value=PROJECT_STATUS, confidence=0.85, source_message_id="m3"))
    record, _ = recall_perform(
        tenant=tenant,
        query=RecallQuery(user_id=USER, q=f"where does {NAME} live, {LOCATION}?"),
        actor=Actor("api_key", "agent"),
        may_see_sensitive=False,
    )
    subject = Subject.objects.get(tenant=tenant, user_id=USER)
    other = Subject.objects.get(tenant=tenant, user_id=OTHER_USER)
    return Memory(tenant=tenant, subject=subject, other=other, facts=facts, recall_id=record.pk)

