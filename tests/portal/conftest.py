"""Fixtures for the self-service portal: a subject's memory in every state, and a way in.

``memory(tenant, user_id)`` builds, through the real pipeline, what a subject typically
has: chat-sourced facts with messages and evidence, a reviewer-approved fact, a
thread-scoped fact, questions waiting for them (sensitive, low confidence, a plan) and a
conflict. ``enter(tenant, user_id)`` redeems a real link and returns the signed-in client.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone
from urllib.parse import urlsplit

import pytest
from django.test import Client

from reviews.actors import SYSTEM, Actor
from reviews.models import Candidate, Fact
from reviews.services.candidates import candidate_approve
from reviews.services.portal import portal_link_create
from tests.conftest import candidate, store_message

SAID_ON = datetime(2026, 11, 8, 9, 30, tzinfo=dt_timezone.utc)


def link_path(url: str) -> str:
    return urlsplit(url).path


@pytest.fixture
def say(db):
    """say(tenant, user_id, message_id, content, thread_id="t-1") stores a chat message."""

    def make(tenant, user_id, message_id, content, *, thread_id="t-1", role="user", at=SAID_ON):
        return store_message(tenant, user_id, message_id, content, thread_id=thread_id, role=role, created_at=at)

    return make


@dataclass
class Memory:
    user_id: str
    name: Fact  # chat, auto-approved, with evidence
    role: Fact  # approved by a reviewer
    database: Fact  # project:flask-migration, chat
    thread_pref: Fact  # thread-scoped
    sensitive: Candidate  # pending_user, sensitive_consent
    unsure: Candidate  # pending_user, needs_confirmation
    plan: Candidate  # pending_user, unconfirmed_kind
    conflict: Candidate  # pending_review conflict with `database`

    @property
    def fact_ids(self):
        return [self.name.pk, self.role.pk, self.database.pk, self.thread_pref.pk]

    @property
    def candidate_ids(self):
        return [self.sensitive.pk, self.unsure.pk, self.plan.pk, self.conflict.pk]


@pytest.fixture
def memory(db, submit, say, reviewer):
    """memory(tenant, user_id, prefix="") builds one subject's memory; ids differ per call."""

    def build(tenant, user_id, prefix=""):
        p = prefix or user_id
        say(tenant, user_id, f"{p}-m1", "Hi, I'm Alice and I work as a data engineer.", thread_id=f"{p}-t1")
        say(tenant, user_id, f"{p}-m2", "Our flask-migration project runs on MySQL.", thread_id=f"{p}-t1")
        say(tenant, user_id, f"{p}-m3", "In this chat, answer in German please.", thread_id=f"{p}-t2")
        say(tenant, user_id, f"{p}-m4", "I have asthma. Maybe we move to Redis.", thread_id=f"{p}-t2")

        def one(**item):
            [result] = submit(tenant, user_id, candidate(**item))
            return result

        name = one(field="name", value="Alice", confidence=0.97, source_message_id=f"{p}-m1", evidence="I'm Alice")
        role = one(field="role", value="data engineer", confidence=0.9, source_message_id=f"{p}-m1",
                   evidence="I work as a data engineer")
        assert role.status == "pending_review"
        candidate_approve(tenant=tenant, candidate_id=role.candidate_id, version=1, actor=Actor.reviewer(reviewer))
        database = one(entity_type="project", entity_id="flask-migration", entity_name="flask-migration",
                       field="database", value="MySQL", confidence=0.97, source_message_id=f"{p}-m2",
                       evidence="runs on MySQL")
        thread_pref = one(field="preference", value="answers in German", confidence=0.97, scope="thread",
                          thread_id=f"{p}-t2", source_message_id=f"{p}-m3", evidence="answer in German please")
        sensitive = one(field="health", value="asthma", confidence=0.95, source_message_id=f"{p}-m4",
                        evidence="I have asthma")
        # No source message: nothing for grounding to check (none of the messages says it).
        unsure = one(field="location", value="Berlin", confidence=0.6)
        plan = one(entity_type="project", entity_id="flask-migration", field="tech_stack", value="Redis",
                   confidence=0.9, kind="plan", source_message_id=f"{p}-m4", evidence="Maybe we move to Redis")
        conflict = one(entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL",
                       confidence=0.9, evidence="we use PostgreSQL now")
        outcomes = [name.status, database.status, thread_pref.status, sensitive.reason, unsure.reason, plan.reason,
                    conflict.reason]
        assert outcomes == ["auto_approved", "auto_approved", "auto_approved", "sensitive_consent",
                            "needs_confirmation", "unconfirmed_kind", "conflict"], outcomes
        facts = Fact.objects.in_bulk([name.fact_id, database.fact_id, thread_pref.fact_id])
        candidates = Candidate.objects.in_bulk(
            [role.candidate_id, sensitive.candidate_id, unsure.candidate_id, plan.candidate_id, conflict.candidate_id]
        )
        return Memory(
            user_id=user_id,
            name=facts[name.fact_id],
            role=Fact.objects.get(pk=candidates[role.candidate_id].fact_id),
            database=facts[database.fact_id],
            thread_pref=facts[thread_pref.fact_id],
            sensitive=candidates[sensitive.candidate_id],
            unsure=candidates[unsure.candidate_id],
            plan=candidates[plan.candidate_id],
            conflict=candidates[conflict.candidate_id],
        )

    return build


@pytest.fixture
def enter(db):
    """enter(tenant, user_id, client=None) -> a client whose session is bound to that subject."""

    def open_session(tenant, user_id, client=None, **client_kwargs):
        url, _ = portal_link_create(tenant=tenant, user_id=user_id, actor=SYSTEM)
        client = client or Client(**client_kwargs)
        response = client.post(link_path(url))
        assert response.status_code == 302, response.status_code
        return client

    return open_session


@pytest.fixture
def alice(tenant, memory):
    return memory(tenant, "alice")


@pytest.fixture
def alice_client(alice, tenant, enter):
    return enter(tenant, "alice")

