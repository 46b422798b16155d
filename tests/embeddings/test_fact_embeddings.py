"""Each published fact has an embedding that follows it: published, edited, deleted,
expired, erased (SPEC §5 "Relevance by meaning"), and `manage.py embed` catches up."""
from datetime import timedelta

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from reviews.actors import Actor
from reviews.embeddings.embedders import embedder_for
from reviews.embeddings.sync import text_digest, text_of
from reviews.models import AuditAction, AuditEvent, Fact, FactEmbedding
from reviews.services.erasure import fact_delete, facts_delete, subject_erase
from reviews.services.facts import fact_edit
from reviews.services.retention import retention_sweep

pytestmark = pytest.mark.django_db
ADMIN = Actor("api_key", "admin")
LOCAL = embedder_for("local")


def test_publishing_embeds_the_fact_with_the_local_embedder(tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", entity_type="project", entity_id="billing", field="database", value="PostgreSQL 16")

    row = FactEmbedding.objects.get(fact=fact)
    assert row.embedder == LOCAL.key == "local:use-multilingual-v3"
    assert (row.tenant_id, row.subject_id, row.dimensions) == (tenant.pk, fact.subject_id, 512)
    assert row.text_digest == text_digest(text_of(fact))
    assert "Database: PostgreSQL 16" in text_of(fact)
    # Stored in half precision: 2 bytes a dimension, within float16's rounding of the model's vector.
    assert len(row.vector) == 512 * 2
    np.testing.assert_allclose(row.as_array(), LOCAL.embed_documents([text_of(fact)])[0], atol=1e-3)


def test_a_vector_stored_in_single_precision_before_is_still_read(tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes spicy Sichuan food")
    model_vector = LOCAL.embed_documents([text_of(fact)])[0]
    FactEmbedding.objects.filter(fact=fact).update(vector=np.asarray(model_vector, dtype="<f4").tobytes())

    row = FactEmbedding.objects.get(fact=fact)
    assert len(row.vector) == 512 * 4
    np.testing.assert_array_equal(row.as_array(), model_vector)


def test_editing_a_fact_re_embeds_it(tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes spicy Sichuan food")
    before = FactEmbedding.objects.get(fact=fact)

    with committed():
        fact_edit(tenant=tenant, fact_id=fact.pk, value="喜欢喝绿茶", actor=ADMIN)

    after = FactEmbedding.objects.get(fact=fact)
    assert after.text_digest != before.text_digest
    assert after.text_digest == text_digest(text_of(Fact.objects.get(pk=fact.pk)))
    assert float(after.as_array() @ before.as_array()) < 0.9


def test_deleting_a_fact_removes_its_embedding(tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes jazz")
        other = publish(tenant, "u1", field="role", value="teacher")

    with committed():
        fact_delete(tenant=tenant, fact_id=fact.pk, actor=ADMIN)

    assert not FactEmbedding.objects.filter(fact=fact).exists()
    assert FactEmbedding.objects.filter(fact=other).exists()


def test_precise_deletion_counts_the_embeddings_on_its_receipt(tenant, publish, store, committed):
    with committed():
        publish(tenant, "u1", field="preference", value="likes jazz")
        publish(tenant, "u1", field="preference", value="runs marathons")
        kept = publish(tenant, "u1", field="role", value="teacher")

    with committed():
        receipt = facts_delete(tenant=tenant, user_id="u1", field="preference", actor=ADMIN)

    assert receipt.deleted["embeddings"] == 2
    assert list(FactEmbedding.objects.values_list("fact_id", flat=True)) == [kept.pk]
    event = AuditEvent.objects.filter(action=AuditAction.MEMORY_DELETED).latest("id")
    assert event.payload.after["deleted"]["embeddings"] == 2


def test_expiry_removes_the_embedding(tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", field="health", value="allergic to peanuts")
        kept = publish(tenant, "u1", field="role", value="teacher")
    assert fact.expires_at is not None and FactEmbedding.objects.filter(fact=fact).exists()

    with committed():
        report = retention_sweep(now=fact.expires_at + timedelta(minutes=1))

    assert report.facts_expired == 1
    assert not FactEmbedding.objects.filter(fact=fact).exists()
    assert FactEmbedding.objects.filter(fact=kept).exists()


def test_erasing_the_subject_removes_and_counts_every_embedding(tenant, publish, store, committed):
    with committed():
        publish(tenant, "u1", field="preference", value="likes jazz")
        publish(tenant, "u1", entity_type="project", entity_id="billing", field="database", value="MySQL 8")
        other = publish(tenant, "u2", field="preference", value="likes jazz")

    with committed():
        receipt = subject_erase(tenant=tenant, user_id="u1", actor=ADMIN)

    assert receipt.deleted["embeddings"] == 2
    assert list(FactEmbedding.objects.values_list("fact_id", flat=True)) == [other.pk]
    event = AuditEvent.objects.filter(action=AuditAction.SUBJECT_ERASED).latest("id")
    assert event.payload.after["deleted"]["embeddings"] == 2


def test_embed_command_catches_up_and_rebuilds(tenant, other_tenant, publish, store, committed, capsys):
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes jazz")
        theirs = publish(other_tenant, "u9", field="preference", value="runs marathons")
    FactEmbedding.objects.all().delete()
    stamp = timezone.now() - timedelta(days=1)

    call_command("embed", tenant=tenant.slug)
    assert "1 embedded" in capsys.readouterr().out
    assert FactEmbedding.objects.filter(fact=fact).exists()
    assert not FactEmbedding.objects.filter(fact=theirs).exists()  # another tenant: left alone

    FactEmbedding.objects.update(updated_at=stamp)
    call_command("embed")
    assert "1 embedded, 1 already current" in capsys.readouterr().out
    assert FactEmbedding.objects.get(fact=fact).updated_at == stamp  # current: not redone

    call_command("embed", rebuild=True)
    assert "2 embedded" in capsys.readouterr().out
    assert FactEmbedding.objects.get(fact=fact).updated_at > stamp


def test_embed_command_re_embeds_what_another_embedder_made(tenant, publish, store, committed, capsys):
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes jazz")
    FactEmbedding.objects.update(embedder="openai:text-embedding-3-small")

    call_command("embed")

    assert "1 embedded" in capsys.readouterr().out
    assert FactEmbedding.objects.get(fact=fact).embedder == LOCAL.key


def test_embed_command_refuses_an_unknown_tenant(db):
    with pytest.raises(CommandError, match="No tenant"):
        call_command("embed", tenant="nobody")
