"""The auditor's log browser: filters, cursor pages, before/after (erased shown as such),
links to objects, chain status; a reviewer gets the styled 403; tenants stay apart."""
from datetime import datetime, timezone as dt_timezone

import pytest
import time_machine
from django.core.cache import cache
from django.urls import reverse
from django.utils import translation

from reviews.actors import Actor
from reviews.labels import moment
from reviews.models import AuditEvent
from reviews.services.erasure import subject_erase
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose, signed_in

LOG = reverse("reviews:audit-log")


@pytest.fixture(autouse=True)
def _no_cached_chain_status():
    cache.clear()


@pytest.fixture
def decided(tenant, reviewer):
    [item] = propose(tenant, "alice", candidate(field="location", value="Berlin"))
    approve_as(reviewer, item)
    propose(tenant, "bob", candidate(field="location", value="Oslo"))
    return item


def test_it_lists_events_newest_first_with_before_after_and_links(tenant, decided, auditor, reviewer):
    html = signed_in(auditor).get(LOG).content.decode()
    newest = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    assert html.index(f'data-event="{newest.seq}"') < html.index(f'data-event="{newest.seq - 1}"')
    assert "Chain verified:" in html
    assert f'href="{reverse("reviews:candidate", args=[decided.pk])}"' in html
    assert "rita" in html  # the reviewer actor by name
    assert "&quot;Berlin&quot;" in html


def test_filters_by_actor_action_subject_and_object(tenant, decided, auditor, reviewer):
    client = signed_in(auditor)
    html = client.get(LOG, {"actor": f"reviewer:{reviewer.pk}"}).content.decode()
    assert html.count('class="event"') == AuditEvent.objects.filter(tenant_id=tenant.pk, actor=f"reviewer:{reviewer.pk}").count()
    html = client.get(LOG, {"action": "candidate.approved"}).content.decode()
    assert html.count('class="event"') == 1
    html = client.get(LOG, {"user_id": "bob"}).content.decode()
    assert "Oslo" in html and "Berlin" not in html
    html = client.get(LOG, {"object": f"candidate:{decided.pk}"}).content.decode()
    assert html.count('class="event"') == AuditEvent.objects.filter(
        tenant_id=tenant.pk, object_type="candidate", object_id=str(decided.pk)
    ).count()


def test_it_pages_with_a_cursor(tenant, decided, auditor):
    from reviews.views import auditor as auditor_views

    total = AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    client = signed_in(auditor)
    seen, url = [], LOG
    original = auditor_views.LOG_PAGE_SIZE
    auditor_views.LOG_PAGE_SIZE = 3
    try:
        while url:
            html = client.get(url).content.decode()
            seen += [int(part.split('"')[0]) for part in html.split('data-event="')[1:]]
            url = html.split('href="')[-1].split('"')[0].replace("&amp;", "&") if "data-older" in html else ""
    finally:
        auditor_views.LOG_PAGE_SIZE = original
    assert seen == sorted(seen, reverse=True) and len(seen) == total


def test_erased_values_are_shown_as_erased(tenant, decided, auditor):
    subject_erase(tenant=tenant, user_id="alice", actor=Actor.reviewer(auditor))
    html = signed_in(auditor).get(LOG, {"action": "candidate.approved"}).content.decode()
    assert "data-erased" in html and "Berlin" not in html


def test_a_reviewer_gets_a_styled_403_with_navigation(decided, reviewer):
    response = signed_in(reviewer).get(LOG)
    html = response.content.decode()
    assert response.status_code == 403
    assert "Not allowed" in html and 'class="topbar"' in html and reverse("reviews:queue") in html


def test_another_tenants_events_never_show(tenant, other_tenant, decided, outsider):
    from tests.review.conftest import propose as propose_in

    propose_in(other_tenant, "zed", candidate(field="location", value="Quito"))
    from reviews.models import Membership

    Membership.objects.filter(user=outsider).update(role="auditor")
    html = signed_in(outsider).get(LOG).content.decode()
    assert "Quito" in html and "Berlin" not in html and "Oslo" not in html


def test_a_bad_filter_is_a_400_page_not_a_500(auditor):
    assert signed_in(auditor).get(LOG, {"since": "yesterday-ish"}).status_code == 400


@pytest.mark.parametrize("language,checked", [("en", "checked 7 Mar 2026, 23:02 UTC."), ("zh-hans", "验证于 2026年3月7日 23:02 UTC。")])
def test_times_are_shown_as_every_staff_page_shows_them(tenant, decided, auditor, language, checked):
    client = signed_in(auditor, HTTP_ACCEPT_LANGUAGE=language)
    client.cookies["django_language"] = language
    # Back in time, where the session still holds: the chain is checked at that moment.
    with time_machine.travel(datetime(2026, 3, 7, 23, 2, 30, tzinfo=dt_timezone.utc), tick=False):
        html = client.get(LOG).content.decode()
    newest = AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("-seq").first()
    with translation.override(language):
        assert f'<time datetime="{newest.created_at.isoformat()}">{moment(newest.created_at)}</time>' in html
    assert checked in html
