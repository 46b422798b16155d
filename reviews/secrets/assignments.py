"""Credentials recognised by what names them: ``DB_PASSWORD=…``, ``"apiKey": "…"``, "my
password is …", "密码是…".

1. Find a credential word (password, token, secret, api key, 密码, 验证码, …).
2. Widen it to the whole name around it (``AWS_SECRET_ACCESS_KEY``, ``clientSecret``) and
   decide from the name's words whether it names a credential, and which kind: words such
   as ``max``, ``length``, ``url`` or ``policy`` say the value is about a credential, not
   one (``max_tokens: 512``, ``password_min_length = 8``).
3. Read a separator (``=``, ``:``, ``=>``, ``is``, ``was``, ``是``, ``为``, ``改成``…) and
   the value after it, quoted or bare.
4. Judge the value: placeholders (``None``, ``***``, ``${DB_PASSWORD}``, ``<token>``) and
   code (``request.POST["password"]``, ``get_token()``, ``user.password``, ``password``
   itself) are not secrets; in prose ("my password is wrong") an ordinary word is not
   either. A token or key said in prose must look generated (letters and digits mixed).
"""
from __future__ import annotations

import re

from .found import Found

# Step 1: the words, matched in the lower-cased text (six times faster than IGNORECASE).
# Bare ``pass``/``pwd``/``pw``/``pin``/``otp``/``cvv`` only as whole words (``passport``,
# ``typing``): the lookbehind sits after the first letter so that every branch starts
# with a literal, which lets the engine skip ahead. The others match anywhere inside a
# name (``PGPASSWORD``, ``accessToken``).
_WORDS = (
    r"passw(?:or)?d|passphrase|passcode|secret|token|credential|api[ _-]?key|access[ _-]?key|private[ _-]?key"
    r"|key(?![a-z])|p(?<![A-Za-z]p)(?:ass|wd|w|in(?:[ _-]?(?:code|number))?)(?![a-z])"
    r"|o(?<![A-Za-z]o)tp(?![a-z])|c(?<![A-Za-z]c)(?:vv2?|vc)(?![a-z])"
    r"|verification[ _-]?code|one[ -]time[ _-](?:pass)?code|security[ _-]?code"
    r"|密码|密碼|口令|密钥|秘钥|私钥|令牌|验证码|驗證碼|校验码|动态码|安全码"
)
CREDENTIAL_WORD = re.compile(_WORDS)
_CREDENTIAL_WORD_ANY_CASE = re.compile(_WORDS, re.IGNORECASE)  # where lower() changes a length (İ)
_CJK_CLASSES = re.compile(
    r"(?P<password>密码|密碼|口令|私钥)|(?P<otp>验证码|驗證碼|校验码|动态码)|(?P<cvv>安全码)|(?P<api_key>密钥|秘钥)"
    r"|(?P<token>令牌)"
)

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")
_WORD_SPLIT = re.compile(r"[_.\-$@ ]+|(?<=[a-z0-9])(?=[A-Z])")

PASSWORD, TOKEN, API_KEY, PIN, OTP, CVV = "password", "token", "api_key", "pin", "otp", "cvv"
# Which placeholder each class of name gives its value.
KIND_OF_CLASS = {PASSWORD: "password", PIN: "password", OTP: "password", TOKEN: "token", API_KEY: "api_key",
                 CVV: "card_number"}

# Words that make a name *about* a credential rather than one.
_ABOUT_WORDS = frozenset(
    "count counts num max min limit limits length len size type kind ttl expiry expires expiration expire expired "
    "lifetime timeout age url uri urls endpoint path file dir header field fields policy prompt label hint help "
    "text message msg error errors reset required enabled enable rotation rotate changed updated created version "
    "usage used budget tokenizer tokenize tokenized tokens name id ids strength pattern regex validator validation "
    "input form placeholder column format prefix suffix last4 mask masked show visible class style icon button link "
    "page view route template schema scope scopes audience issuer algorithm alg manager provider store storage "
    "location vault env source generator helper util utils spec mock fake sample example bucket "
    "protected less forgot forgotten hasher hashers strategy rule rules validators rate ratio percent score".split()
)
_KEY_PREFIXES = frozenset(
    "api access secret private signing encryption master account app client subscription service shared "
    "consumer webhook auth deploy license admin root".split()
)


def name_class(name: str) -> str | None:
    """The class of credential a field or variable name says it holds, or None."""
    if not name.isascii():
        cjk = _CJK_CLASSES.search(name)
        if cjk:
            return cjk.lastgroup
    words = [w.lower() for w in _WORD_SPLIT.split(name.strip("-$@.'\"`")) if w]
    if not words or any(w in _ABOUT_WORDS for w in words):
        return None
    joined = "".join(words)
    if any(w in ("cvv", "cvv2", "cvc") for w in words):
        return CVV
    if "otp" in words or "verificationcode" in joined or "timecode" in joined or "timepasscode" in joined:
        return OTP
    if "securitycode" in joined:
        return CVV
    if any(p in joined for p in ("password", "passwd", "passphrase", "passcode")) or any(
        w in ("pass", "pwd", "pw") for w in words
    ):
        return PASSWORD
    if any(p in joined for p in ("apikey", "accesskey", "secretkey", "privatekey", "secretaccesskey")):
        return API_KEY
    if "credential" in joined:
        return PASSWORD
    if "secret" in joined or any("token" in w for w in words):
        return TOKEN
    if "pin" in words:
        return PIN
    if words[-1] == "key" and len(words) > 1:
        return API_KEY if words[-2] in _KEY_PREFIXES else "key"
    return None


# Step 3: separators. Code and config ("=", ":", "=>"), English copulas, Chinese ones.
_H = r"[^\S\n]"  # horizontal white space: a value never starts on the next line
_CODE_SEPARATOR = re.compile(rf"{_H}*(?:=>|->|:=|=(?!=)|:(?!:)|：|＝){_H}*")
_PROSE_SEPARATOR = re.compile(
    rf"(?:{_H}+(?:for|of|to|on|at|in|from){_H}+(?:[^\n,.;!?\"'=:：()]|\.(?!\s)){{1,40}}?)?"
    rf"(?:{_H}+(?:is|was|are|were)(?:{_H}+(?:now|still|just|also|set{_H}+to|changed{_H}+to))?"
    rf"|'s|’s|{_H}+equals|{_H}+(?:has{_H}+been{_H}+|was{_H}+|is{_H}+|been{_H}+)?(?:set|changed|reset|updated){_H}+to"
    rf"|{_H}*(?:也|还|都|仍然|依然|现在|目前|就)?(?:是|为|為|叫|改成|改为|改為|换成|设为|设成|设置为|设置成|用的是)了?)"
    rf"(?:{_H}*[:：=\-])?{_H}*",
    re.IGNORECASE,
)
# Step 3: values. Bare values are printable ASCII without quotes: they end at a space, a
# quote or a CJK character ("密码是abc123，记住").
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|“([^”\n]{1,200})”|‘([^’\n]{1,200})’"
                     r"|「([^」\n]{1,200})」|『([^』\n]{1,200})』")
_BARE = re.compile(r"[!#-&(-_a-~]+")
_QUERY_NEXT = re.compile(r"&(?=[A-Za-z_][\w.\-]*=)")

# Step 4: what is not a secret.
_PLACEHOLDER = re.compile(
    r"(?i)(?:none|null|nil|true|false|undefined|empty|n/?a|tbd|todo|redacted|hidden|masked|omitted|required|optional"
    r"|x{3,}|\*+|•+|\.{3,}|…|-+|_+|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|\{\{[^}]*\}\}|\{[^}]*\}"
    r"|%\(?\w*\)?s|![A-Za-z]\w*|\?|\[redacted[^\]]*\].*|your[_\- ].*|my[_\- ].*|<.*|\$\(.*|\(.*)"
)
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+")
_SNAKE_OR_CAMEL = re.compile(r"[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z]+)+")
_PATH = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)")
_UNIT_AFTER = re.compile(
    rf"{_H}*(?:characters?|chars?|digits?|letters?|symbols?|words?|long|minutes?|hours?|days?|weeks?|months?|times?"
    r"|位|个|個|字|字符|次|天|小时|分钟|周|月)",
    re.IGNORECASE,
)
# Words that follow "password is" in ordinary sentences ("my password is wrong").
_PROSE_WORDS = frozenset(
    "wrong incorrect invalid expired expiring too not the a an required correct right strong weak long short case same "
    "different being still now also very so easy hard secure safe saved stored in on at for with hidden encrypted "
    "hashed set changed reset missing empty blank ok okay fine good bad compromised leaked known unknown there here "
    "what that this it my your his her our their its something nothing simple complex important needed necessary "
    "optional mandatory working broken locked generated random unique shared secret private confidential protected "
    "visible changing valid sent used rotated revoked case-sensitive long-lived short-lived usually always never "
    "only just probably definitely somewhere written taped kept managed handled checked verified accepted rejected "
    "stolen lost forgotten gone out up down off useless worthless fake real new old default temporary permanent "
    "printed attached included shown below above like similar different easy-to-guess guessable obvious".split()
)
_PROSE_SUFFIXES = ("ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less")
# Words that follow "=" or ":" in configuration and forms without being a value; a few
# prose words are also the commonest development passwords (POSTGRES_PASSWORD=secret).
_CONFIG_WORDS = (_PROSE_WORDS - {"secret", "private", "default", "real", "fake", "test"}) | frozenset(
    "bearer basic digest auto env file vault prompt ask stdin keyring "
    # code: `if not password: raise …`, `const token = await …`, `password: string;`
    "raise return pass continue break yield await async new typeof lambda def "
    "string str bytes int number boolean bool any object optional char".split()
)


# Lower-case stems of every credential word: a text with none of them is not scanned.
_STEMS = re.compile(
    "pass|pw|pin|otp|cvv|cvc|secret|token|credential|key|verification|one|security"
    "|密码|密碼|口令|密钥|秘钥|私钥|令牌|验证码|驗證碼|校验码|动态码|安全码"
)


def find_assignments(text: str) -> list[Found]:
    lowered = text.lower()
    if not _STEMS.search(lowered):
        return []
    found: list[Found] = []
    skip = 0
    hits = CREDENTIAL_WORD.finditer(lowered) if len(lowered) == len(text) else _CREDENTIAL_WORD_ANY_CASE.finditer(text)
    for hit in hits:
        if hit.start() < skip:
            continue
        start, end = _widen(text, hit.start(), hit.end())
        skip = end
        cls = name_class(text[start:end])
        if cls is None:
            continue
        spot = _value_after(text, start, end, cls)
        if spot is not None:
            found.append(Found(spot[0], spot[1], KIND_OF_CLASS.get(cls, "api_key")))
            skip = spot[1]
    return found


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    if text[start] in _NAME_CHARS:
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
    if text[end - 1] in _NAME_CHARS:
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
    while end > start and text[end - 1] in ".-":
        end -= 1
    return start, end


_XML_VALUE = re.compile(r"([^<\n]{1,200})</")
_CHANGED_BEFORE = re.compile(r"(?i)\b(?:chang|set|reset|updat|switch|rotat)\w*\s+(?:\w+\s+){0,2}$")
_CHANGED_TO = re.compile(rf"{_H}+(?:to|into){_H}+")
_NO_SEPARATOR, _NO_SEPARATOR_CJK = re.compile(rf"{_H}+"), re.compile(rf"{_H}*")


def _value_after(text: str, start: int, pos: int, cls: str) -> tuple[int, int] | None:
    """Where the secret after the credential name text[start:pos] is, if one is."""
    if text.startswith("[redacted", pos):
        return None
    quoted_name = start > 0 and text[start - 1] in "\"'`"
    if quoted_name and pos < len(text) and text[pos] in "\"'`":
        pos += 1  # "password": …
    if pos < len(text) and text[pos] == "]":
        pos += 1  # [password] = …, ["password"] = …
    if start > 0 and text[start - 1] == "<" and text.startswith(">", pos):
        xml = _XML_VALUE.match(text, pos + 1)  # <password>hunter2</password>
        value = xml.group(1) if xml else ""
        accepted = xml and _accepts(value, cls, prose=False, quoted=True, literal=True, text=text, end=xml.end(1))
        return xml.span(1) if accepted else None
    env_name = text[start:pos].strip("\"'`$-").isupper()
    code = _CODE_SEPARATOR.match(text, pos)
    if code:  # decided either way: `password = get_password()` is code, and no sentence
        return _read_value(text, code.end(), cls, prose=False, literal=env_name)
    prose = _PROSE_SEPARATOR.match(text, pos)
    if prose:
        spot = _read_value(text, prose.end(), cls, prose=True)
        if spot is not None:
            return spot
    if _CHANGED_BEFORE.search(text, max(0, start - 40), start):
        changed = _CHANGED_TO.match(text, pos)  # "I changed my password to Winter2026!"
        if changed:
            return _read_value(text, changed.end(), cls, prose=True)
    flag = text.startswith("-", start)
    # No separator: "password Hunter2024", "--password x", "密码123456" (Chinese puts no space)
    loose = (_NO_SEPARATOR_CJK if not text[pos - 1].isascii() else _NO_SEPARATOR).match(text, pos)
    if loose and not quoted_name:  # type="password" name=…: an attribute, not a value
        return _read_value(text, loose.end(), cls, prose=False if flag else "loose", literal=flag)
    return None


def _read_value(text: str, pos: int, cls: str, *, prose, literal: bool = False) -> tuple[int, int] | None:
    if text.startswith("[redacted", pos):
        return None
    quoted = _QUOTED.match(text, pos)
    if quoted:
        group = next(i for i in range(1, 8) if quoted.group(i) is not None)
        start, end = quoted.span(group)
        value = quoted.group(group)
        if len(value.split()) >= 3 and cls == PASSWORD and "phrase" not in text[max(0, pos - 40):pos].lower():
            return None  # "Enter your password": a message about it, not a passphrase
        accepted = _accepts(value, cls, prose=prose is True, quoted=True, literal=literal, text=text, end=end + 1)
        return (start, end) if accepted else None
    bare = _BARE.match(text, pos)
    if not bare:
        return None
    value = _QUERY_NEXT.split(bare.group(0), maxsplit=1)[0]
    value = value.rstrip(".,;:?")
    for opener, closer in ("()", "[]", "{}", "<>"):
        while value.endswith(closer) and value.count(opener) < value.count(closer):
            value = value[:-1]
    value = value.rstrip(".,;:?")
    if not value:
        return None
    end = pos + len(value)
    if prose == "loose" and not (
        _looks_generated(value, shortest=6) or (value.isdigit() and len(value) >= {CVV: 3, PIN: 4, OTP: 4}.get(cls, 6))
    ):
        return None
    if not _accepts(value, cls, prose=prose is True, quoted=False, literal=literal, text=text, end=end):
        return None
    return pos, end


def _accepts(value: str, cls: str, *, prose: bool, quoted: bool, literal: bool, text: str, end: int) -> bool:
    """Whether ``value`` is a secret. ``literal``: the name is an environment variable's
    (DB_PASSWORD=secret) or a flag's, whose bare value is text, not another variable."""
    value = value.strip()
    if not value or _PLACEHOLDER.fullmatch(value):
        return False
    unit_after = value.isdigit() and _UNIT_AFTER.match(text, end)
    if cls == PIN:
        return value.isdigit() and 4 <= len(value) <= 12 and not unit_after
    if cls == OTP:
        return value.isdigit() and 4 <= len(value) <= 8 and not unit_after
    if cls == CVV:
        return value.isdigit() and 3 <= len(value) <= 4
    if unit_after:
        return False  # "密码是8位", "the token is 40 characters long"
    if not quoted and (_is_code(value, literal=literal) or _PATH.match(value)):
        return False
    if len(value) < (3 if quoted else 4):
        return False
    if cls == "key":
        return len(value) >= 16 and _looks_generated(value)
    word = value.lower() if value.isascii() and value.replace("-", "").isalpha() else None
    if prose:
        if word and (word in _PROSE_WORDS or (cls == PASSWORD and word.endswith(_PROSE_SUFFIXES))):
            return False
        return cls == PASSWORD or _looks_generated(value)  # "the token is invalid", "the secret is patience"
    return not (word and not quoted and word in _CONFIG_WORDS)


def _is_code(value: str, *, literal: bool = False) -> bool:
    """A right-hand side that reads a variable or calls something rather than holding a literal."""
    if any(c in value for c in "()[]"):
        return True
    if _IDENTIFIER_PATH.fullmatch(value) and not any(_looks_generated(part) for part in value.split(".")):
        return True  # user.password, settings.SECRET_KEY, process.env.TOKEN (not pk.eyJ1Ijoi…)
    if literal:
        return False
    if _SNAKE_OR_CAMEL.fullmatch(value) and not any(c.isdigit() for c in value):
        return True  # user_password, accessToken, DB_PASSWORD
    return name_class(value) is not None and value.replace("_", "").isalpha()  # password=password


def _looks_generated(value: str, *, shortest: int = 8) -> bool:
    """Letters and digits mixed, as generated keys are: not a word of prose."""
    if len(value) < shortest:
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
         any(not c.isalnum() for c in value))
    )
    return any(c.isdigit() for c in value) and classes >= 2
