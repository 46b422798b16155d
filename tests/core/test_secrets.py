"""Credentials are rejected, masked before any write, and found in no table or log line."""
import logging

import pytest

from reviews.models import Candidate
from reviews.secrets import contains_secret, mask_field_value, mask_secrets
from tests.conftest import candidate
from tests.dump import dump_all_tables

OPENAI_KEY = "sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"
PASSWORD = "hunter2"
CARD = "4539 1488 0343 6467"  # passes Luhn
CN_ID = "11010519491231002X"  # valid check digit

SECRET_VALUES = [
    (f"顺便记一下我的 OpenAI key：{OPENAI_KEY}", OPENAI_KEY, "api_key"),
    (f"My password for the staging box is {PASSWORD}", PASSWORD, "password"),
    (f"我的信用卡号是 {CARD}", CARD, "card_number"),
    (f"身份证 {CN_ID}", CN_ID, "national_id"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA7bq", "private_key"),
    ("Authorization: Bearer abcdefghijklmnop1234567890", "abcdefghijklmnop1234567890", "token"),
]


@pytest.mark.parametrize("text,secret,kind", SECRET_VALUES)
def test_mask_secrets_replaces_the_secret_and_names_its_kind(text, secret, kind):
    masked = mask_secrets(text)
    assert kind in masked.kinds
    assert secret not in masked.text and secret.replace(" ", "") not in masked.text
    assert f"[redacted {kind}]" in masked.text


@pytest.mark.parametrize(
    "text",
    [
        "Our billing service runs on Django with PostgreSQL.",
        "card 4539 1488 0343 6468",  # fails Luhn: a number, not a card
        "id 110105194912310021",  # wrong check digit
        "我们的检索项目原来用 Chroma，上周切到了 Milvus。",
        "the token bucket algorithm",
        "my phone is 13800138000",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert not mask_secrets(text).found
    assert mask_secrets(text).text == text


def test_secrets_in_candidates_are_rejected_and_stored_nowhere(tenant, submit, caplog):
    caplog.set_level(logging.DEBUG)
    items = [
        candidate(field="preference", value=text, evidence=text, confidence=0.99) for text, _, _ in SECRET_VALUES
    ]
    results = submit(tenant, "bob", *items)
    assert [(r.status, r.reason) for r in results] == [("rejected", "secret_detected")] * len(SECRET_VALUES)
    assert all("secret_masked" in c.flags for c in Candidate.objects.all())

    dump = dump_all_tables()
    for _, secret, _ in SECRET_VALUES:
        assert secret not in dump
        assert secret.replace(" ", "") not in dump
        assert secret not in caplog.text
    assert "[redacted api_key]" in dump  # what is kept is the masked form


def test_a_secret_in_an_unknown_field_is_masked_too(tenant, submit):
    [result] = submit(tenant, "bob", candidate(field="password", value=PASSWORD, evidence=f"password is {PASSWORD}"))
    assert result.reason == "field_not_allowed"
    assert PASSWORD not in dump_all_tables()


def test_contains_secret_says_whether_a_credential_is_there():
    assert contains_secret(f"user-{OPENAI_KEY}")
    assert not contains_secret("user-42")
    assert not contains_secret("")


@pytest.mark.parametrize(
    "text,masked",
    [
        # The misses the detector used to have: the whole secret goes, every other word stays.
        ("my password is: hunter2", "my password is: [redacted password]"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[redacted api_key]"),
        ("my api token is: abc123XYZ789def456", "my api token is: [redacted token]"),
        ("我的密码是abc123，别告诉别人", "我的密码是[redacted password]，别告诉别人"),
        ("postgres://app:S3cr3t!@db:5432/app", "postgres://app:[redacted password]@db:5432/app"),
        ("password = request.POST['password']", "password = request.POST['password']"),
    ],
)
def test_only_the_secret_is_replaced(text, masked):
    assert mask_secrets(text).text == masked


def test_an_aws_key_id_as_an_identifier_is_a_secret():
    assert contains_secret("AKIAIOSFODNN7EXAMPLE")
    assert mask_secrets("AKIAIOSFODNN7EXAMPLE").kinds == ("api_key",)


@pytest.mark.parametrize("field", ["password", "db_password", "apiKey", "pin", "cvv", "client_secret", "密码"])
def test_a_value_for_a_credential_field_is_masked_whatever_it_says(field):
    assert mask_field_value(field, "hunter2") == mask_field_value(field, "blue")
    assert mask_field_value(field, "hunter2").text == "[redacted password]"


@pytest.mark.parametrize("field", ["preference", "tech_stack", "code_style", "name", "max_tokens", "password_policy"])
def test_a_value_for_an_ordinary_field_is_masked_by_what_it_says(field):
    assert mask_field_value(field, "Prefers tea") == mask_secrets("Prefers tea")
    assert mask_field_value(field, "key sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn").kinds == ("api_key",)


def test_masking_twice_changes_nothing_more():
    once = mask_secrets("DB_PASSWORD=hunter2 and card 4539 1488 0343 6467")
    assert mask_secrets(once.text).text == once.text
    assert not mask_secrets(once.text).found


def test_a_clean_text_seen_again_gets_the_same_answer_and_a_credential_is_never_kept(monkeypatch):
    """Short clean texts are remembered (a recall checks its user id twice); a text that
    holds a credential is scanned every time and kept nowhere."""
    from reviews import secrets

    monkeypatch.setattr(secrets, "_clean_texts", {})
    clean, dirty = "user-5 likes green tea", f"My password for the staging box is {PASSWORD}"
    assert mask_secrets(clean) == mask_secrets(clean) == secrets.MaskResult(clean, ())
    first, again = mask_secrets(dirty), mask_secrets(dirty)
    assert first == again and first.kinds == ("password",) and PASSWORD not in again.text
    assert list(secrets._clean_texts) == [clean]
    assert all(PASSWORD not in text for text in secrets._clean_texts)


def test_the_remembered_clean_texts_stay_few_and_short(monkeypatch):
    from reviews import secrets

    monkeypatch.setattr(secrets, "_clean_texts", {})
    monkeypatch.setattr(secrets, "CLEAN_TEXTS_KEPT", 10)
    for number in range(25):
        assert not mask_secrets(f"subject {number}").found
    long_text = "plain words " * 30
    assert mask_secrets(long_text).text == long_text
    assert 0 < len(secrets._clean_texts) <= 10
    assert long_text not in secrets._clean_texts
