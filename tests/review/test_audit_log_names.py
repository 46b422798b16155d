"""The audit log speaks in names (issue 38.5): people by username, objects by what they are,
a filter by username, and an edit as before → after."""
from django.urls import reverse
from django.utils import translation

from reviews.actors import Actor
from reviews.labels import AUDIT_ACTION_LABELS
from reviews.models import AuditAction, AuditEvent
from reviews.services.candidates import candidates_bulk_decide
from tests.review.conftest import approve_as, signed_in

LOG = reverse("reviews:audit-log")


def test_the_log_names_people_and_objects_and_filters_by_username(review_queue, reviewer, auditor, tenant):
    approve_as(reviewer, review_queue.evidence)
    client = signed_in(auditor)
    html = client.get(LOG).content.decode()
    assert f">{reviewer.username}</a>" in html and f">reviewer:{reviewer.pk}<" not in html
    assert f"Item #{review_queue.evidence.pk}" in html and f"candidate #{review_queue.evidence.pk}" not in html
    assert ">System</a>" in html  # the tenant's creation

    by_name = client.get(LOG, {"actor": reviewer.username}).content.decode()
    events = AuditEvent.objects.filter(tenant_id=tenant.pk, actor=f"reviewer:{reviewer.pk}")
    assert events.exists()
    assert by_name.count('class="event"') == events.count()
    assert all(f'data-event="{seq}"' in by_name for seq in events.values_list("seq", flat=True))
    # A name that is nobody's is an actor pattern like any other: it finds nothing.
    assert 'class="event"' not in client.get(LOG, {"actor": "nobody-here"}).content.decode()


def test_an_edit_shows_before_and_after(review_queue, reviewer, auditor):
    approve_as(reviewer, review_queue.evidence, value="Munich")
    html = signed_in(auditor).get(LOG, {"action": "candidate.edited_approved"}).content.decode()
    assert "data-changes" in html and "→" in html


def test_a_reviewer_may_not_read_the_log(review_queue, reviewer):
    assert signed_in(reviewer).get(LOG).status_code in (403, 404)


def test_an_outsider_sees_no_event_of_another_tenant(review_queue, reviewer, outsider):
    approve_as(reviewer, review_queue.evidence)
    html = signed_in(outsider).get(LOG, {"actor": reviewer.username}).content.decode()
    assert 'class="event"' not in html


def test_actions_read_as_names_and_their_codes_still_filter(review_queue, reviewer, auditor, tenant):
    item = review_queue.evidence
    candidates_bulk_decide(tenant=tenant, items=[(item.pk, item.version)], decision="approve",
                           actor=Actor.reviewer(reviewer))
    client = signed_in(auditor)
    html = client.get(LOG).content.decode()
    badge = ('<a href="?action=candidates.bulk_approve" class="badge" title="candidates.bulk_approve" '
             'data-action="candidates.bulk_approve">Bulk approval</a>')
    assert badge in html and ">candidates.bulk_approve<" not in html
    # The badge's link filters by the code: only that event.
    filtered = client.get(LOG, {"action": "candidates.bulk_approve"}).content.decode()
    bulk = AuditEvent.objects.get(tenant_id=tenant.pk, action="candidates.bulk_approve")
    assert filtered.count('class="event"') == 1 and f'data-event="{bulk.seq}"' in filtered

    # The action box suggests each action by name, sending its code.
    assert 'list="audit-actions"' in html and '<option value="candidates.bulk_approve">Bulk approval</option>' in html

    chinese = signed_in(auditor, HTTP_ACCEPT_LANGUAGE="zh-hans")
    chinese.cookies["django_language"] = "zh-hans"
    assert 'data-action="candidates.bulk_approve">批量批准</a>' in chinese.get(LOG).content.decode()


def test_every_audit_action_has_a_name_in_both_languages():
    assert set(AUDIT_ACTION_LABELS) == set(AuditAction)
    for language in ("en", "zh-hans"):
        with translation.override(language):
            names = [str(label) for label in AUDIT_ACTION_LABELS.values()]
        assert len(set(names)) == len(names), language  # two actions never read alike
    with translation.override("zh-hans"):
        chinese = {action: str(label) for action, label in AUDIT_ACTION_LABELS.items()}
    with translation.override("en"):
        untranslated = [action for action, label in AUDIT_ACTION_LABELS.items() if str(label) == chinese[action]]
    assert not untranslated, untranslated
