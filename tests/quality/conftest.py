from tests.extraction.conftest import fake_llm, llm_settings  # noqa: F401 (fixtures)
