"""manage.py extract and manage.py demo."""
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from reviews.extraction import ExtractorRefused
from reviews.management.commands.demo import demo_subjects, load_conversations
from reviews.models import (
    ApiKey, AuditEvent, Candidate, ExtractionStatus, Membership, Message, RecallRecord, Scope, Tenant,
)
from reviews.services.ingest import message_extract
from tests.ingest.helpers import ingest, message
from tests.ingest.test_extraction_service import Failing

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


class TestExtract:
    def test_pending_runs_everything_waiting_with_progress(self, tenant):
        ingest(tenant, message("m-1", "我叫 Alice。"), message("m-2", "我住在广州。"), message("m-3", "好的", role="assistant"))

        output = run("extract", "--pending")

        assert "[1/2] m-1: done (1 candidate(s))" in output
        assert "[2/2] m-2: done (1 candidate(s))" in output
        assert re.search(r"Extracted 2 message\(s\) in [\d.]+s: 2 done; 2 candidate\(s\)\.", output)
        assert set(Message.objects.filter(role="user").values_list("extraction_status", flat=True)) == {"done"}
        assert run("extract", "--pending") == "Nothing to extract.\n"

    def test_failed_resets_and_runs_them_again(self, tenant):
        ingest(tenant, message("m-1", "我叫 Alice。"))
        message_extract(message_pk=Message.objects.get().pk, extractor=Failing(ExtractorRefused("HTTP 401")))
        assert Message.objects.get().extraction_status == ExtractionStatus.FAILED

        output = run("extract", "--failed")

        assert "[1/1] m-1: done (1 candidate(s))" in output
        assert Message.objects.get().extraction_status == ExtractionStatus.DONE
        assert AuditEvent.objects.filter(action="message.extraction_rerun", actor="system").count() == 1

    def test_one_message_by_id(self, tenant, other_tenant):
        ingest(tenant, message("m-1", "我叫 Alice。"))

        assert "[1/1] m-1: done" in run("extract", "--message", "m-1")
        assert "is done: nothing to extract" in run("extract", "--message", "m-1")
        assert Candidate.objects.count() == 1

        with pytest.raises(CommandError, match="No message 'm-9'"):
            run("extract", "--message", "m-9")
        ingest(other_tenant, message("m-1", "I'm Olga."))
        with pytest.raises(CommandError, match="add --tenant SLUG"):
            run("extract", "--message", "m-1")
        assert "[1/1] m-1: done" in run("extract", "--message", "m-1", "--tenant", "tenant-2")

    def test_it_needs_to_be_told_what(self):
        with pytest.raises(CommandError):
            run("extract")


class TestDemo:
    """In a test transaction nothing commits: the after-commit extraction runs as the context closes."""

    def test_it_builds_the_demo_through_the_real_pipeline(self, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            output = run("demo")

        tenant = Tenant.objects.get(slug="demo")
        roles = dict(Membership.objects.filter(tenant=tenant).values_list("user__username", "role"))
        assert roles == {"reviewer": "reviewer", "auditor": "auditor", "steward": "tenant_admin"}
        assert get_user_model().objects.get(username="reviewer").check_password("reviewer")
        fixture_ids = {m["id"] for c in load_conversations() for m in c["messages"]}
        assert set(Message.objects.filter(tenant=tenant).values_list("message_id", flat=True)) == fixture_ids
        assert not Message.objects.filter(tenant=tenant, extraction_status="pending").exists()
        assert Candidate.objects.filter(tenant=tenant, extractor="rules").count() > 40
        assert "[10/10] alice / t-alice-3: 1 new, 0 already there" in output
        assert "(sign in: reviewer / reviewer, auditor / auditor)" in output
        assert "http://127.0.0.1:8000/tenant/  (steward / steward)" in output
        assert get_user_model().objects.get(username="steward").check_password("steward")
        # One key that can try every README example, and a login that opens the admin.
        key = re.search(r"API key with every scope .*\n  export KEY=(mp_\S+)\n", output).group(1)
        assert sorted(ApiKey.objects.get(tenant=tenant, prefix=key.split("_")[1]).scopes) == sorted(Scope.values)
        admin = get_user_model().objects.get(username="admin")
        assert admin.is_superuser and admin.is_staff and admin.check_password("admin")
        assert "http://127.0.0.1:8000/admin/  (admin / admin)" in output
        assert re.search(r"Login link for subject 'alice'.*\n\S+/me/link/\S+/\n", output)
        # Each subject recalled once with that key, so the auditors' recall pages show records.
        records = RecallRecord.objects.filter(tenant=tenant)
        assert sorted(records.values_list("user_id", flat=True)) == demo_subjects()
        assert set(records.values_list("caller", flat=True)) == {f"api_key:{key.split('_')[1]}"}
        assert "http://127.0.0.1:8000/audit/recalls/  (auditor / auditor)" in output

    def test_running_it_again_adds_nothing_twice(self, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            run("demo")
        counts = (Message.objects.count(), Candidate.objects.count(), get_user_model().objects.count(),
                  RecallRecord.objects.count())

        with django_capture_on_commit_callbacks(execute=True):
            output = run("demo")

        assert (Message.objects.count(), Candidate.objects.count(), get_user_model().objects.count(),
                RecallRecord.objects.count()) == counts
        assert "Using tenant 'demo'" in output and "0 new" in output and " 1 new" not in output

    def test_its_queue_shows_a_conflict_a_contested_fact_and_a_long_value(self, django_capture_on_commit_callbacks):
        from reviews.management.commands.demo import SHOWCASE_SUBJECT

        with django_capture_on_commit_callbacks(execute=True):
            output = run("demo")
        waiting = list(Candidate.objects.filter(tenant__slug="demo", subject__user_id=SHOWCASE_SUBJECT,
                                                status="pending_review"))
        conflict = [c for c in waiting if c.conflict_fact_id and "contested" not in (c.flags or [])]
        contested = [c for c in waiting if "contested" in (c.flags or [])]
        assert len(conflict) == 1 and conflict[0].conflict_fact.source == "business_system"
        assert len(contested) == 1 and contested[0].note
        assert any(len(c.value) > 160 for c in waiting)
        assert f"Added {SHOWCASE_SUBJECT}'s items for the queue: 2 conflict(s), 1 contested fact(s), 1 long value(s)." in output
