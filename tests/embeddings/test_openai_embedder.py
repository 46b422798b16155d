"""`openai:<model>`: langchain-openai's OpenAIEmbeddings against a local OpenAI-compatible
server over real HTTP (OPENAI_BASE_URL honoured); a server that fails degrades recall to
lexical ranking, never to an error."""
import numpy as np
import pytest

from reviews.embeddings.embedders import EmbedderUnavailable, OpenAIEmbedder, embedder_for
from reviews.embeddings.sync import subject_embeddings_sync
from reviews.models import FactEmbedding, Scope
from tests.extraction.fake_openai import FakeOpenAI, stub_embedding

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings):
    server = FakeOpenAI().start()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = "sk-test"
    settings.MEMORY_EMBEDDER = "openai:text-embedding-3-small"
    settings.MEMORY_EMBEDDER_TIMEOUT = 5
    embedder_for.cache_clear()
    yield server
    server.stop()
    embedder_for.cache_clear()


def test_it_embeds_through_the_configured_endpoint(fake):
    embedder = OpenAIEmbedder("text-embedding-3-small")
    documents = embedder.embed_documents(["Database: MySQL 8", "喜欢吃辣"])
    query = embedder.embed_query("which database")

    assert embedder.key == "openai:text-embedding-3-small"
    assert documents.shape == (2, 64) and documents.dtype == np.float32
    np.testing.assert_allclose(documents[0], stub_embedding("Database: MySQL 8"), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, atol=1e-6)
    seen = [request for request in fake.requests if request.path.endswith("/embeddings")]
    assert len(seen) == 2 and {request.body["model"] for request in seen} == {"text-embedding-3-small"}
    assert seen[0].body["input"] == ["Database: MySQL 8", "喜欢吃辣"]


def test_the_query_is_embedded_once(fake):
    embedder = OpenAIEmbedder("text-embedding-3-small")
    first = embedder.embed_query("which database")
    again = embedder.embed_query("which database")
    assert first is again and len(fake.requests) == 1


def test_a_failing_server_raises_a_named_error(fake):
    fake.embedding_failures = 10
    with pytest.raises(EmbedderUnavailable):
        OpenAIEmbedder("text-embedding-3-small").embed_documents(["Database: MySQL 8"])


def test_facts_are_embedded_with_the_remote_model(fake, tenant, publish, store, committed):
    with committed():
        fact = publish(tenant, "u1", entity_type="project", entity_id="billing", field="database", value="MySQL 8")
    row = FactEmbedding.objects.get(fact=fact)
    assert (row.embedder, row.dimensions) == ("openai:text-embedding-3-small", 64)


def test_recall_ranks_lexically_while_the_server_fails(fake, tenant, publish, store, committed, make_client):
    with committed():
        publish(tenant, "u1", entity_type="project", entity_id="billing", field="database", value="MySQL 8")
        publish(tenant, "u1", field="preference", value="likes jazz")
    embedder_for.cache_clear()  # a fresh process: no cached query vector
    fake.embedding_failures = 100

    response = make_client(tenant, [Scope.RECALL]).get("/api/v1/recall", {"user_id": "u1", "q": "mysql", "relevant": "true"})

    assert response.status_code == 200, response.content
    assert [fact["value"] for fact in response.json()["facts"]] == ["MySQL 8"]


def test_an_unreachable_server_leaves_facts_to_embed_later(fake, tenant, publish, store, committed):
    fake.embedding_failures = 100
    with committed():
        fact = publish(tenant, "u1", field="preference", value="likes jazz")
    assert not FactEmbedding.objects.filter(fact=fact).exists()

    fake.embedding_failures = 0
    result = subject_embeddings_sync(subject_id=fact.subject_id)
    assert result.embedded == 1 and FactEmbedding.objects.filter(fact=fact).exists()
