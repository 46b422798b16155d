"""manage.py demo: a demo tenant, its people, and the demo conversations through the real pipeline.

Re-running it adds nothing twice: the tenant and the accounts are reused, messages are
idempotent by id, and the subjects are recalled only while the tenant has no recall record.
Each run prints a fresh API key and a fresh login link for the subject ``alice`` (neither is
stored in readable form, so neither can be shown again).
"""
import json
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db.models import Count
from django.utils.dateparse import parse_datetime

from reviews.actors import SYSTEM, Actor
from reviews.models import ApiKey, Candidate, Membership, Message, RecallRecord, Role, Scope, Source, Tenant
from reviews.recall.query import RecallQuery
from reviews.domain import CandidateInput, MessageInput
from reviews.services.ingest import extractions_drain, messages_ingest
from reviews.recall.service import recall_perform
from reviews.services.candidates import candidate_approve, candidates_submit
from reviews.services.portal import fact_contest, portal_link_create
from reviews.services.tenants import api_key_create, staff_create, tenant_create

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "demo_conversations.jsonl"
DEMO_TENANT = "demo"
DEMO_PEOPLE = [
    ("reviewer", "reviewer", Role.REVIEWER),
    ("auditor", "auditor", Role.AUDITOR),
    # The tenant admin console (/tenant/) needs its own role: the superuser is not tenant staff.
    ("steward", "steward", Role.TENANT_ADMIN),
]
DEMO_SUBJECT = "alice"
# A subject whose items show what a reviewer meets besides the conversations' candidates: a
# conflict with the business system's value, a fact the subject contested, a long value.
SHOWCASE_SUBJECT = "maya"
SHOWCASE_LONG_VALUE = (
    "Prefers answers that start with a short runnable example, then explain the trade-offs in two or three "
    "sentences, link the official documentation page, and say which versions the example was checked against"
)
# A Django superuser for the admin (/admin/): demo data only, never for a real installation.
DEMO_SUPERUSER = ("admin", "admin")
# One key that can try every example of the README and docs/.
DEMO_KEY_SCOPES = [Scope.INGEST, Scope.RECALL, Scope.RECALL_SENSITIVE, Scope.REVIEW, Scope.ADMIN, Scope.SUBJECT]


def load_conversations(path: Path = FIXTURE) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def demo_subjects() -> list[str]:
    return sorted({conversation["user_id"] for conversation in load_conversations()})


def conversation_messages(conversation: dict) -> list[MessageInput]:
    return [
        MessageInput(
            id=item["id"],
            thread_id=conversation["thread_id"],
            user_id=conversation["user_id"],
            role=item["role"],
            content=item["content"],
            created_at=parse_datetime(item["created_at"]) if item.get("created_at") else None,
        )
        for item in conversation["messages"]
    ]


class Command(BaseCommand):
    help = (
        "Create the demo tenant, a reviewer, an auditor and a superuser (admin/admin), ingest the demo "
        "conversations, and print the links, an API key with every scope and the subject's login link."
    )

    def handle(self, *args, **options):
        tenant = Tenant.objects.filter(slug=DEMO_TENANT).first()
        if tenant is None:
            tenant = tenant_create(slug=DEMO_TENANT, name="Demo")
            self.stdout.write(f"Created tenant {DEMO_TENANT!r}.")
        else:
            self.stdout.write(f"Using tenant {DEMO_TENANT!r}.")
        self._people(tenant)
        self._conversations(tenant)
        self._showcase(tenant)
        key, raw_key = api_key_create(tenant=tenant, scopes=DEMO_KEY_SCOPES, source=Source.CHAT, name="demo")
        self._first_recalls(tenant, key)
        self._summary(tenant, raw_key)

    def _people(self, tenant: Tenant) -> None:
        User = get_user_model()
        for username, password, role in DEMO_PEOPLE:
            user = User.objects.filter(username=username).first()
            if user is None:
                staff_create(tenant=tenant, username=username, role=role, password=password)
                self.stdout.write(f"Created {str(role.label).lower()} {username!r} (password {password!r}).")
            elif Membership.objects.filter(user=user, tenant=tenant).exists():
                self.stdout.write(f"{role.label} {username!r} exists (password {password!r} unless changed).")
            else:
                self.stderr.write(f"User {username!r} exists but is not in tenant {DEMO_TENANT!r}; left alone.")
        username, password = DEMO_SUPERUSER
        if not User.objects.filter(username=username).exists():
            User.objects.create_superuser(username=username, email="", password=password)
            self.stdout.write(f"Created superuser {username!r} (password {password!r}) for the Django admin.")

    def _conversations(self, tenant: Tenant) -> None:
        conversations = load_conversations()
        in_process = settings.TASKS_IN_PROCESS
        self.stdout.write(
            f"Ingesting {len(conversations)} conversation(s) "
            + ("(extraction in this process)…" if in_process else "(extraction on the Celery workers)…")
        )
        for index, conversation in enumerate(conversations, 1):
            result = messages_ingest(tenant=tenant, messages=conversation_messages(conversation), actor=SYSTEM)
            self.stdout.write(
                f"  [{index}/{len(conversations)}] {conversation['user_id']} / {conversation['thread_id']}: "
                f"{result.accepted} new, {result.duplicates} already there"
                + (f", {result.paused} not kept (collection paused)" if result.paused else "")
            )
        # Background hand-offs (to the broker, or to an in-process model) finish before we report.
        extractions_drain(retries=True)

    def _showcase(self, tenant: Tenant) -> None:
        """Maya's items, once: the business system publishes her name and a chat then claims
        another (a conflict waiting for a reviewer); a reviewer approved her role and she
        contests it on her own page (a contested fact); a long preference waits too."""
        if Candidate.objects.filter(tenant=tenant, subject__user_id=SHOWCASE_SUBJECT).exists():
            return
        reviewer = get_user_model().objects.get(username=DEMO_PEOPLE[0][0])

        def submit(source, *items):
            results = candidates_submit(
                tenant=tenant, user_id=SHOWCASE_SUBJECT, source=source, actor=SYSTEM, extractor="demo",
                candidates=[CandidateInput(entity_type="user", entity_id="me", **item) for item in items],
            )
            return [Candidate.objects.get(pk=result.candidate_id) for result in results]

        submit(Source.BUSINESS_SYSTEM, {"field": "name", "value": "Maya Lindqvist", "confidence": 0.99})
        # Only what a reviewer approved can be contested (SPEC §4): her role came from a chat.
        [role] = submit(Source.CHAT, {"field": "role", "value": "Staff engineer, payments platform", "confidence": 0.9})
        if role.fact_id is None:
            role = candidate_approve(tenant=tenant, candidate_id=role.pk, version=role.version, actor=Actor.reviewer(reviewer))
        fact_contest(
            tenant=tenant, user_id=SHOWCASE_SUBJECT, fact_id=role.fact_id, actor=Actor.subject(SHOWCASE_SUBJECT),
            note="I moved to the data platform team in October.",
        )
        submit(
            Source.CHAT,
            {"field": "name", "value": "Maya Lindqvist-Okafor", "confidence": 0.9},
            {"field": "preference", "value": SHOWCASE_LONG_VALUE, "confidence": 0.9},
        )
        # Counted in Python: the demo runs on SQLite, which has no JSON "contains" lookup.
        waiting = list(Candidate.objects.filter(tenant=tenant, subject__user_id=SHOWCASE_SUBJECT, status="pending_review"))
        self.stdout.write(
            f"Added {SHOWCASE_SUBJECT}'s items for the queue: {sum(c.conflict_fact_id is not None for c in waiting)} "
            f"conflict(s), {sum('contested' in (c.flags or []) for c in waiting)} contested fact(s), "
            f"{sum(len(c.value) > 160 for c in waiting)} long value(s)."
        )

    def _first_recalls(self, tenant: Tenant, key: ApiKey) -> None:
        """Each subject recalled once with the demo key, as an agent would through the recall
        API, so the auditors' recall pages (/audit/recalls/) have records to show."""
        if RecallRecord.objects.filter(tenant=tenant).exists():
            return
        subjects = demo_subjects()
        returned = 0
        for user_id in subjects:
            _, result = recall_perform(
                tenant=tenant, query=RecallQuery(user_id=user_id), actor=Actor.api_key(key), may_see_sensitive=False
            )
            returned += len(result.facts)
        self.stdout.write(f"Recalled each of the {len(subjects)} subjects once with the demo key: "
                          f"{returned} published fact(s) returned, {len(subjects)} recall records.")

    def _summary(self, tenant: Tenant, raw_key: str) -> None:
        messages = dict(
            Message.objects.filter(tenant=tenant).values_list("extraction_status").annotate(n=Count("pk")).order_by()
        )
        candidates = dict(
            Candidate.objects.filter(tenant=tenant).values_list("status").annotate(n=Count("pk")).order_by()
        )
        self.stdout.write(f"Messages by extraction status: {messages}")
        self.stdout.write(f"Candidates by status: {candidates}")
        base = settings.MEMORY_PUBLIC_BASE_URL.rstrip("/")
        self.stdout.write("")
        self.stdout.write(f"Reviewer dashboard: {base}/review/  (sign in: reviewer / reviewer, auditor / auditor)")
        self.stdout.write(f"Tenant admin:       {base}/tenant/  (steward / steward)")
        self.stdout.write(f"Django admin:       {base}/admin/  (admin / admin)")
        self.stdout.write(f"Recall records:     {base}/audit/recalls/  (auditor / auditor)")
        self.stdout.write(f"API index and docs: {base}/api/v1/  {base}/api/docs/")
        self.stdout.write(f"mem0-compatible:    {base}/compat/mem0  (MemoryClient(api_key=KEY, host=...))")
        self.stdout.write(f"Tenant {tenant.slug!r}, subjects: {', '.join(demo_subjects())}")
        self.stdout.write(f"API key with every scope ({', '.join(DEMO_KEY_SCOPES)}; shown once):")
        self.stdout.write(f"  export KEY={raw_key}")
        url, expires_at = portal_link_create(tenant=tenant, user_id=DEMO_SUBJECT, actor=SYSTEM)
        self.stdout.write(f"Login link for subject {DEMO_SUBJECT!r} (opens once, until {expires_at:%Y-%m-%d %H:%M} UTC):")
        self.stdout.write(url)
