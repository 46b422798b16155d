import pytest

from reviews.services.ingest import extraction_retries_cancel
from tests.extraction.fake_openai import FakeOpenAI


@pytest.fixture
def fake_llm():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def llm_settings(settings, fake_llm):
    """The LLM extractor pointed at the local server, with short timeouts and backoff."""
    settings.MEMORY_EXTRACTOR = "llm"
    settings.OPENAI_API_KEY = "test-key-not-a-secret"
    settings.OPENAI_BASE_URL = fake_llm.url
    settings.MEMORY_EXTRACTOR_MODEL = "gpt-4.1-mini"
    settings.MEMORY_EXTRACTOR_METHOD = "function_calling"
    settings.MEMORY_EXTRACTOR_TIMEOUT = 1.0
    settings.MEMORY_EXTRACTOR_HTTP_RETRIES = 1
    settings.MEMORY_EXTRACTION_MAX_ATTEMPTS = 3
    settings.MEMORY_EXTRACTION_RETRY_BASE_SECONDS = 0.05
    settings.MEMORY_EXTRACTION_RETRY_MAX_SECONDS = 0.2
    yield settings
    # A retry scheduled in this process outlives the test (tests/extraction/test_lane_stall.py
    # leaves one 30-60 s ahead): due later, it would run against another test's database, and
    # a later test's extractions_drain(retries=True) would wait it out.
    extraction_retries_cancel()
