"""The self-service pages end to end through Django's test client (no JavaScript)."""
import json
import re
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
import time_machine
from django.utils import timezone

from reviews.actors import Actor
from reviews.models import AuditEvent, Candidate, DeletionStatus, Fact, FactDeletion, Message, Subject, SuppressedValue
from reviews.policy.normalize import value_digest
from reviews.services.candidates import candidate_defer
from tests.conftest import candidate


# Session, subject, due deletions, the deletions panel, facts, their versions, their source
# messages, the waiting badge.
QUERIES_ON_HOME = 9  # the tenant's labels are one of them


def events(tenant, action, actor="subject:alice"):
    return AuditEvent.objects.filter(tenant_id=tenant.pk, action=action, actor=actor)


def text(response) -> str:
    """The page's visible words, whitespace collapsed, for phrase assertions."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


class TestMyMemories:
    def test_facts_are_grouped_by_category_with_their_source(self, alice, alice_client):
        page = text(alice_client.get("/me/"))
        headings = ["Identity", "Preferences", "Constraints", "Scenario records", "Relations"]
        positions = [page.index(heading) for heading in headings]
        assert positions == sorted(positions)
        identity = page[positions[0] : positions[1]]
        assert "Name Alice You said this on 8 Nov 2026 in a chat." in identity
        assert "I'm Alice" in identity  # the quoted evidence
        assert "Role data engineer You said this on 8 Nov 2026 in a chat. Checked by our team." in identity
        assert "Project: flask-migration · Database MySQL" in page[positions[2] : positions[3]]

    def test_a_thread_scoped_fact_is_marked(self, alice, alice_client):
        html = alice_client.get("/me/").content.decode()
        card = html[html.index(f'id="fact-{alice.thread_pref.pk}"') :]
        card = card[: card.index("</li>")]
        assert "only for one conversation" in card
        name_card = html[html.index(f'id="fact-{alice.name.pk}"') :]
        assert "only for one conversation" not in name_card[: name_card.index("</li>")]

    def test_a_business_system_fact_says_so(self, tenant, submit, alice_client):
        submit(tenant, "alice", candidate(field="language", value="German", confidence=0.99), source="business_system")
        assert "From the business system, today." in text(alice_client.get("/me/"))

    def test_history_lists_every_version(self, tenant, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.name.pk}/correct/", {"value": "Alice Smith", "version": 1})
        page = text(alice_client.get(f"/me/facts/{alice.name.pk}/"))
        assert "History: 2 versions" in page
        assert page.index("Alice Smith you corrected it today") < page.index("Alice from a chat, on 8 Nov 2026")

    def test_a_correction_made_today_says_today_and_that_you_corrected_it(self, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.database.pk}/correct/", {"value": "PostgreSQL", "version": 1})
        html = alice_client.get("/me/").content.decode()
        card = html[html.index(f'id="fact-{alice.database.pk}"') :]
        card = re.sub(r"\s+", " ", card[: card.index("</li>")])
        assert "You corrected this today." in card and 'data-set-by="you"' in card
        assert "8 Nov 2026" not in card.split('class="versions"')[0]  # not the old chat's date
        assert "runs on MySQL" not in card  # nor the old value's quote

    def test_the_page_reads_in_a_fixed_number_of_queries(
        self, tenant, submit, say, alice, alice_client, django_assert_max_num_queries
    ):
        for n in range(20):  # many more facts and sources: the same number of queries
            say(tenant, "alice", f"extra-{n}", f"I like tea number {n}")
            submit(tenant, "alice", candidate(field="preference", value=f"tea {n}", confidence=0.97,
                                              source_message_id=f"extra-{n}", evidence=f"tea number {n}"))
        with django_assert_max_num_queries(QUERIES_ON_HOME):
            page = alice_client.get("/me/")
        assert page.status_code == 200 and "tea 19" in page.content.decode()

    def test_without_a_session_it_asks_for_a_link(self, client, db):
        response = client.get("/me/")
        assert response.status_code == 403 and "open your link again" in text(response)


class TestWaiting:
    def test_each_reason_has_its_question(self, alice, alice_client):
        html = alice_client.get("/me/waiting/").content.decode()

        def card(item):
            start = html.index(f'id="item-{item.pk}"')
            return re.sub(r"\s+", " ", html[start : html.index("</article>", start)])

        assert "This is sensitive. May we remember it?" in card(alice.sensitive)
        assert "Keep it for 90 days" in card(alice.sensitive) and "Keep it until I delete it" in card(alice.sensitive)
        assert "not sure we understood you" in card(alice.unsure)
        assert "Keep it for" not in card(alice.unsure)
        assert "You mentioned this as a plan" in card(alice.plan)
        # A conflict waiting for a reviewer is shown, not decided (SPEC §4): ours, then theirs.
        checking = re.sub(r"\s+", " ", html[html.index('id="conflicts-heading"') :])
        assert "Our team is checking" in checking and f'data-candidate="{alice.conflict.pk}"' in checking
        assert checking.index("MySQL") < checking.index("PostgreSQL")
        assert f'id="item-{alice.conflict.pk}"' not in html and f"/me/waiting/{alice.conflict.pk}/" not in html

    def test_a_conflict_reads_in_chinese(self, alice, alice_client):
        alice_client.cookies["django_language"] = "zh-hans"
        html = alice_client.get("/me/waiting/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

        checking = re.sub(r"\s+", " ", html[html.index('id="conflicts-heading"') :].split("</section>")[0])
        assert "我们的团队正在核对" in checking and "申请重新审核" in checking and "打开我们记住的内容" in checking
        assert "Our team" not in checking and "Open what" not in checking

    @pytest.mark.parametrize("keep,expected_days", [("retention", 90), ("forever", None)])
    def test_confirming_a_sensitive_item_with_a_retention_choice(self, tenant, alice, alice_client, keep, expected_days):
        response = alice_client.post(
            f"/me/waiting/{alice.sensitive.pk}/confirm/", {"version": alice.sensitive.version, "keep": keep}
        )
        assert response.status_code == 302
        fact = Fact.objects.get(subject__user_id="alice", field="health", status="active")
        assert fact.value == "asthma"
        if expected_days is None:
            assert fact.expires_at is None
            assert "Kept until you delete it." in text(alice_client.get("/me/"))
        else:
            assert abs(fact.expires_at - (timezone.now() + timedelta(days=expected_days))) < timedelta(minutes=1)
            assert "We forget it on" in text(alice_client.get("/me/"))
        event = events(tenant, "candidate.approved").get(object_id=str(alice.sensitive.pk))
        assert event.reason_code == "subject_confirmed"

    def test_correcting_an_item_publishes_the_right_value(self, tenant, alice, alice_client):
        response = alice_client.post(
            f"/me/waiting/{alice.unsure.pk}/correct/", {"version": alice.unsure.version, "value": "Hamburg"}
        )
        assert response.status_code == 302
        assert Fact.objects.get(subject__user_id="alice", field="location").value == "Hamburg"
        assert events(tenant, "candidate.edited_approved").filter(object_id=str(alice.unsure.pk)).exists()

    def test_a_correction_needs_a_value(self, alice, alice_client):
        response = alice_client.post(f"/me/waiting/{alice.unsure.pk}/correct/", {"version": 1, "value": " "})
        assert response.status_code == 400 and Candidate.objects.get(pk=alice.unsure.pk).status == "pending_user"

    def test_rejecting_an_item_suppresses_it(self, tenant, alice, alice_client):
        alice_client.post(f"/me/waiting/{alice.plan.pk}/reject/", {"version": alice.plan.version})
        item = Candidate.objects.get(pk=alice.plan.pk)
        assert (item.status, item.reason, item.decided_by) == ("rejected", "subject_rejected", "subject:alice")
        assert SuppressedValue.objects.filter(value_digest=value_digest("Redis")).exists()
        assert events(tenant, "candidate.rejected").exists()

    @pytest.mark.parametrize(
        "resolution,value,expected",
        [("keep_old", "", "MySQL"), ("take_new", "", "PostgreSQL"), ("edit", "SQLite", "SQLite")],
    )
    def test_settling_a_conflict_a_reviewer_sent_to_them(self, tenant, reviewer, alice, alice_client, resolution, value, expected):
        # A reviewer asked the subject (pending_user): now it is theirs to settle.
        deferred = candidate_defer(
            tenant=tenant, candidate_id=alice.conflict.pk, version=alice.conflict.version, actor=Actor.reviewer(reviewer)
        )
        card = alice_client.get("/me/waiting/").content.decode()
        assert f'action="/me/waiting/{alice.conflict.pk}/settle/"' in card
        response = alice_client.post(
            f"/me/waiting/{alice.conflict.pk}/settle/",
            {"version": deferred.version, "resolution": resolution, "value": value},
        )
        assert response.status_code == 302
        assert Fact.objects.get(pk=alice.database.pk).value == expected
        assert Candidate.objects.get(pk=alice.conflict.pk).decided_by == "subject:alice"

    def test_htmx_swaps_the_card(self, alice, alice_client):
        response = alice_client.post(
            f"/me/waiting/{alice.plan.pk}/confirm/", {"version": alice.plan.version}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200
        body = response.content.decode()
        assert f'id="item-{alice.plan.pk}"' in body and "<html" not in body
        assert "we will remember it" in body
        # The badge in the tabs is swapped out of band with the new count (3 waiting for
        # them, now 2; the conflict waits for a reviewer and is not counted).
        badge = re.search(r'<a id="waiting-tab"[^>]*hx-swap-oob="true"[^>]*>.*?</a>', body, re.S)
        assert badge and '<span class="badge"' in badge.group(0) and ">2</span>" in badge.group(0)

    def test_the_badge_goes_when_nothing_is_left(self, alice, alice_client):
        for item in (alice.sensitive, alice.unsure):
            alice_client.post(f"/me/waiting/{item.pk}/reject/", {"version": item.version})
        body = alice_client.post(
            f"/me/waiting/{alice.plan.pk}/reject/", {"version": alice.plan.version}, HTTP_HX_REQUEST="true"
        ).content.decode()
        badge = re.search(r'<a id="waiting-tab"[^>]*hx-swap-oob="true"[^>]*>.*?</a>', body, re.S)
        assert badge and "badge" not in badge.group(0).replace('id="waiting-tab"', "")

    def test_a_stale_decision_is_told_in_place(self, alice, alice_client):
        alice_client.post(f"/me/waiting/{alice.plan.pk}/confirm/", {"version": alice.plan.version})
        page = alice_client.post(f"/me/waiting/{alice.plan.pk}/reject/", {"version": alice.plan.version})
        assert page.status_code == 409 and "Someone else decided this item first." in text(page)
        fragment = alice_client.post(
            f"/me/waiting/{alice.unsure.pk}/reject/", {"version": 99}, HTTP_HX_REQUEST="true"
        )
        assert fragment.status_code == 409
        assert "This item changed since you loaded it" in fragment.content.decode()
        assert "<html" not in fragment.content.decode()

    def test_a_bad_form_is_a_400_not_a_500(self, alice, alice_client):
        for data in ({}, {"version": "x"}, {"version": 1, "keep": "always"}):
            response = alice_client.post(f"/me/waiting/{alice.sensitive.pk}/confirm/", data)
            assert response.status_code == 400
        response = alice_client.post(f"/me/waiting/{alice.conflict.pk}/settle/", {"version": 1, "resolution": "both"})
        assert response.status_code == 400


class TestFactControls:
    def test_a_correction_wins_over_the_chat_and_shows_as_self_service(self, tenant, submit, alice, alice_client):
        response = alice_client.post(
            f"/me/facts/{alice.database.pk}/correct/", {"value": "PostgreSQL 16", "version": alice.database.version}
        )
        assert response.status_code == 302 and response["Location"] == f"/me/#fact-{alice.database.pk}"
        fact = Fact.objects.get(pk=alice.database.pk)
        assert (fact.value, fact.source, fact.version) == ("PostgreSQL 16", "self_service", 2)
        assert events(tenant, "fact.edited").get().object_id == str(fact.pk)
        # "Saved" is said inside the corrected card (where #fact-N scrolls to), once.
        page = alice_client.get("/me/").content.decode()
        card = page[page.index(f'id="fact-{fact.pk}"') :]
        assert "Saved. From now on we remember what you wrote." in card[: card.index("</li>")]
        assert "Saved." not in page[: page.index(f'id="fact-{fact.pk}"')]
        assert "Saved." not in alice_client.get("/me/").content.decode()
        # The chat says MySQL again, even as an explicit correction: it does not override.
        [result] = submit(
            tenant, "alice",
            candidate(entity_type="project", entity_id="flask-migration", field="database", value="MySQL",
                      confidence=0.99, supersedes=True),
        )
        assert result.status == "pending_review"
        assert Fact.objects.get(pk=fact.pk).value == "PostgreSQL 16"
        page = alice_client.get("/me/").content.decode()
        card = page[page.index(f'id="fact-{fact.pk}"') :]
        assert 'data-source="self_service"' in card[: card.index("</li>")]
        assert "You corrected this today." in card[: card.index("</li>")]

    @pytest.mark.parametrize("value,problem", [("", "empty"), ("password: hunter2hunter2", "credential")])
    def test_a_bad_correction_is_refused_in_place(self, alice, alice_client, value, problem):
        response = alice_client.post(f"/me/facts/{alice.name.pk}/correct/", {"value": value, "version": 1})
        assert response.status_code == 400
        assert Fact.objects.get(pk=alice.name.pk).value == "Alice"

    def test_a_stale_correction_is_a_409(self, alice, alice_client):
        response = alice_client.post(f"/me/facts/{alice.name.pk}/correct/", {"value": "Al", "version": 7})
        assert response.status_code == 409 and "changed since you loaded it" in text(response)

    def test_deleting_a_fact_shows_what_goes_then_waits_for_the_undo_window(self, tenant, alice, alice_client):
        preview = text(alice_client.get(f"/me/facts/{alice.name.pk}/delete/"))
        assert "Delete this memory?" in preview and "Name" in preview and "Alice" in preview
        assert "from your memories" in preview and "from 1 chat message" in preview
        assert "from the assistant's memory store" in preview
        assert "undo it for 30 seconds" in preview
        # The preview wrote nothing: no event, no suppression, the fact as it was.
        assert Fact.objects.get(pk=alice.name.pk).value == "Alice"
        assert not events(tenant, "fact.deleted").exists()
        assert Message.objects.filter(subject__user_id="alice", content__contains="Alice").exists()

        response = alice_client.post(f"/me/facts/{alice.name.pk}/delete/", follow=True)
        assert response.redirect_chain[-1][0] == "/me/"
        page = text(response)
        assert "Name (Alice) will be deleted at" in page and "Undo" in page
        assert Fact.objects.get(pk=alice.name.pk).status == "active"  # nothing erased yet
        [scheduled] = events(tenant, "fact.deletion_scheduled")
        assert scheduled.actor == "subject:alice" and scheduled.object_id == str(alice.name.pk)

    @pytest.mark.parametrize("language, shown", [
        ("en", "Name (Alice) will be deleted at 9 Nov 2026, 07:02 CST."),
        ("zh-hans", "将在 2026年11月9日 07:02 CST 删除"),
    ])
    def test_the_time_of_a_deletion_says_its_day_and_time_zone(self, alice, alice_client, settings, language, shown):
        settings.TIME_ZONE = "Asia/Shanghai"  # 23:02 UTC is the next morning there
        alice_client.cookies["django_language"] = language
        with time_machine.travel(datetime(2026, 11, 8, 23, 1, 45, tzinfo=dt_timezone.utc), tick=False):
            alice_client.post(f"/me/facts/{alice.name.pk}/delete/")
            page = text(alice_client.get("/me/deletions/", HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language))
        assert shown in page, page

    def test_after_the_window_the_page_carries_the_deletion_out_and_says_where(self, tenant, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.name.pk}/delete/")
        FactDeletion.objects.update(due_at=timezone.now() - timedelta(seconds=1))
        page = text(alice_client.get("/me/"))
        assert ("Name — deleted from your memories, from 1 chat message and from the assistant's memory store"
                in page), page
        assert "Alice" not in page.replace("Alice Smith", "")
        assert Fact.objects.get(pk=alice.name.pk).status == "deleted"
        assert events(tenant, "memory.deleted").filter(actor="subject:alice").exists()
        deletion = FactDeletion.objects.get()
        assert deletion.status == DeletionStatus.DONE and deletion.receipt["deleted"]["facts"] == 1
        assert "Alice" not in json.dumps(deletion.receipt)
        # Too late to undo now.
        response = alice_client.post(f"/me/deletions/{deletion.pk}/undo/", follow=True)
        assert "Too late to undo" in text(response)
        assert Fact.objects.get(pk=alice.name.pk).status == "deleted"

    def test_undo_inside_the_window_keeps_the_memory(self, tenant, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.name.pk}/delete/")
        deletion = FactDeletion.objects.get()
        response = alice_client.post(f"/me/deletions/{deletion.pk}/undo/", follow=True)
        assert "Undone: we keep this memory." in text(response)
        deletion.refresh_from_db()
        assert deletion.status == DeletionStatus.UNDONE
        FactDeletion.objects.update(due_at=timezone.now() - timedelta(seconds=1))
        alice_client.get("/me/")
        assert Fact.objects.get(pk=alice.name.pk).value == "Alice"
        [undone] = events(tenant, "fact.deletion_undone")
        assert undone.actor == "subject:alice"

    def test_the_deletions_panel_polls_while_one_is_scheduled(self, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.name.pk}/delete/")
        panel = alice_client.get("/me/deletions/", HTTP_HX_REQUEST="true").content.decode()
        assert 'hx-trigger="every 3s"' in panel and 'data-status="scheduled"' in panel
        FactDeletion.objects.update(due_at=timezone.now() - timedelta(seconds=1))
        panel = alice_client.get("/me/deletions/", HTTP_HX_REQUEST="true").content.decode()
        assert "hx-trigger" not in panel and 'data-status="done"' in panel

    def test_contesting_from_the_page(self, tenant, alice, alice_client):
        page = text(alice_client.get(f"/me/facts/{alice.role.pk}/"))
        assert "Ask our team to look again" in page
        assert "Ask our team to look again" not in text(alice_client.get(f"/me/facts/{alice.name.pk}/"))
        response = alice_client.post(f"/me/facts/{alice.role.pk}/contest/", {"note": "not any more"}, follow=True)
        assert "With our team" in text(response) and "not any more" in text(response)
        assert events(tenant, "fact.contested").exists()

    def test_contesting_a_fact_nobody_reviewed_is_refused(self, alice, alice_client):
        response = alice_client.post(f"/me/facts/{alice.name.pk}/contest/", {})
        assert response.status_code == 409


class TestControls:
    def test_pause_and_resume(self, tenant, alice, alice_client):
        response = alice_client.post("/me/controls/pause/", {"paused": "1"}, follow=True)
        assert "Memory is paused" in text(response)
        assert Subject.objects.get(tenant=tenant, user_id="alice").collection_paused
        fragment = alice_client.post("/me/controls/pause/", {"paused": "0"}, HTTP_HX_REQUEST="true")
        assert 'data-paused="0"' in fragment.content.decode() and "<html" not in fragment.content.decode()
        # The banner at the top goes with it, out of band.
        assert '<div id="paused-banner" hx-swap-oob="true"></div>' in fragment.content.decode()
        paused = alice_client.post("/me/controls/pause/", {"paused": "1"}, HTTP_HX_REQUEST="true").content.decode()
        assert 'id="paused-banner" hx-swap-oob="true"><p class="notice paused"' in paused
        alice_client.post("/me/controls/pause/", {"paused": "0"})
        assert not Subject.objects.get(tenant=tenant, user_id="alice").collection_paused
        assert events(tenant, "subject.collection_paused").exists()
        assert events(tenant, "subject.collection_resumed").exists()
        assert alice_client.post("/me/controls/pause/", {"paused": "maybe"}).status_code == 302

    def test_download_everything(self, tenant, alice, alice_client):
        response = alice_client.get("/me/controls/export.json")
        assert response.status_code == 200 and response["Content-Type"] == "application/json"
        assert response["Content-Disposition"].startswith('attachment; filename="my-memories-')
        document = json.loads(response.content)
        assert document["user_id"] == "alice" and len(document["messages"]) == 4
        assert events(tenant, "subject.exported").exists()

    def test_the_controls_list_conversations_topics_and_fields(self, alice, alice_client):
        page = text(alice_client.get("/me/controls/"))
        # Conversations by their first words and date, never their thread ids.
        assert "alice-t1" not in page and "alice-t2" not in page
        assert "“Hi, I'm Alice and I work as a…” (8 Nov 2026 · 2 messages · 3 memories)" in page
        assert "“In this chat, answer in German please.” (8 Nov 2026" in page
        assert "Project: flask-migration" in page and "Name" in page

    def test_delete_by_conversation(self, tenant, alice, alice_client):
        confirm = alice_client.get("/me/controls/delete/", {"thread_id": "alice-t1"})
        assert confirm.status_code == 200
        page = text(confirm)
        assert "Conversation “Hi, I'm Alice and I work as a…”, on 8 Nov 2026" in page and "alice-t1" not in page
        assert "2 chat messages" in page and "3 memories" in page
        response = alice_client.post("/me/controls/delete/", {"thread_id": "alice-t1"}, follow=True)
        receipt = text(response)
        assert "2 chat messages" in receipt and "3 memories" in receipt
        assert not Message.objects.filter(subject__user_id="alice", thread_id="alice-t1").exists()
        assert Message.objects.filter(subject__user_id="alice", thread_id="alice-t2").count() == 2
        assert not Fact.objects.filter(pk__in=[alice.name.pk, alice.role.pk, alice.database.pk], status="active")
        assert Fact.objects.get(pk=alice.thread_pref.pk).status == "active"
        assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="memory.deleted", actor="subject:alice").exists()

    def test_delete_by_entity(self, alice, alice_client):
        confirm = alice_client.get("/me/controls/delete/", {"entity": "project:flask-migration"})
        assert confirm.status_code == 200 and "0 chat messages" in text(confirm)
        alice_client.post("/me/controls/delete/", {"entity": "project:flask-migration"})
        assert Fact.objects.get(pk=alice.database.pk).status == "deleted"
        assert Fact.objects.get(pk=alice.name.pk).status == "active"
        assert Message.objects.filter(subject__user_id="alice").count() == 4

    def test_delete_by_field(self, alice, alice_client):
        alice_client.post("/me/controls/delete/", {"field": "role"})
        assert Fact.objects.get(pk=alice.role.pk).status == "deleted"
        assert Fact.objects.get(pk=alice.name.pk).status == "active"

    @pytest.mark.parametrize("scope", [
        {"entity": "project:my key is AKIAIOSFODNN7EXAMPLE"}, {"entity": "project:a\u202eb"},
        {"entity": "project:" + "x" * 129}, {"entity": "project:a\x00b"}, {"entity": "project"},
        {"thread_id": "alice-t1\u200b\x01"},
    ], ids=["credential id", "invisible id", "id too long", "nul id", "no id", "control characters in thread"])
    def test_a_scope_whose_id_is_not_an_identifier_is_refused_and_deletes_nothing(self, tenant, alice, alice_client,
                                                                                   scope):
        alice_client.raise_request_exception = False
        events = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
        for response in (alice_client.get("/me/controls/delete/", scope),
                         alice_client.post("/me/controls/delete/", scope)):
            assert response.status_code == 302 and response["Location"] == "/me/controls/", response.exc_info
        shown = text(alice_client.get("/me/controls/"))
        assert "must" in shown or "type:id" in shown
        assert Fact.objects.filter(subject__user_id="alice", status="active").count() == 4
        assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events

    def test_a_deletion_needs_a_scope(self, alice, alice_client):
        response = alice_client.post("/me/controls/delete/", {})
        assert response.status_code == 302
        assert Fact.objects.filter(subject__user_id="alice", status="active").count() == 4

    def test_forget_me_confirms_with_counts_then_erases(self, tenant, alice, alice_client):
        confirm = text(alice_client.get("/me/controls/forget/"))
        assert "4 memories" in confirm and "4 chat messages" in confirm
        assert f"{Candidate.objects.filter(subject__user_id='alice').count()} suggestions" in confirm
        refused = alice_client.post("/me/controls/forget/", {})
        assert refused.status_code == 400 and Fact.objects.filter(subject__user_id="alice").exists()
        response = alice_client.post("/me/controls/forget/", {"confirm_text": "forget me"}, follow=True)
        receipt = text(response)
        assert "Deleted" in receipt and "4 chat messages" in receipt
        assert not Fact.objects.filter(subject__user_id="alice").exists()
        assert not Message.objects.filter(subject__user_id="alice").exists()
        assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="subject.erased", actor="subject:alice").exists()
        assert "does not remember anything about you" in text(alice_client.get("/me/"))

    def test_forget_me_with_the_recall_stream_out_of_reach_erases_nothing_and_says_so(
        self, tenant, alice, alice_client, settings
    ):
        from tests.worker.brokers import unused_port

        settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"
        events = AuditEvent.objects.filter(tenant_id=tenant.pk).count()

        response = alice_client.post("/me/controls/forget/", {"confirm_text": "forget me"})

        assert response.status_code == 503
        assert "Nothing was deleted" in text(response) and "try again" in text(response)
        assert Fact.objects.filter(subject__user_id="alice", status="active").count() == 4
        assert AuditEvent.objects.filter(tenant_id=tenant.pk).count() == events
        chinese = alice_client.post("/me/controls/forget/", {"confirm_text": "forget me"},
                                    HTTP_ACCEPT_LANGUAGE="zh-Hans")
        assert "未删除任何内容" in text(chinese)

    def test_a_deletion_by_scope_with_the_recall_stream_out_of_reach_deletes_nothing(
        self, tenant, alice, alice_client, settings
    ):
        from tests.worker.brokers import unused_port

        settings.MEMORY_RECALL_RECORD_STREAM_URL = f"redis://127.0.0.1:{unused_port()}/0"

        response = alice_client.post("/me/controls/delete/", {"field": "role"})

        assert response.status_code == 503 and "Nothing was deleted" in text(response)
        assert Fact.objects.filter(subject__user_id="alice", status="active").count() == 4


class TestLanguages:
    def test_the_pages_speak_simplified_chinese(self, alice, alice_client):
        page = text(alice_client.get("/me/", HTTP_ACCEPT_LANGUAGE="zh-Hans"))
        assert "我的记忆" in page and "身份" in page
        assert "2026年11月8日" in page
        waiting = text(alice_client.get("/me/waiting/", HTTP_ACCEPT_LANGUAGE="zh-Hans"))
        assert "等你确认" in waiting and "保留 90 天" in waiting


class TestOnlyWhatIsTheirs:
    """The subject decides `pending_user` items and their own facts, never an item waiting
    for a reviewer (SPEC §4; every kind of such item: tests/portal/test_subject_guard.py)."""

    @pytest.fixture
    def for_review(self, tenant, submit, alice):
        [result] = submit(tenant, "alice", candidate(field="language", value="French", confidence=0.9))
        assert (result.status, result.reason) == ("pending_review", "needs_review")
        return Candidate.objects.get(pk=result.candidate_id)

    @pytest.mark.parametrize(
        "action,data",
        [
            ("confirm", {}),
            ("correct", {"value": "Spanish"}),
            ("reject", {}),
            ("settle", {"resolution": "take_new", "value": ""}),
        ],
    )
    def test_an_item_waiting_for_a_reviewer_is_refused(self, tenant, for_review, alice_client, action, data):
        response = alice_client.post(f"/me/waiting/{for_review.pk}/{action}/", {"version": for_review.version, **data})
        assert response.status_code == 403
        item = Candidate.objects.get(pk=for_review.pk)
        assert (item.status, item.version, item.decided_by) == ("pending_review", for_review.version, "")
        assert not Fact.objects.filter(subject__user_id="alice", field="language").exists()
        assert not AuditEvent.objects.filter(tenant_id=tenant.pk, actor="subject:alice", object_id=str(item.pk)).exists()

    def test_their_own_contest_is_for_a_reviewer_to_decide(self, tenant, alice, alice_client):
        alice_client.post(f"/me/facts/{alice.role.pk}/contest/", {"note": "I left that job"})
        contest = Candidate.objects.get(subject__user_id="alice", flags__contains=["contested"])
        response = alice_client.post(f"/me/waiting/{contest.pk}/confirm/", {"version": contest.version})
        assert response.status_code == 403
        assert Candidate.objects.get(pk=contest.pk).status == "pending_review"
        assert Fact.objects.get(pk=alice.role.pk).status == "contested"


class TestChineseSpacing:
    """The subject's pages in Chinese have no ASCII space between two Chinese characters,
    within an element or across elements (tests/review/test_chinese_pages.py's check; the
    portal's words are checked by its catalogue test)."""

    def test_no_space_between_chinese_words_on_any_page(self, alice, alice_client):
        from tests.review.test_chinese_pages import problems_in

        alice_client.cookies["django_language"] = "zh-hans"
        alice_client.post(f"/me/facts/{alice.name.pk}/delete/")  # a scheduled deletion on the page
        paths = ["/me/", "/me/waiting/", "/me/controls/", "/me/about/", f"/me/facts/{alice.role.pk}/",
                 f"/me/facts/{alice.database.pk}/"]
        found = {}
        for path in paths:
            response = alice_client.get(path, HTTP_ACCEPT_LANGUAGE="zh-hans")
            assert response.status_code == 200, path
            problems = problems_in(response.content.decode(), english=False)
            if problems:
                found[path] = problems
        assert not found, "\n".join(f"{path}:\n  " + "\n  ".join(problems) for path, problems in found.items())
