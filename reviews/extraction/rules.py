"""The offline rule extractor: the common English and Chinese statements, no model needed.

It reads a user's message sentence by sentence (and clause by clause where Chinese packs
two statements into one sentence) and proposes only what the user stated explicitly:
identity (name, role, organisation, location, language), preferences (a one-off request
such as "今天帮我写得短一点" is thread-scoped; "以后…" and plain requests are lasting),
projects with their database and stack, corrections ("现在迁到", "we moved … to") marked
``supersedes``, plans ("可能要", "we might") marked ``plan``, a pen name as a relation,
and health and legal matters as the sensitive fields they are. Questions, greetings and
anything holding a masked credential yield nothing.

Confidence says how fixed the phrasing is: 0.95 for statements that leave no doubt
("我叫 …", "项目使用 MySQL", "现在迁到 …", a one-off request for this conversation),
0.9 for the rest, so the policy auto-approves only the former (SPEC §3 step 8).

What it reads is data, per language (``patterns/zh.py``, ``patterns/en.py``: statements,
skip patterns, the marker words of plans, corrections, usage and requests, how a project
is named; ``patterns/tech.py``: databases and stacks); this module is the reader that
applies them. Speed matters (thousands of messages per second per core): every pattern is
compiled once and guarded by a cheap substring test, a language's statements are tried
only on sentences in its script, and nothing here touches the database.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..models import Kind, MemoryScope
from ..policy.normalize import normalize_value
from ..domain import CandidateInput
from .base import ExtractionContext, ExtractionResult
from .patterns import CLAUSE, EXPLICIT, SENTENCE, STATED, VALUE
from .patterns import en as patterns_en
from .patterns import zh as patterns_zh
from .resolve import organization_entity_id, project_entity_id
from .vocabulary import VOCABULARY
from .zh_parts import read_sentence as read_chinese_parts

RULES_VERSION = "rules-4"
LANGUAGES = (patterns_zh, patterns_en)  # read in this order



def _markers(name: str, template: str = "{}") -> re.Pattern:
    """One pattern for a marker in every language: "plan" matches "打算…" as well as "we might…"."""
    return re.compile(template.format("|".join(f"(?:{language.MARKERS[name]})" for language in LANGUAGES)), re.I)


PLAN_MARKERS = _markers("plan")
CORRECTION_MARKERS = _markers("correction")
MOVED = [re.compile(language.MARKERS["moved"], re.I) for language in LANGUAGES]  # each language's first
PAST_MARKERS = _markers("past")
USAGE_MARKERS = _markers("uses")
WORKS_ON = _markers("works_on")
LIKING = _markers("liking")
FAVOURITE = _markers("favourite")
STYLE_WORDS = _markers("style")
REQUEST_WORDS = _markers("request")
ONE_OFF = _markers("one_off")
PREFERENCE_LEADS = _markers("request_lead", r"^(?:(?:{})[\s,，:：]*)+")
_LEADING_SELF = _markers("self", "^(?:{})")
_CJK = patterns_zh.SCRIPT
_NOT_AN_ORGANIZATION = tuple(prefix for language in LANGUAGES for prefix in language.NOT_AN_ORGANIZATION)
SKIP = tuple(pattern for language in LANGUAGES for pattern in language.SKIP)


class _Guarded:
    """A list of statements, indexed by their guard words: a sentence is tried only on the
    statements whose words it contains (one substring test per distinct word), in order."""

    def __init__(self, statements):
        self.statements = tuple(statements)
        self.always = tuple(i for i, entry in enumerate(self.statements) if not entry.guard)
        by_word: dict[str, list[int]] = {}
        for i, entry in enumerate(self.statements):
            for word in entry.guard:
                by_word.setdefault(word, []).append(i)
        self.by_word = tuple((word, tuple(indices)) for word, indices in by_word.items())

    def for_sentence(self, lower: str):
        chosen = set(self.always)
        for word, indices in self.by_word:
            if word in lower:
                chosen.update(indices)
        return [self.statements[i] for i in sorted(chosen)]


# Statements about the user and organisations are read before the sentence's project is
# named, those about the project after.
_ABOUT_PEOPLE = {language: _Guarded(e for e in language.STATEMENTS if e.entity != "project") for language in LANGUAGES}
_ABOUT_PROJECTS = {language: _Guarded(e for e in language.STATEMENTS if e.entity == "project") for language in LANGUAGES}
_SPEAKER_ZH = re.compile(r"我|本人")
_MOVED_HOME_ZH = re.compile(r"搬|迁|移居")  # a new place replaces the old one
_EN_CLAUSE = re.compile(r",\s+|\s+and\s+(?=my\b|i\b|i'm\b)", re.I)


# --- Sentence and clause splitting ------------------------------------------------------
# A sentence ends at 。！？!?；, a ";" or "." before a space or the end, or a line break; not
# at the dot of "Dr." or "e.g." (a title keeps its name) nor inside "TL;DR".
_SENTENCE = re.compile(
    r"(?:[^。！？!?；;\n.]|[.;](?![\s]|$)|(?:(?<=\bDr)|(?<=\bMr)|(?<=\bMs)|(?<=\bMx)|(?<=\bMrs)|(?<=\bProf)|(?<=\bSt))\.)+"
    r"(?:[。！？!?；;.]+|\n|$)"
)
# What is quoted is someone else's words, however it is phrased: "The film opens with 'My name is …'".
_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|\"[^\"]*\"|(?<![A-Za-z])'[^'\n]*'(?![A-Za-z])")
_CLAUSE_ZH = re.compile(r"[^，,：:]+")
_STRIP = " \t\r\n。.!！,，;；:：、"


class Span:
    """A piece of the message, kept verbatim so it can serve as evidence."""

    __slots__ = ("text", "lower")

    def __init__(self, text: str):
        self.text = text
        self.lower = text.lower()  # every guard reads it: computed once


def _sentences(content: str) -> list[Span]:
    quoted = [match.span() for match in _QUOTED.finditer(content)] if _QUOTES.search(content) else []
    spans = []
    for match in _SENTENCE.finditer(content):
        for start, end in _outside(match.start(), match.end(), quoted):
            text = content[start:end].strip()
            if text.strip(_STRIP):
                spans.append(Span(text))
    return spans


_QUOTES = re.compile(r"[“「『\"']")


def _outside(start: int, end: int, quoted: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pieces of [start, end) outside every quoted region."""
    pieces = []
    for quote_start, quote_end in quoted:
        if quote_end <= start or quote_start >= end:
            continue
        if quote_start > start:
            pieces.append((start, quote_start))
        start = max(start, quote_end)
    if start < end:
        pieces.append((start, end))
    return pieces


def _clauses(sentence: Span) -> list[Span]:
    return [Span(part.strip()) for part in _CLAUSE_ZH.findall(sentence.text) if part.strip(_STRIP)]


def _is_question(sentence: Span) -> bool:
    text = sentence.text.rstrip(" 。.")
    return text.endswith(("?", "？")) or text.endswith(("吗", "呢"))


_TRAILING_PARTICLES = re.compile(r"[了吧啊呀哦呢嘛]+$")


def _clean(value: str) -> str:
    return _TRAILING_PARTICLES.sub("", value.strip().strip(_STRIP)).strip(_STRIP)


def _statement_parts(sentence: Span) -> list[Span]:
    """What of a sentence may state something: all of it, or its clauses without a masked
    credential ("我住在杭州，服务器密码是 [redacted …]") and before a trailing question
    ("我叫何平，Docker 怎么装？")."""
    redacted = "[redacted" in sentence.text
    question = _is_question(sentence)
    if not redacted and not question:
        return [sentence]
    if _CJK.search(sentence.text):
        clauses = [Span(part.strip()) for part in re.split(r"[，,；;]", sentence.text) if part.strip(_STRIP)]
    else:
        clauses = [Span(part.strip()) for part in _EN_CLAUSE.split(sentence.text) if part.strip(_STRIP)]
    if question:
        clauses = clauses[:-1]
    return [clause for clause in clauses if "[redacted" not in clause.text and not _is_question(clause)]


@dataclass
class _Project:
    entity_id: str
    name: str


class RuleExtractor:
    """Stateless: one instance serves every message."""

    name = "rules"
    prompt_version = RULES_VERSION
    reads_fields = False  # its rules name their fields; no need to load the tenant's

    def extract(self, context: ExtractionContext) -> ExtractionResult:
        if context.role != "user" or not context.content.strip():
            return ExtractionResult([])
        return ExtractionResult(_MessageReader(context).read())


class _MessageReader:
    def __init__(self, context: ExtractionContext):
        self.context = context
        self.user_id = context.user_id
        self.facts: list[CandidateInput] = []
        self._seen: set[tuple[str, str, str, str]] = set()
        self._known_projects = [
            (alias.casefold(), _Project(entity.entity_id, entity.display_name or entity.entity_id))
            for entity in context.known_of_type("project")
            for alias in (*entity.aliases, entity.display_name)
            if alias and len(alias) >= 3
        ]
        self.current_project: _Project | None = self._project_from_history()
        self.current_organization: tuple[str, str] | None = None

    # -- emitting ----------------------------------------------------------------------
    def emit(self, *, entity_type, entity_id, field, value, evidence: Span, confidence=STATED,
             entity_name="", kind=Kind.FACT, scope=MemoryScope.LONG_TERM, supersedes=False, as_named=False):
        # A name from the vocabulary is stored as it is written there (".NET" keeps its dot).
        value = value if as_named else _clean(value)
        if not value:
            return
        key = (entity_type, entity_id, field, normalize_value(value))
        if key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(
            CandidateInput(
                entity_type=entity_type,
                entity_id=entity_id,
                entity_name=entity_name,
                field=field,
                value=value,
                confidence=confidence,
                source_message_id=self.context.message_id,
                evidence=evidence.text.strip(),
                kind=kind,
                scope=scope,
                thread_id=self.context.thread_id if scope == MemoryScope.THREAD else "",
                supersedes=supersedes,
            )
        )

    def emit_user(self, field, value, evidence, **extra):
        self.emit(entity_type="user", entity_id=self.user_id, field=field, value=value, evidence=evidence, **extra)

    # -- reading -----------------------------------------------------------------------
    def read(self) -> list[CandidateInput]:
        for sentence in _sentences(self.context.content):
            for part in _statement_parts(sentence):
                self._read_sentence(part)
        return self.facts

    def _read_sentence(self, sentence: Span) -> None:
        text = sentence.text
        if any(pattern.search(text) for pattern in SKIP):
            return
        plan = bool(PLAN_MARKERS.search(self._without_project_names(text)))
        correction = bool(CORRECTION_MARKERS.search(text))
        languages = [language for language in LANGUAGES if language.SCRIPT.search(text)]
        matched: set[str] = set()  # the ``first_of`` groups a statement already matched
        if patterns_zh in languages:
            self._chinese_parts(sentence, plan=plan, correction=correction, matched=matched)
        for language in languages:
            self._statements(_ABOUT_PEOPLE[language], sentence, plan=plan, correction=correction, matched=matched)
        self._projects(sentence, plan=plan, correction=correction)
        self._preferences(sentence)
        for language in languages:  # read once the sentence's project is known
            self._statements(_ABOUT_PROJECTS[language], sentence, plan=plan, correction=correction, matched=matched)

    def _chinese_parts(self, sentence: Span, *, plan: bool, correction: bool, matched: set[str]) -> None:
        """Chinese statements by subject, verb and object (``zh_parts``), read before the
        phrasings of ``patterns/zh.py``: a field found here is not looked for there."""
        text = sentence.text
        for part in read_chinese_parts(text, subject=bool(_SPEAKER_ZH.search(text))):
            matched.add(f"zh-{part.field}")
            moved = part.field == "location" and _MOVED_HOME_ZH.search(part.clause) is not None
            self.emit_user(part.field, part.value, Span(part.clause), kind=Kind.PLAN if plan else Kind.FACT,
                           supersedes=correction or moved, confidence=EXPLICIT if part.explicit else STATED)

    def _statements(self, statements: _Guarded, sentence: Span, *, plan: bool, correction: bool,
                    matched: set[str]) -> None:
        text = sentence.text
        for entry in statements.for_sentence(sentence.lower):
            if entry.first_of and entry.first_of in matched:
                continue
            if entry.requires is not None and entry.requires.search(text) is None:
                continue
            value = entry.find(text)
            if not value:
                continue
            if entry.first_of:
                matched.add(entry.first_of)
            kind = Kind.PLAN if plan and entry.kind == Kind.FACT else entry.kind
            supersedes = entry.supersedes or correction
            if entry.takes == VALUE:
                self._state(entry, value, sentence, kind=kind, supersedes=supersedes)
            elif entry.takes == SENTENCE:
                self._state(entry, _LEADING_SELF.sub("", text), sentence, kind=kind, supersedes=supersedes)
            elif entry.takes == CLAUSE:
                for clause in _clauses(sentence):
                    if entry.pattern.search(clause.text):
                        self._state(entry, _LEADING_SELF.sub("", clause.text), clause, kind=kind, supersedes=supersedes)

    def _state(self, entry, value: str, evidence: Span, *, kind: str, supersedes: bool) -> None:
        if entry.entity == "user":
            self.emit_user(entry.field, value, evidence, confidence=entry.confidence, kind=kind, supersedes=supersedes)
        elif entry.entity == "organization" and entry.field == "name":
            self._organization(value, evidence, kind=kind)
        elif entry.entity == "organization" and self.current_organization is not None:
            entity_id, name = self.current_organization
            self.emit(entity_type="organization", entity_id=entity_id, entity_name=name, field=entry.field,
                      value=value, evidence=evidence, confidence=entry.confidence, kind=kind)
        elif entry.entity == "project" and self.current_project is not None:
            project = self.current_project
            self.emit(entity_type="project", entity_id=project.entity_id, entity_name=project.name, field=entry.field,
                      value=value, evidence=evidence, confidence=entry.confidence, kind=kind, supersedes=supersedes)

    def _without_project_names(self, text: str) -> str:
        # "星图计划现在用 TiDB" states a fact: the 计划 is part of a name, not a plan.
        lower = text.lower()
        for alias, _ in self._known_projects:
            if alias in lower:
                lower = lower.replace(alias, " ")
        return lower

    def _organization(self, name: str, sentence: Span, *, kind: str) -> None:
        name = _clean(name)
        if not name or name.startswith(_NOT_AN_ORGANIZATION):
            return  # "我在一家银行做…": some bank, not a named one
        entity_id = organization_entity_id(name)
        self.current_organization = (entity_id, name)
        self.emit(entity_type="organization", entity_id=entity_id, entity_name=name, field="name", value=name,
                  evidence=sentence, kind=kind)
        self.emit_user("relation:works_at", f"organization:{entity_id}", sentence, kind=Kind.RELATION)

    # -- projects ----------------------------------------------------------------------
    def _named_project(self, clause: Span) -> _Project | None:
        text, lower = clause.text, clause.lower
        for language in LANGUAGES:
            naming = language.PROJECT
            match = naming.pattern.search(text) if any(word in lower for word in naming.guard) else None
            if match is None:
                continue
            name = match.group("name").strip()
            if naming.strip:
                changed = True
                while changed and name:
                    changed = False
                    for prefix in naming.strip:
                        if name.startswith(prefix):
                            name, changed = name[len(prefix):].strip(), True
            if name and name.split()[0].lower() not in naming.not_names:
                name = f"{name}{naming.joiner}{match.group('kind')}"
                return _Project(project_entity_id(name), name)
            if not name and naming.bare_means_current:
                return self.current_project  # "项目使用 MySQL": the project just named
        for alias, project in self._known_projects:
            if alias in lower:
                return project
        return None

    def _project_from_history(self) -> _Project | None:
        for prior in reversed(self.context.thread_history[-6:]):
            if prior.role != "user":
                continue
            for sentence in _sentences(prior.content):
                for clause in _clauses(sentence):
                    project = self._named_project(clause)
                    if project is not None:
                        return project
        known = self.context.known_of_type("project")
        if len(known) == 1:
            return _Project(known[0].entity_id, known[0].display_name or known[0].entity_id)
        return None

    def _projects(self, sentence: Span, *, plan: bool, correction: bool) -> None:
        text = sentence.text
        has_tech = bool(VOCABULARY.find(text))
        if not has_tech and not any(language.PROJECT.mentioned(text, sentence.lower) for language in LANGUAGES):
            return
        # English prose is read whole; Chinese clause by clause ("我负责支付项目，项目使用 MySQL").
        for clause in _clauses(sentence) if not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", text) else [sentence]:
            project = self._named_project(clause)
            if project is not None:
                self.current_project = project
                if WORKS_ON.search(clause.text):
                    self.emit_user("relation:works_on", f"project:{project.entity_id}", sentence, kind=Kind.RELATION)
            if has_tech:
                clause_plan = bool(PLAN_MARKERS.search(self._without_project_names(clause.text)))
                self._tech(clause, sentence, plan=plan or clause_plan, correction=correction)

    def _tech(self, clause: Span, sentence: Span, *, plan: bool, correction: bool) -> None:
        project = self.current_project
        # "the Flask migration project uses MySQL": Flask names the project, it is not its stack.
        text = re.sub(re.escape(project.name), " ", clause.text, flags=re.I) if project else clause.text
        if project is None or LIKING.search(text):
            return
        moved = next((found for found in (pattern.search(text) for pattern in MOVED) if found), None)
        if moved:
            scope_text, supersedes = text[moved.end():], True
        elif PAST_MARKERS.search(text):
            return  # "原来用 Chroma": what it used to be is not a fact about now
        elif plan or USAGE_MARKERS.search(text):
            scope_text, supersedes = text, correction
        else:
            return
        kind = Kind.PLAN if plan else Kind.FACT
        confidence = STATED if plan else EXPLICIT
        for mention in VOCABULARY.find(scope_text):
            self.emit(entity_type="project", entity_id=project.entity_id, entity_name=project.name,
                      field=mention.field, value=mention.name, evidence=sentence, confidence=confidence, kind=kind,
                      supersedes=supersedes and mention.field == "database", as_named=True)

    # -- preferences -------------------------------------------------------------------
    def _preferences(self, sentence: Span) -> None:
        text = sentence.text
        if not (STYLE_WORDS.search(text) or LIKING.search(text)):
            return
        if _CJK.search(text):
            parts = _clauses(sentence)
        else:
            parts = [Span(part) for part in patterns_en.REQUEST_SPLIT.split(text.strip(_STRIP))]
        one_off_sentence = bool(ONE_OFF.search(text))
        for part in parts:
            if LIKING.search(part.text) and not STYLE_WORDS.search(part.text):
                if FAVOURITE.search(part.text):
                    self.emit_user("preference", _LEADING_SELF.sub("", part.text), part)
                continue
            if not (STYLE_WORDS.search(part.text) and REQUEST_WORDS.search(part.text)):
                continue
            if VOCABULARY.find(part.text) and self._projectish(part):
                continue
            value = PREFERENCE_LEADS.sub("", part.text.strip(_STRIP))
            if one_off_sentence or ONE_OFF.search(part.text):
                self.emit_user("preference", value, part, confidence=EXPLICIT, scope=MemoryScope.THREAD)
            else:
                self.emit_user("preference", value, part)

    def _projectish(self, part: Span) -> bool:
        return bool(USAGE_MARKERS.search(part.text) and self._named_project(part))
