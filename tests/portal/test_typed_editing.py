"""Typed editing (SPEC §4 subject): a relation's value is one of the subject's entries or
a new one, never free text; a many field gains and loses values one by one, a one field
is replaced; the service (not the page) validates, as for every other write."""
import pytest

from reviews.actors import Actor
from reviews.errors import InvalidInput, InvalidTransition
from reviews.models import AuditEvent, Entity, Fact, FactStatus, Subject
from reviews.services.facts import fact_edit
from reviews.services.portal import fact_value_add
from tests.portal.test_labels import text

ALICE = Actor.subject("alice")


@pytest.fixture
def works_on(tenant, alice, publish):
    return publish(tenant, "alice", field="relation:works_on", value="project:flask-migration", kind="relation")


def edited_events(tenant):
    return list(AuditEvent.objects.filter(tenant_id=tenant.pk, action="fact.edited").select_related("payload"))


class TestRelations:
    def test_the_page_offers_the_subjects_entries_not_a_text_box(self, works_on, alice_client):
        page = alice_client.get(f"/me/facts/{works_on.pk}/").content.decode()
        assert 'data-editor="relation"' in page and '<textarea id="fact-value"' not in page
        assert '<option value="project:flask-migration" selected>Project: flask-migration</option>' in page
        assert '<option value="project">Project</option>' in page  # a new entry's kind
        home = alice_client.get("/me/").content.decode()
        assert '<p class="value"><span class="text revealed">Project: flask-migration</span>' in home  # the value as words, not its reference

    def test_free_text_is_refused_and_nothing_changes(self, tenant, works_on, alice_client):
        response = alice_client.post(f"/me/facts/{works_on.pk}/correct/",
                                     {"value": "works on the Flask migration project", "version": 1})
        assert response.status_code == 400 and "choose one, or create it" in text(response)
        assert Fact.objects.get(pk=works_on.pk).value == "project:flask-migration"
        assert edited_events(tenant) == []

    def test_a_new_entry_is_created_and_pointed_to(self, tenant, works_on, alice_client):
        response = alice_client.post(f"/me/facts/{works_on.pk}/correct/", {
            "value": "", "new_entity_type": "project", "new_entity_name": "Atlas", "version": 1})
        assert response.status_code == 302
        fact = Fact.objects.get(pk=works_on.pk)
        assert (fact.value, fact.version, fact.source) == ("project:atlas", 2, "self_service")
        page = alice_client.get(f"/me/facts/{works_on.pk}/").content.decode()
        assert '<p class="value"><span class="text revealed">Project: Atlas</span>' in page and "Project: flask-migration" in page  # its history
        assert Entity.objects.get(subject__user_id="alice", entity_type="project", entity_id="atlas").display_name == "Atlas"
        [event] = edited_events(tenant)
        assert event.actor == "subject:alice" and event.payload.after["entity_created"] == "project:atlas"

    def test_an_existing_entry_is_chosen(self, tenant, works_on, alice_client):
        alice_client.post(f"/me/facts/{works_on.pk}/correct/", {
            "value": "", "new_entity_type": "organization", "new_entity_name": "Acme", "version": 1})
        alice_client.post(f"/me/facts/{works_on.pk}/correct/", {"value": "project:flask-migration", "version": 2})
        assert Fact.objects.get(pk=works_on.pk).value == "project:flask-migration"
        assert "entity_created" not in edited_events(tenant)[-1].payload.after

    def test_another_subjects_entry_cannot_be_pointed_to(self, tenant, works_on, memory):
        memory(tenant, "bob")
        Entity.objects.filter(subject__user_id="alice", entity_type="project").update(entity_id="alice-only")
        with pytest.raises(InvalidInput):
            # bob has project:flask-migration; alice (now) does not
            fact_edit(tenant=tenant, fact_id=works_on.pk, value="project:flask-migration", actor=ALICE, user_id="alice")

    @pytest.mark.parametrize("kind,name", [("user", "Me again"), ("planet", "Mars"), ("project", ""),
                                           ("project", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")])
    def test_a_bad_new_entry_is_refused(self, tenant, works_on, kind, name):
        entities = Entity.objects.count()
        with pytest.raises(InvalidInput):
            fact_edit(tenant=tenant, fact_id=works_on.pk, value="", new_entity_type=kind, new_entity_name=name,
                      actor=ALICE, user_id="alice")
        assert Entity.objects.count() == entities and Fact.objects.get(pk=works_on.pk).version == 1


class TestManyAndOne:
    def test_a_one_field_is_replaced_and_offers_no_second_value(self, alice, alice_client):
        page = alice_client.get(f"/me/facts/{alice.name.pk}/").content.decode()
        assert 'data-editor="one"' in page and "Add another value" not in page
        response = alice_client.post(f"/me/facts/{alice.name.pk}/add/", {"value": "Ally"})
        assert response.status_code == 400 and "holds one value" in text(response)
        assert list(Fact.objects.filter(subject__user_id="alice", field="name", status="active").values_list(
            "value", flat=True)) == ["Alice"]

    def test_a_many_field_gains_a_value(self, tenant, alice, alice_client):
        page = alice_client.get(f"/me/facts/{alice.thread_pref.pk}/").content.decode()
        assert 'data-editor="many"' in page and "Add another value" in page
        added = fact_value_add(tenant=tenant, user_id="alice", fact_id=alice.thread_pref.pk,
                               value="short answers", actor=ALICE)
        assert added.status == "auto_approved" and added.source == "self_service"
        values = set(Fact.objects.filter(subject__user_id="alice", field="preference", status=FactStatus.ACTIVE)
                     .values_list("value", flat=True))
        assert values == {"answers in German", "short answers"}

    def test_the_added_value_is_listed_with_remove(self, tenant, alice, alice_client):
        response = alice_client.post(f"/me/facts/{alice.thread_pref.pk}/add/", {"value": "short answers"})
        assert response.status_code == 302
        added = Fact.objects.get(subject__user_id="alice", field="preference", value="short answers")
        page = alice_client.get(f"/me/facts/{alice.thread_pref.pk}/").content.decode()
        assert f'href="/me/facts/{added.pk}/delete/"' in page

    def test_a_sensitive_value_the_subject_adds_is_theirs_to_keep(self, tenant, alice, publish):
        asthma = publish(tenant, "alice", field="health", value="asthma", confidence=0.95)
        added = fact_value_add(tenant=tenant, user_id="alice", fact_id=asthma.pk, value="hay fever", actor=ALICE)
        assert added.status == "approved" and added.decided_by == "subject:alice"

    def test_credentials_and_refused_values_are_not_added(self, tenant, alice):
        with pytest.raises(InvalidInput, match="credential"):
            fact_value_add(tenant=tenant, user_id="alice", fact_id=alice.thread_pref.pk,
                           value="sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", actor=ALICE)

    def test_nothing_is_added_while_memory_is_paused(self, tenant, alice):
        Subject.objects.filter(user_id="alice").update(collection_paused=True)
        with pytest.raises(InvalidTransition):
            fact_value_add(tenant=tenant, user_id="alice", fact_id=alice.thread_pref.pk, value="tea", actor=ALICE)

    def test_another_subjects_fact_is_not_found(self, tenant, alice, memory, enter):
        bob = memory(tenant, "bob")
        client = enter(tenant, "alice")
        assert client.post(f"/me/facts/{bob.thread_pref.pk}/add/", {"value": "tea"}).status_code == 404
        assert client.get(f"/me/facts/{bob.name.pk}/").status_code == 404
