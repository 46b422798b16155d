"""An item's own page (issue 38.6): its whole history and the comments between reviewers.

The service (audited, screened, length-limited), the page's history (every event that
touched the item, in order, people by name, times with their zone, before → after), the
comment form with and without htmx, and who may do what: an auditor reads and is refused
(403), another tenant's reviewer finds nothing (404)."""
import re
from pathlib import Path

import pytest
from django.utils import timezone, translation
from django.utils.dateformat import format as date_format

from reviews.actors import Actor
from reviews.errors import InvalidInput, NotFound
from reviews.models import AuditEvent, AuditPayload, Candidate, CandidateComment
from reviews.models.comments import MAX_COMMENT_LENGTH
from reviews.services.candidates import candidate_approve, candidate_reject
from reviews.services.claims import candidates_claim
from reviews.services.comments import candidate_comment_add
from reviews.selectors.queue import QueueFilters
from tests.conftest import candidate
from tests.review.conftest import propose
from tests.review.test_decisions_pages import messages_of

# A credential as a colleague might paste it: the boundary masks it before it is stored.
OPENAI_KEY = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


@pytest.fixture
def item(tenant):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    return item


def page_url(item) -> str:
    return f"/review/candidates/{item.pk}/"


def comment_url(item) -> str:
    return f"/review/candidates/{item.pk}/comments"


def commented_events(item):
    return AuditEvent.objects.filter(action="candidate.commented", object_type="candidate", object_id=str(item.pk))


class TestTheService:
    def test_a_comment_is_stored_and_audited_in_the_same_transaction(self, tenant, reviewer, item):
        comment = candidate_comment_add(
            tenant=tenant, candidate_id=item.pk, author=reviewer, body="  Is Berlin the city or the company?  ",
            actor=Actor.reviewer(reviewer),
        )
        assert (comment.body, comment.author, comment.candidate_id) == ("Is Berlin the city or the company?", reviewer, item.pk)
        [event] = commented_events(item)
        assert event.actor == f"reviewer:{reviewer.pk}" and event.subject_user_id == "alice"
        payload = AuditPayload.objects.get(event=event)
        assert payload.after == {"comment_id": comment.pk, "body": "Is Berlin the city or the company?"}

    def test_a_credential_is_masked_before_it_is_stored_or_audited(self, tenant, reviewer, item):
        comment = candidate_comment_add(
            tenant=tenant, candidate_id=item.pk, author=reviewer, body=f"the user pasted {OPENAI_KEY} here",
            actor=Actor.reviewer(reviewer),
        )
        assert OPENAI_KEY not in comment.body and "[redacted" in comment.body
        assert CandidateComment.objects.get(pk=comment.pk).body == comment.body
        assert OPENAI_KEY not in str(AuditPayload.objects.get(event=commented_events(item).get()).after)

    @pytest.mark.parametrize(("body", "problem"), [("", "empty"), ("   \n ", "empty"), ("x" * (MAX_COMMENT_LENGTH + 1), "too_long")])
    def test_an_empty_or_too_long_comment_is_refused(self, tenant, reviewer, item, body, problem):
        with pytest.raises(InvalidInput) as refused:
            candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body=body, actor=Actor.reviewer(reviewer))
        assert refused.value.details == {"body": problem}
        assert not CandidateComment.objects.exists() and not commented_events(item).exists()

    def test_a_nul_character_is_refused_at_the_boundary(self, tenant, reviewer, item):
        with pytest.raises(InvalidInput):
            candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="a\x00b", actor=Actor.reviewer(reviewer))
        assert not CandidateComment.objects.exists()

    def test_another_tenants_item_is_not_found(self, other_tenant, outsider, item):
        with pytest.raises(NotFound):
            candidate_comment_add(
                tenant=other_tenant, candidate_id=item.pk, author=outsider, body="mine?", actor=Actor.reviewer(outsider)
            )
        assert not CandidateComment.objects.exists() and not AuditEvent.objects.filter(action="candidate.commented").exists()


class TestPosting:
    def test_a_reviewer_posts_a_comment_without_javascript(self, reviewer_client, reviewer, item):
        response = reviewer_client.post(comment_url(item), {"body": "Check the second message."})
        assert response.status_code == 302 and response["Location"] == f"{page_url(item)}#comments"
        assert messages_of(response) == ["Comment added."]
        [comment] = CandidateComment.objects.filter(candidate=item)
        assert comment.author == reviewer and comment.body == "Check the second message."
        assert commented_events(item).count() == 1
        html = reviewer_client.get(page_url(item)).content.decode()
        assert "Check the second message." in html and ">rita</b>" in html

    def test_with_htmx_the_thread_is_swapped_in_place(self, reviewer_client, item):
        response = reviewer_client.post(comment_url(item), {"body": "Line one\nline two"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        html = response.content.decode()
        assert "<!doctype" not in html.lower() and "data-comment-form" in html
        assert "Line one<br>line two" in html
        assert '<textarea name="body" id="id_body" rows="3" maxlength="2000" required autofocus></textarea>' in html
        # The history comes along out of band, with the new event in it.
        history = html.split('id="history"', 1)[1]
        assert 'hx-swap-oob="true"' in history.split(">", 1)[0]
        assert 'data-history-event="candidate.commented"' in history

    @pytest.mark.parametrize("htmx", [False, True])
    def test_an_empty_comment_gets_a_clear_form_error(self, reviewer_client, item, htmx):
        headers = {"HX-Request": "true"} if htmx else {}
        response = reviewer_client.post(comment_url(item), {"body": "   "}, headers=headers)
        assert response.status_code == 400
        html = response.content.decode()
        assert "Write something first: an empty comment is not posted." in html and 'aria-invalid="true"' in html
        assert not CandidateComment.objects.exists() and not commented_events(item).exists()

    def test_a_too_long_comment_gets_a_form_error_and_keeps_the_text(self, reviewer_client, item):
        response = reviewer_client.post(comment_url(item), {"body": "y" * (MAX_COMMENT_LENGTH + 1)}, HTTP_HX_REQUEST="true")
        assert response.status_code == 400
        html = response.content.decode()
        assert "data-comment-error" in html and "y" * 100 in html
        assert not CandidateComment.objects.exists()

    def test_a_tenant_admin_may_comment(self, tenant_admin, item):
        from tests.review.conftest import signed_in

        assert signed_in(tenant_admin).post(comment_url(item), {"body": "Admin here."}).status_code == 302
        assert CandidateComment.objects.get().author == tenant_admin


class TestWhoMay:
    def test_an_auditor_reads_comments_but_cannot_add_one(self, tenant, reviewer, auditor_client, item):
        candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="For the record.", actor=Actor.reviewer(reviewer))
        html = auditor_client.get(page_url(item)).content.decode()
        assert "For the record." in html and "data-comments-read-only" in html and "data-comment-form" not in html
        response = auditor_client.post(comment_url(item), {"body": "Me too."})
        assert response.status_code == 403
        assert CandidateComment.objects.count() == 1 and commented_events(item).count() == 1

    def test_another_tenants_reviewer_finds_neither_the_page_nor_the_thread(self, tenant, reviewer, outsider_web_client, item):
        candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="Internal.", actor=Actor.reviewer(reviewer))
        assert outsider_web_client.get(page_url(item)).status_code == 404
        response = outsider_web_client.post(comment_url(item), {"body": "Hello from elsewhere."})
        assert response.status_code == 404
        assert CandidateComment.objects.count() == 1

    def test_signed_out_is_sent_to_sign_in(self, client, item):
        response = client.post(comment_url(item), {"body": "anon"})
        assert response.status_code == 302 and "/login/" in response["Location"]
        assert not CandidateComment.objects.exists()

    def test_a_get_is_not_a_comment(self, reviewer_client, item):
        assert reviewer_client.get(comment_url(item)).status_code == 405


class TestTheHistory:
    def test_every_event_in_order_with_people_named(self, tenant, reviewer, second_reviewer, reviewer_client, item):
        candidates_claim(tenant=tenant, filters=QueueFilters(), count=5, actor=Actor.reviewer(second_reviewer))
        candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="Looks right.", actor=Actor.reviewer(reviewer))
        candidate_approve(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), value="Berlin, Germany")
        html = reviewer_client.get(page_url(item)).content.decode()
        history = html.split("data-item-history", 1)[1].split("</ol>", 1)[0]
        shown = [part.split('"', 1)[0] for part in history.split('data-history-event="')[1:]]
        expected = list(
            AuditEvent.objects.filter(subject_user_id="alice", object_type="candidate", object_id=str(item.pk))
            .order_by("seq").values_list("action", flat=True)
        )
        assert "candidate.edited_approved" in expected and "candidate.commented" in expected
        # The claim sits in the tenant's order between the item's own events.
        assert [action for action in shown if action != "candidates.claimed"] == expected
        assert shown.index("candidates.claimed") < shown.index("candidate.commented") < shown.index("candidate.edited_approved")
        # People by name, never by id; times with their zone.
        assert "rita" in history and "rob" in history
        assert f"reviewer:{reviewer.pk}" not in history.replace('title="', "")
        assert " UTC</time>" in history
        # An edit reads before → after.
        assert 'class="before text">Berlin</span>' in history and 'class="after text">Berlin, Germany</span>' in history

    def test_a_rejection_shows_its_reason(self, tenant, reviewer, reviewer_client, item):
        candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), note="moved away")
        history = reviewer_client.get(page_url(item)).content.decode().split("data-item-history", 1)[1]
        assert 'data-history-event="candidate.rejected"' in history and "moved away" in history

    def test_another_items_events_are_not_in_it(self, tenant, reviewer, reviewer_client, item):
        [other] = propose(tenant, "alice", candidate(field="role", value="Engineer"))
        candidate_comment_add(tenant=tenant, candidate_id=other.pk, author=reviewer, body="About the other one.", actor=Actor.reviewer(reviewer))
        html = reviewer_client.get(page_url(item)).content.decode()
        assert "About the other one." not in html and 'data-history-event="candidate.commented"' not in html

    def test_in_chinese(self, tenant, reviewer, reviewer_client, item):
        candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="请核对。", actor=Actor.reviewer(reviewer))
        reviewer_client.cookies["django_language"] = "zh-hans"
        with translation.override("zh-hans"):
            html = reviewer_client.get(page_url(item), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
        assert "审核员之间的评论" in html and "历史" in html and "发表评论" in html

    def test_the_queue_links_to_the_page(self, reviewer_client, item):
        html = reviewer_client.get(page_url(item)).content.decode()
        assert f'href="/review/candidates/{item.pk}/#history" data-item-page' in html
        body = reviewer_client.get(f"/review/candidates/{item.pk}/body", HTTP_HX_REQUEST="true").content.decode()
        assert f'href="/review/candidates/{item.pk}/#history" data-item-page' in body

    def test_the_page_reads_a_fixed_number_of_queries(self, tenant, reviewer, reviewer_client, item, django_assert_max_num_queries):
        for number in range(12):
            candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body=f"note {number}", actor=Actor.reviewer(reviewer))
        # Ten today (the sign-in, membership, the item's context, history, comments): none per comment.
        with django_assert_max_num_queries(12):
            assert reviewer_client.get(page_url(item)).status_code == 200


def test_a_candidate_erased_with_its_subject_takes_its_comments(tenant, reviewer, tenant_admin, item):
    from reviews.services.erasure import subject_erase

    candidate_comment_add(tenant=tenant, candidate_id=item.pk, author=reviewer, body="alice lives in Berlin", actor=Actor.reviewer(reviewer))
    subject_erase(tenant=tenant, user_id="alice", actor=Actor.reviewer(tenant_admin))
    assert not CandidateComment.objects.exists() and not Candidate.objects.filter(pk=item.pk).exists()
    assert not AuditPayload.objects.filter(event__in=commented_events(item)).exists()


def oob_history(html: str) -> str:
    """The history section an htmx answer carries out of band ("" when it carries none)."""
    if 'id="history"' not in html:
        return ""
    opening, rest = html.split('id="history"', 1)[1].split(">", 1)
    assert 'hx-swap-oob="true"' in opening
    return rest.split("</section>", 1)[0]


class TestDecidingOnThePage:
    """A decision made on the item's own page shows in its history at once (issue 38 polish):
    the answer carries the history out of band, as a comment's does."""

    @pytest.mark.parametrize(
        "action, form, event",
        [
            ("approve", {}, "candidate.approved"),
            ("approve", {"value": "Berlin, Germany"}, "candidate.edited_approved"),
            ("reject", {"note": "she moved away"}, "candidate.rejected"),
            ("defer", {}, "candidate.deferred"),
        ],
    )
    def test_the_history_gains_the_decisions_event(self, reviewer_client, item, action, form, event):
        response = reviewer_client.post(
            f"/review/candidates/{item.pk}/{action}", {"version": 1, "next": page_url(item), **form}, HTTP_HX_REQUEST="true"
        )

        assert response.status_code == 200, response.content
        history = oob_history(response.content.decode())
        assert f'data-history-event="{event}"' in history
        # What it shows is what the audit trail recorded, in order.
        recorded = AuditEvent.objects.filter(object_type="candidate", object_id=str(item.pk)).order_by("seq")
        assert [p.split('"', 1)[0] for p in history.split('data-history-event="')[1:]] == list(
            recorded.values_list("action", flat=True)
        )

    def test_an_undo_on_the_page_shows_in_the_history_too(self, reviewer_client, item):
        reviewer_client.post(f"/review/candidates/{item.pk}/approve", {"version": 1, "next": page_url(item)}, HTTP_HX_REQUEST="true")

        response = reviewer_client.post(f"/review/candidates/{item.pk}/undo", {"next": page_url(item)}, HTTP_HX_REQUEST="true")

        assert response.status_code == 200
        assert 'data-history-event="candidate.decision_undone"' in oob_history(response.content.decode())

    def test_a_decision_on_the_queue_carries_no_history(self, reviewer_client, item):
        """The queue has no history section for it to land in."""
        response = reviewer_client.post(
            f"/review/candidates/{item.pk}/approve", {"version": 1, "next": "/review/"}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200 and 'id="history"' not in response.content.decode()

    def test_a_stale_decision_changes_nothing_and_the_history_says_what_did(self, tenant, second_reviewer, reviewer_client, item):
        candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(second_reviewer), note="dup")
        events = AuditEvent.objects.count()

        response = reviewer_client.post(
            f"/review/candidates/{item.pk}/approve", {"version": 1, "next": page_url(item)}, HTTP_HX_REQUEST="true"
        )

        assert response.status_code == 409
        assert AuditEvent.objects.count() == events and Candidate.objects.get(pk=item.pk).status == "rejected"
        assert 'data-history-event="candidate.rejected"' in oob_history(response.content.decode())

    def test_an_auditor_is_refused_and_the_history_is_unchanged(self, auditor_client, item):
        events = AuditEvent.objects.count()
        response = auditor_client.post(
            f"/review/candidates/{item.pk}/approve", {"version": 1, "next": page_url(item)}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 403
        assert AuditEvent.objects.count() == events and Candidate.objects.get(pk=item.pk).version == 1

    def test_another_tenants_reviewer_cannot_decide_it(self, outsider_web_client, item):
        response = outsider_web_client.post(
            f"/review/candidates/{item.pk}/approve", {"version": 1, "next": page_url(item)}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 404
        assert Candidate.objects.get(pk=item.pk).version == 1


class TestTimesReadTheSame:
    """Every reviewer page prints a time with one helper (labels.moment): date, time and zone."""

    def test_no_reviewer_template_formats_a_time_of_its_own(self):
        # A format string with an hour or minute in it; a named format (SHORT_DATE_FORMAT, a
        # day) and the machine-readable 'c' of a datetime attribute are not a time shown.
        formats = [
            (path.name, match.group(1))
            for path in Path("templates/reviews").rglob("*.html")
            for match in re.finditer(r"""\|date:["']([^"']*)["']""", path.read_text())
        ]
        assert ("candidate.html", "Y-m-d H:i T") not in formats and formats  # the walk reads the templates
        own = [(name, fmt) for name, fmt in formats if not re.fullmatch(r"[A-Z_]+|c", fmt) and re.search(r"[HGgi]", fmt)]
        assert own == []

    @pytest.mark.parametrize("language, expected", [("en", "{day} {month} {year}, {hm} UTC"), ("zh-hans", "{year}年{m}月{day}日 {hm} UTC")])
    def test_the_item_page_and_my_decisions_print_a_decision_alike(self, tenant, reviewer, reviewer_client, item, language, expected):
        candidate_reject(tenant=tenant, candidate_id=item.pk, version=1, actor=Actor.reviewer(reviewer), note="dup")
        at = AuditEvent.objects.get(action="candidate.rejected", object_id=str(item.pk)).created_at
        local = timezone.localtime(at)
        with translation.override(language):
            month = date_format(local, "M")
        text = expected.format(day=local.day, month=month, year=local.year, m=local.month, hm=local.strftime("%H:%M"))
        reviewer_client.cookies["django_language"] = language
        with translation.override(language):
            item_page = reviewer_client.get(page_url(item), HTTP_ACCEPT_LANGUAGE=language).content.decode()
            mine = reviewer_client.get("/review/mine/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        history = item_page.split("data-item-history", 1)[1]
        assert f">{text}</time>" in history
        assert f">{text}</time>" in mine
