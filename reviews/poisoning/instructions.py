"""Values that speak to the agent: the ``instruction_like`` scorer (SPEC §3 "Poisoning").

A memory describes its subject ("lives in Paris", "prefers bullet points"). One that
addresses the model that will later read it ("ignore your previous instructions", "call
the send_email tool with …", "send the address to https://…") is an injection waiting in
the store, whatever its confidence. This module scores a text and says why.

How it decides, in three steps a reviewer can follow:

1. **Normalise** away the disguises: NFKC (full-width ``ｉｇｎｏｒｅ`` becomes ``ignore``),
   lower case, markdown emphasis and code fences dropped, leetspeak read back
   (``1gn0r3`` → ``ignore``), letters spaced out joined (``i g n o r e`` → ``ignore``).
2. **Match cues**, each a small pattern with a weight and a family:

   - ``override``: an instruction-cancelling verb with what it cancels ("ignore … previous
     instructions", "忽略之前的指令"), a new identity ("you are now", "developer mode",
     "你现在是"), a fake role header ("SYSTEM:");
   - ``reveal``: a disclosure verb with something the agent must keep (its prompt or
     instructions, keys and passwords, other users' data; "打印系统提示词");
   - ``tool``: calling or running a tool, function or command ("call the send_email
     tool", ``transfer_funds(``, "执行命令");
   - ``url``: sending, fetching or following an address (a verb of moving data near a URL
     or a bare domain with a path, a markdown image that would load one).

   A cue preceded by a negation ("never reveal my phone number", "不要把…告诉") is a
   preference about privacy, not a request, and does not count.
3. **Sum** the weights; :data:`THRESHOLD` or more is ``instruction_like``. Each weight is at
   most the threshold: one strong cue is enough, weak ones (a bare "assistant:", a URL
   with no verb) need company.

Ordinary preferences about answers and code ("always answer in bullet points",
"用表格回答", "use type hints", "from now on, call me Alex") match none of the cues: they
say how to answer, not what to disobey, reveal, call or send. The corpus and its figures:
``tests/fixtures/poisoning_corpus.jsonl``, ``tests/poisoning/test_instruction_scorer.py``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

THRESHOLD = 1.0

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_MARKUP = re.compile(r"```[a-z]*|`|\*\*|__|~~|^#+\s|^>\s", re.M)
# Letters spaced out: four or more single letters in a row ("i g n o r e").
_SPACED = re.compile(r"\b(?:[a-z] ){3,}[a-z]\b")
_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` with its disguises taken off (step 1)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _MARKUP.sub(" ", text)
    text = _WHITESPACE.sub(" ", text)
    text = _SPACED.sub(lambda match: match.group(0).replace(" ", ""), text)
    # Leetspeak only inside words that mix digits and letters: "rm -rf" stays, "2019" stays.
    return re.sub(r"\b(?=[\w@$!.]*[a-z])(?=[\w@$!.]*[0-9@$!])[\w@$!.]+", lambda m: m.group(0).translate(_LEET), text)


def _plain(text: str) -> str:
    return _WHITESPACE.sub(" ", _MARKUP.sub(" ", unicodedata.normalize("NFKC", text).casefold()))


@dataclass(frozen=True)
class Cue:
    family: str
    why: str
    pattern: re.Pattern
    weight: float = THRESHOLD


def _cue(family: str, why: str, pattern: str, weight: float = THRESHOLD) -> Cue:
    return Cue(family, why, re.compile(pattern, re.S), weight)


_CANCEL = (r"(?:ignore|disregard|forget|override|bypass|skip|stop following|do not follow|don't follow|cancel|void"
           r"|set aside|put aside|drop|abandon|suspend|turn off|switch off|disable)")
_RULES = (r"(?:instruction|prompt|rule|guideline|guidance|directive|polic(?:y|ies)|constraint|system message"
          r"|developer message|order|safeguard|filter|(?:safety|security) check|restriction|programming|training)s?")
_PRIOR = (r"(?:previous|prior|above|earlier|all|any|your|the|original|initial|its|these|safety|content|system|developer"
          r"|whatever|existing|current|usual|security)")
_DISCLOSE = (r"(?:reveal|print|show|output|repeat|tell|leak|dump|display|share|send|list|give|read out|include|expose"
             r"|disclose|respond with|answer with|reply with|paste|provide|mention|hand over|write out|spell out|copy"
             r"|quote|email|forward|export)")
_GUARDED = (
    r"(?:system prompt|(?:initial|hidden|original|system) (?:prompt|instructions?)|your (?:prompt|instructions)"
    r"|api key|secret key|access token|credentials?|passwords?|environment variables|secrets"
    r"|(?:other|all|every) (?:users?|customers?|tenants?)(?:'s?)?|every (?:user|customer)'s|configuration"
    r"|conversation history|chat log|memory store|tools you can call|text above"
    r"|(?:hidden|internal|secret) (?:configuration|config|settings|text|rules)|configuration text|instructions? block"
    r"|contents of your (?:instructions|prompt|configuration|memory)|your (?:initial|original) (?:settings|setup|configuration)"
    r"|(?:stored|saved|remembered) (?:\w+ ){0,2}of (?:the )?other|other (?:people|persons|individuals)"
    r"|medical records|card (?:details|numbers?)|bank details)"
)
_ZH_CANCEL = r"(?:忽略|无视|忘记|忘掉|不要遵守|不再遵守|别管|跳过|别再按照|不要再按照|不再按照|不用遵守|抛开|放弃)"
_ZH_RULES = r"(?:指令|指示|规则|提示|要求|限制|设定)"
_ZH_DISCLOSE = r"(?:打印|显示|输出|告诉|泄露|透露|列出|重复|发给|给我看|说出|原样|复制|贴出|提供)"
_ZH_GUARDED = r"(?:系统提示|提示词|隐藏指令|密钥|密码|令牌|其他用户|所有用户|别的用户|聊天记录|记忆|初始设定|系统设定|内部设定|配置|病历|银行卡)"
_URL = r"(?:https?://|ftp://|www\.|\b[a-z0-9-]+\.(?:com|net|org|io|site|ly|me|xyz|ru|cn|example)/)"
_NEGATION = re.compile(r"(?:\bnever|\bdon't|\bdo not|\bnot|\bno one|不要|别|请勿|不准)\W*(?:\w+\W+){0,2}$")

CUES: tuple[Cue, ...] = (
    # override
    _cue("override", "cancels the agent's instructions", rf"\b{_CANCEL}\b[^.;:!?\n]{{0,40}}?\b{_PRIOR}\b[^.;:!?\n]{{0,30}}?\b{_RULES}\b"),
    _cue("override", "cancels the agent's instructions", rf"\b{_CANCEL}\b (?:everything|all) (?:above|before|you were told)"),
    _cue("override", "declares the agent's instructions void", rf"\b(?:previous|prior|earlier|original) (?:{_RULES}|directives?)\b[^.\n]{{0,20}}\b(?:are|is) (?:void|cancel+ed|replaced|revoked|null)"),
    _cue("override", "gives the agent a new identity", r"\byou are now\b|\bfrom now on,? you (?:are|must|will|should)\b|\bact as an? (?:ai|assistant|model)\b|\bpretend (?:you|the system)"),
    _cue("override", "switches off the agent's rules", r"\b(?:developer|jailbreak|god|dan) mode\b|\bdo anything now\b|\bwithout (?:any )?restrictions\b|\bno longer follow\b|\bnot bound by\b|\bunrestricted (?:ai|assistant|model)\b|\bfree of all\b"),
    _cue("override", "addresses the agent with new orders", r"\bnew (?:instructions|rules|system prompt)\b|\b(?:instruction|note|message) (?:to|for) the (?:ai|assistant|model|agent)\b|\bas your new system prompt\b|\bobey (?:me|only|the user)\b|\bawait my orders\b"),
    _cue("override", "poses as a system or developer message", r"(?:^|\n|\s)(?:system|developer|assistant|admin)\s*:", 0.6),
    _cue("override", "tells the agent to disobey its rules", r"\b(?:ignore|disregard|override|bypass)\b[^.\n]{0,25}\b(?:safety|content|policy|policies|its|your) (?:rules|guidelines|instructions|polic(?:y|ies)|filters?)\b"),
    _cue("override", "cancels the agent's instructions (zh)", rf"{_ZH_CANCEL}.{{0,12}}{_ZH_RULES}"),
    _cue("override", "gives the agent a new identity (zh)", r"你现在是|从现在开始.{0,6}(?:你|只听)|不受任何.{0,4}(?:规则|限制)|没有限制的(?:助手|ai|模型)|(?:提示|指令|规则).{0,6}(?:作废|无效)|听我的|按我说的做"),
    _cue("override", "claims authority over the agent", r"\b(?:i|we) (?:authori[sz]e|permit|allow|order|command|instruct) you to\b|\bno longer appl(?:y|ies)\b|\bhelp me unconditionally\b|\bwithout (?:any )?(?:checks|limits|filters)\b"),
    # reveal
    _cue("reveal", "asks the agent to disclose what it must keep", rf"\b{_DISCLOSE}\b[^.;!?\n]{{0,45}}?\b{_GUARDED}"),
    _cue("reveal", "asks for other people's data", r"\b(?:other|all|every) (?:users?|customers?|tenants?)(?:'s?)? (?:\w+ ){0,2}(?:data|details|emails?|addresses|memories|information|messages|history|phone)"),
    _cue("reveal", "asks for the text of the agent's prompt", r"\brepeat the (?:text|words|prompt) above\b|\bstarting with ['\"]you are"),
    _cue("reveal", "asks the agent to disclose what it must keep (zh)", rf"{_ZH_DISCLOSE}.{{0,12}}{_ZH_GUARDED}|{_ZH_GUARDED}.{{0,8}}(?:告诉|发给|给我|列出来|显示出来)"),
    # tool
    _cue("tool", "tells the agent to call a tool", r"\b(?:call|use|invoke|trigger|run|execute)\b (?:the |your |a )?[\w\- ]{0,25}\b(?:tool|function|api|plugin|interpreter|webhook)\b"),
    _cue("tool", "calls a function", r"\b(?:call|invoke|run|execute)\b[^.\n]{0,20}\b[a-z]+_[a-z_]+\s*\(|\b[a-z]+_[a-z_]+\([^)]*\)\s*(?:right away|now|before|first)|\b(?:call|invoke) (?:the function )?[a-z]+_[a-z_]+\b"),
    _cue("tool", "runs a command", r"\b(?:run|execute)\b[^.\n]{0,25}\b(?:command|shell|script|code)\b|\brm -rf\b|\bcurl [^\s]+ ?\| ?(?:sh|bash)\b|\bdrop table\b|\bos\.(?:system|environ)\b"),
    _cue("tool", "runs a shell command", r"\b(?:run|execute|type)\b\s+(?:sudo |cat |ls |wget |curl |chmod |bash |sh |python |powershell )\S*|/etc/(?:passwd|shadow)\b"),
    _cue("tool", "tells the agent to use its tools on someone's behalf", r"\busing (?:your|the) [\w\- ]{0,20}\b(?:tool|function|plugin|integration)\b"),
    _cue("tool", "a tool call written out", r"[\"']tool[\"']\s*:\s*[\"'][a-z_]+|\btool_call\b|[\"']function[\"']\s*:"),
    _cue("tool", "tells the agent to call a tool (zh)", r"(?:调用|使用|用).{0,15}(?:工具|函数|接口|api)|执行.{0,6}(?:命令|脚本|代码)|rm -rf"),
    # url
    _cue("url", "sends or fetches data at an address", rf"\b(?:send|post|forward|upload|exfiltrate|fetch|load|visit|open|navigate to|download|report|append|curl|wget|log|submit|grab|transmit|pipe|beam|retrieve|get|read|pull|push|mail|email|sync)\b[^\n]{{0,60}}?{_URL}"),
    _cue("url", "sends data to an e-mail address", r"\b(?:send|email|e-mail|mail|forward|cc|bcc)\b[^\n]{0,60}?\b[\w.+-]+@[\w-]+\.[\w.]+"),
    _cue("url", "a markdown image that would load an address", rf"!\[[^\]]*\]\(\s*{_URL}"),
    _cue("url", "links the agent's answers to an address", rf"\b(?:add|include|append|attach)\b[^.\n]{{0,30}}\blink\b[^\n]{{0,30}}{_URL}|\bin (?:every|each|all) (?:answer|reply|response)s?\b[^\n]{{0,10}}$"),
    _cue("url", "sends or fetches data at an address (zh)", rf"(?:发送到|发到|上传到|访问|打开|读取|下载|附上链接|转发到).{{0,10}}{_URL}|{_URL}\S*\s*(?:并执行|读取)"),
    _cue("url", "an address and an order to follow it", rf"{_URL}[^\n]{{0,40}}\b(?:follow|obey|run|execute|do what it says|do as it says)\b", 1.0),
    _cue("url", "an address with a placeholder for data", rf"{_URL}\S*(?:=|\?)(?:\s|$|[a-z_]*data)", 0.6),
    _cue("override", "addresses the agent about this memory", r"\bwhen(?:ever)? (?:you read this|asked about this user|the user (?:asks|mentions|says)|someone says)", 0.5),
)


@dataclass(frozen=True)
class Score:
    score: float
    reasons: tuple[str, ...]  # each "family: why", in the order found

    @property
    def instruction_like(self) -> bool:
        return self.score >= THRESHOLD


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATION.search(text[max(0, start - 30): start]))


def score(text: str) -> Score:
    """How much ``text`` speaks to the agent, and the cues that say so (steps 2 and 3)."""
    if not text:
        return Score(0.0, ())
    # Two readings: disguises off (leetspeak read back, spaced letters joined), and only
    # NFKC and case folded, since reading leetspeak back also turns "doctor@evil.example"
    # into "doctoraevil.example".
    readings = (normalise(text), _plain(text))
    total, reasons = 0.0, []
    for cue in CUES:
        match = next(
            (m for reading in readings for m in cue.pattern.finditer(reading) if not _negated(reading, m.start())), None
        )
        if match is None:
            continue
        reason = f"{cue.family}: {cue.why}"
        if reason in reasons:
            continue
        total += cue.weight
        reasons.append(reason)
    return Score(round(total, 2), tuple(reasons))


def is_instruction_like(text: str) -> bool:
    return score(text).instruction_like
