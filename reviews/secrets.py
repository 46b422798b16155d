"""Credential detection and masking (SPEC §3 step 2).

Everything that enters the system as free text (message content, candidate values and
evidence, reviewer edits) passes through :func:`mask_secrets` *before* it is written,
logged, put in an exception message or sent to a model. What comes out holds only a
placeholder naming the kind of secret, never any part of it.
"""
import re
from dataclasses import dataclass

PLACEHOLDER = "[redacted {kind}]"


@dataclass(frozen=True)
class MaskResult:
    text: str
    kinds: tuple[str, ...]

    @property
    def found(self) -> bool:
        return bool(self.kinds)


def _luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = int(char)
        if index % 2 == 1:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_CHECK = "10X98765432"


def _cn_resident_id_valid(candidate: str) -> bool:
    body, check = candidate[:17], candidate[17].upper()
    total = sum(int(d) * w for d, w in zip(body, _CN_ID_WEIGHTS))
    return _CN_ID_CHECK[total % 11] == check


# Each rule: kind, pattern, optional validator of the matched secret, and which group is
# the secret (the rest of the match, e.g. "password is", is kept for the reader).
_RULES: list[tuple[str, re.Pattern, object, int]] = [
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
        None,
        0,
    ),
    ("api_key", re.compile(r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_\-]{16,}"), None, 0),
    ("api_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), None, 0),
    ("api_key", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), None, 0),
    ("api_key", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), None, 0),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), None, 0),
    ("token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), None, 0),
    ("token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})"), None, 1),
    (
        "api_key",
        re.compile(
            r"(?i)\b(?:api[_ -]?key|access[_ -]?key|secret[_ -]?key|client[_ -]?secret|auth[_ -]?token|"
            r"access[_ -]?token|token|secret)\b\s*(?:is|=|:|：)\s*[\"']?([^\s\"'，。,;]{6,})"
        ),
        None,
        1,
    ),
    (
        "password",
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pin)\b(?:\s+(?:for|of|to|on)\s+[^\n,.;:]{1,40}?)?"
            r"\s*(?:is|was|=|:|：)\s*[\"']?([^\s\"'，。,;]+)"
        ),
        None,
        1,
    ),
    (
        "password",
        re.compile(r"(?:密码|口令|密碼|登录密码|支付密码)(?:\s*(?:是|为|為|：|:|=)\s*)[\"'“]?([^\s\"'”，。,;；]+)"),
        None,
        1,
    ),
    ("api_key", re.compile(r"(?:密钥|秘钥|令牌|key)\s*(?:是|为|：|:)\s*([A-Za-z0-9_\-]{12,})", re.I), None, 1),
    # Card numbers: 13–19 digits, optionally grouped, that pass the Luhn check.
    (
        "card_number",
        re.compile(r"(?<!\d)(\d(?:[ -]?\d){12,18})(?!\d)"),
        lambda s: _luhn_valid(re.sub(r"\D", "", s)),
        1,
    ),
    # Chinese resident identity number with a valid check digit.
    (
        "national_id",
        re.compile(r"(?<![0-9A-Za-z])([1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[0-9Xx])(?![0-9A-Za-z])"),
        _cn_resident_id_valid,
        1,
    ),
    # US social security number.
    ("national_id", re.compile(r"(?<!\d)(\d{3}-\d{2}-\d{4})(?!\d)"), None, 1),
]


def mask_secrets(text: str) -> MaskResult:
    """Replace every credential in ``text`` by a placeholder; report the kinds found."""
    if not text:
        return MaskResult(text or "", ())
    kinds: list[str] = []
    for kind, pattern, validator, group in _RULES:

        def replace(match: re.Match, kind=kind, validator=validator, group=group) -> str:
            secret = match.group(group)
            if secret is None or (validator is not None and not validator(secret)):
                return match.group(0)
            if secret.startswith("[redacted"):
                return match.group(0)
            kinds.append(kind)
            start, end = match.span(group)
            whole_start = match.start(0)
            whole = match.group(0)
            return whole[: start - whole_start] + PLACEHOLDER.format(kind=kind) + whole[end - whole_start :]

        text = pattern.sub(replace, text)
    return MaskResult(text, tuple(dict.fromkeys(kinds)))


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds a credential: for values that are refused, not masked (identifiers)."""
    return mask_secrets(text).found


_CREDENTIAL_FIELD = re.compile(
    r"(?i)(password|passwd|passphrase|passcode|secret|token|api[_-]?key|private[_-]?key|credential|pin$|cvv|密码|口令|密钥)"
)


def mask_field_value(field_name: str, value: str) -> MaskResult:
    """Mask a value by what it says and by what field it claims to fill.

    A bare "hunter2" proposed for a field named ``password`` is a credential even though
    the text alone does not say so.
    """
    if value and _CREDENTIAL_FIELD.search(field_name or ""):
        return MaskResult(PLACEHOLDER.format(kind="password"), ("password",))
    return mask_secrets(value)
