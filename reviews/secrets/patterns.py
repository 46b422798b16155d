"""Credentials recognised by their shape alone: providers' key formats, tokens, key blocks.

Each row is (kind, hints, regular expression). The hints are lower-case strings one of
which a text must hold for the row to be tried at all: most messages hold none, and a
message is then checked with a few substring tests instead of forty scans. Where only
part of a match is the secret (the password of a URL, the token after ``Bearer``), that
part is the group named ``secret``; otherwise the whole match is. ASCII mode: ``\\b`` must
see the boundary between ``密钥`` and ``sk-…`` (CJK letters are word characters to
Unicode rules).
"""
import re

from .found import Found

# A token body must hold a digit somewhere: real keys are random, and this keeps
# ``sk-learn-style-names`` and ``Bearer authentication_required`` out.
_HAS_DIGIT = r"(?=[A-Za-z0-9_\-]{0,200}[0-9])"

_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA")
_GITLAB_PREFIXES = ("glpat", "gldt", "glrt", "glptt", "glcbt", "glft", "glimt", "glsoat", "glagent")

PROVIDER_FORMATS: list[tuple[str, tuple[str, ...], str]] = [
    # PEM and OpenSSH private keys, PGP private key blocks; a paste cut before its END line
    # is masked through its last base64 line (headers such as Proc-Type: included).
    (
        "private_key",
        ("-----begin",),
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|$)|[ \t]*\r?\n"
        r"|[A-Za-z-]+:[^\n]*\n|[ \t]*[A-Za-z0-9+/=]+(?=[^A-Za-z0-9+/=]|$))*)",
    ),
    # scheme://user:password@host — only the password goes.
    # Documentation's stand-ins (user:password@, user:${DB_PASSWORD}@) are not passwords.
    (
        "password",
        ("://",),
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s/:@\"'<>]*:"
        r"(?!(?:password|passwd|pass|pwd|secret|x+|\*+|<[^>@]*>|\$\{[^}@]*\}|\{[^}@]*\}|\$[A-Z_]+)@)"
        r"(?P<secret>[^\s/@\"'<>]+)@(?=[\w\[.-])",
    ),
    # Slack incoming-webhook URLs carry their secret in the path.
    ("api_key", ("hooks.slack.com",), r"\bhooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"),
    # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-api03-), DeepSeek and other sk- keys.
    ("api_key", ("sk-",), rf"\bsk-{_HAS_DIGIT}[A-Za-z0-9_\-]{{20,}}"),
    # AWS access key ids (and their temporary / role / user siblings).
    ("api_key", tuple(p.lower() for p in _AWS_PREFIXES), rf"\b(?:{'|'.join(_AWS_PREFIXES)})[A-Z0-9]{{16}}\b"),
    # Alibaba Cloud and Tencent Cloud AccessKey ids.
    ("api_key", ("ltai",), r"\bLTAI[A-Za-z0-9]{12,24}\b"),
    ("api_key", ("akid",), r"\bAKID[A-Za-z0-9]{32}\b"),
    # GitHub classic and fine-grained tokens.
    ("api_key", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b"),
    ("api_key", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b"),
    # GitLab personal, deploy, runner, pipeline-trigger, feed and other tokens.
    (
        "api_key",
        tuple(p + "-" for p in _GITLAB_PREFIXES),
        rf"\b(?:{'|'.join(_GITLAB_PREFIXES)})-{_HAS_DIGIT}[\w\-]{{20,}}",
    ),
    # Slack bot, user, app-level, refresh and configuration tokens.
    ("api_key", ("xox",), r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("api_key", ("xapp-",), r"\bxapp-\d-[A-Za-z0-9-]{10,}"),
    # Stripe secret and restricted keys (live and test) and webhook signing secrets.
    # Publishable keys (pk_live_, pk_test_) are public by design: they ship in web pages.
    ("api_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("api_key", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    # Google API keys, OAuth client secrets and access tokens.
    ("api_key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("api_key", ("gocspx-",), r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("token", ("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    # Twilio account and API-key SIDs (32 hex after AC / SK).
    ("api_key", ("ac", "sk"), r"\b(?:AC|SK)[0-9a-f]{32}\b"),
    # SendGrid, Mailgun, npm, PyPI, Hugging Face, DigitalOcean, Shopify, Databricks, Groq,
    # xAI, Replicate, Notion, Atlassian, Square.
    ("api_key", ("sg.",), r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}"),
    ("api_key", ("key-",), r"\bkey-[0-9a-f]{32}\b"),
    ("api_key", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("api_key", ("pypi-age",), r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("api_key", ("hf_",), r"\bhf_[A-Za-z0-9]{30,40}\b"),
    ("api_key", ("_v1_",), r"\bdo[pro]_v1_[a-f0-9]{64}\b"),
    ("api_key", ("shpat_", "shpss_", "shpca_", "shppa_"), r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    ("api_key", ("dapi",), r"\bdapi[a-f0-9]{32}\b"),
    ("api_key", ("gsk_",), r"\bgsk_[A-Za-z0-9]{40,60}\b"),
    ("api_key", ("xai-",), r"\bxai-[A-Za-z0-9]{40,90}\b"),
    ("api_key", ("r8_",), r"\br8_[A-Za-z0-9]{30,40}\b"),
    ("api_key", ("secret_", "ntn_"), r"\b(?:secret|ntn)_[A-Za-z0-9]{40,50}\b"),
    ("api_key", ("atatt3",), r"\bATATT3[A-Za-z0-9_\-=]{40,}"),
    ("api_key", ("sq0",), r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}"),
    # Telegram bot tokens: bot id, colon, 35 characters.
    ("api_key", (":aa",), r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    # Azure storage / service-bus connection strings and SAS signatures.
    (
        "api_key",
        ("accountkey", "sharedaccesskey"),
        r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
    ),
    ("api_key", ("sig=",), r"[?&]sig=(?P<secret>[A-Za-z0-9%+/]{20,}={0,2})"),
    # JSON Web Tokens: base64url header and payload, both JSON objects ("eyJ" is '{"').
    ("token", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"),
    # HTTP authorisation: the scheme word stays, the credentials go.
    ("password", ("authorization",), r"(?i)\bAuthorization\s*[:=]\s*[\"']?Basic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"),
    (
        "token",
        ("authorization",),
        r"(?i)\bAuthorization\s*[:=]\s*[\"']?(?:Bearer|Token|Bot|ApiKey|SSWS|Digest)?\s*"
        rf"(?P<secret>{_HAS_DIGIT}[A-Za-z0-9._~+/\-]{{12,}}=*)",
    ),
    ("token", ("bearer",), rf"(?i)\bBearer\s+(?P<secret>{_HAS_DIGIT}[A-Za-z0-9._~+/\-]{{16,}}=*)"),
    # curl -u user:password (not docker's -u 1000:1000), mysql -pPASSWORD, SQL IDENTIFIED BY '…'.
    (
        "password",
        ("-u ", "--user"),
        r"(?:^|\s)(?:-u|--user)\s+[\"']?[^\s:\"']+:(?P<secret>(?!\d+\b)[^\s\"']+)",
    ),
    (
        "password",
        ("mysql", "mariadb"),
        r"\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,80}?\s-p(?P<secret>[^\s\"']+|\"[^\"\n]+\"|'[^'\n]+')",
    ),
    ("password", ("identified",), r"(?i)\bIDENTIFIED\s+BY\s+(?P<secret>'[^'\n]+'|\"[^\"\n]+\")"),
]


_ROWS = [(kind, re.compile(pattern, re.ASCII | re.DOTALL)) for kind, _, pattern in PROVIDER_FORMATS]
_ROWS_OF_HINT: dict[str, list[int]] = {}
for _index, (_, _hints, _) in enumerate(PROVIDER_FORMATS):
    for _hint in _hints:
        _ROWS_OF_HINT.setdefault(_hint, []).append(_index)
# Every hint in one expression (longest first), so choosing the rows costs one scan.
_HINTS = re.compile("|".join(re.escape(hint) for hint in sorted(_ROWS_OF_HINT, key=len, reverse=True)))


def find_formats(text: str) -> list[Found]:
    rows = {index for hint in set(_HINTS.findall(text.lower())) for index in _ROWS_OF_HINT[hint]}
    found = []
    for index in sorted(rows):
        kind, pattern = _ROWS[index]
        secret_group = "secret" in pattern.groupindex
        for match in pattern.finditer(text):
            start, end = match.span("secret") if secret_group else match.span()
            found.append(Found(start, end, kind))
    return found
