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

Speed matters (thousands of messages per second per core): every rule is a compiled
pattern guarded by a cheap substring test, and nothing here touches the database.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..models import Kind, MemoryScope
from ..normalize import normalize_value
from ..services.candidates import CandidateInput
from .base import ExtractionContext, ExtractionResult
from .patterns import en as patterns_en
from .patterns import zh as patterns_zh
from .resolve import organization_entity_id, project_entity_id

RULES_VERSION = "rules-2"
EXPLICIT = 0.95
STATED = 0.9

# --- Vocabularies -----------------------------------------------------------------------
DATABASES = {
    "mysql": "MySQL", "postgresql": "PostgreSQL", "postgres": "PostgreSQL", "sqlite": "SQLite",
    "mongodb": "MongoDB", "mongo": "MongoDB", "mariadb": "MariaDB", "oracle": "Oracle",
    "sql server": "SQL Server", "cockroachdb": "CockroachDB", "tidb": "TiDB", "clickhouse": "ClickHouse",
    "cassandra": "Cassandra", "dynamodb": "DynamoDB", "milvus": "Milvus", "chroma": "Chroma",
    "chromadb": "Chroma", "qdrant": "Qdrant", "pinecone": "Pinecone", "weaviate": "Weaviate",
    "elasticsearch": "Elasticsearch", "opensearch": "OpenSearch", "snowflake": "Snowflake",
    "bigquery": "BigQuery", "neo4j": "Neo4j", "oceanbase": "OceanBase", "duckdb": "DuckDB",
    "pgvector": "pgvector", "supabase": "Supabase",
}
STACK = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "spring boot": "Spring Boot",
    "spring": "Spring", "rails": "Rails", "laravel": "Laravel", "express": "Express",
    "node.js": "Node.js", "nodejs": "Node.js", "next.js": "Next.js", "react": "React", "vue": "Vue",
    "angular": "Angular", "svelte": "Svelte", "kubernetes": "Kubernetes", "k8s": "Kubernetes",
    "docker": "Docker", "celery": "Celery", "kafka": "Kafka", "rabbitmq": "RabbitMQ", "redis": "Redis",
    "memcached": "Memcached", "nginx": "Nginx", "graphql": "GraphQL", "langchain": "LangChain",
    "langgraph": "LangGraph", "pytorch": "PyTorch", "tensorflow": "TensorFlow", "golang": "Go",
    "rust": "Rust", "java": "Java", "typescript": "TypeScript", "kotlin": "Kotlin",
    "terraform": "Terraform", "airflow": "Airflow", "spark": "Spark", "flink": "Flink",
    "htmx": "htmx", "sqlalchemy": "SQLAlchemy", "gunicorn": "Gunicorn",
}
_TECH = {**STACK, **DATABASES}
_TECH_PATTERN = re.compile(
    r"(?<![A-Za-z0-9])(" + "|".join(sorted(map(re.escape, _TECH), key=len, reverse=True)) + r")(?![A-Za-z0-9])",
    re.I,
)

CN_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴"
    "莫孔向汤小老阿"
)
CN_PLACES = set(
    "北京 上海 广州 深圳 杭州 南京 苏州 成都 重庆 武汉 西安 天津 长沙 厦门 青岛 大连 宁波 合肥 郑州 济南 "
    "福州 昆明 沈阳 哈尔滨 长春 石家庄 太原 南昌 南宁 贵阳 兰州 海口 三亚 珠海 东莞 佛山 无锡 香港 澳门 台北 "
    "新加坡 东京 大阪 首尔 伦敦 巴黎 柏林 纽约 旧金山 硅谷 西雅图 洛杉矶 多伦多 悉尼 墨尔本 温哥华".split()
)
_ORG_SUFFIXES = ("公司", "集团", "科技", "银行", "大学", "学院", "医院", "研究院", "研究所", "实验室", "工作室")
_ROLE_NOUNS_EN = (
    r"(?:engineer|developer|programmer|manager|designer|scientist|analyst|architect|lead|student(?! loan)|teacher|"
    r"professor|consultant|researcher|writer|founder|co-founder|cto|ceo|cfo|administrator|admin|doctor|nurse|"
    r"lawyer|accountant|marketer|intern|sre|editor|translator|product owner)"
)
_ROLE_NOUNS_ZH = (
    r"(?:工程师|程序员|开发者|经理|设计师|架构师|分析师|研究员|科学家|研究生|博士生|学生|老师|教师|医生|护士|"
    r"律师|会计|作家|编辑|翻译|顾问|运维|创始人|总监|主管|实习生)"
)
_NOT_NAMES_EN = {
    "Not", "Also", "Just", "Really", "So", "Very", "Going", "Trying", "Working", "Looking", "Sorry", "Glad",
    "Happy", "Here", "Back", "Fine", "Good", "Okay", "Ok", "Still", "Currently", "Now", "In", "At", "A", "An",
    "The", "From", "Based", "Living", "Learning", "Using", "Building", "Done", "Sure", "Thinking", "Afraid",
    "Interested", "New", "Moving", "Responsible", "Ready", "Curious", "Stuck", "Writing", "Planning",
}

# --- Sentence and clause splitting ------------------------------------------------------
_SENTENCE = re.compile(r"(?:[^。！？!?；;\n.]|\.(?![\s]|$))+(?:[。！？!?；;.]+|\n|$)")
_CLAUSE_ZH = re.compile(r"[^，,：:]+")
_STRIP = " \t\r\n。.!！,，;；:：、"


@dataclass(frozen=True)
class Span:
    """A piece of the message, kept verbatim so it can serve as evidence."""

    text: str

    @property
    def lower(self) -> str:
        return self.text.lower()


def _sentences(content: str) -> list[Span]:
    spans = []
    for match in _SENTENCE.finditer(content):
        text = match.group(0).strip()
        if text.strip(_STRIP):
            spans.append(Span(text))
    return spans


def _clauses(sentence: Span) -> list[Span]:
    return [Span(part.strip()) for part in _CLAUSE_ZH.findall(sentence.text) if part.strip(_STRIP)]


def _is_question(sentence: Span) -> bool:
    text = sentence.text.rstrip(" 。.")
    return text.endswith(("?", "？")) or text.endswith(("吗", "呢"))


_TRAILING_PARTICLES = re.compile(r"[了吧啊呀哦呢嘛]+$")


def _clean(value: str) -> str:
    return _TRAILING_PARTICLES.sub("", value.strip().strip(_STRIP)).strip(_STRIP)


# --- Patterns -------------------------------------------------------------------------------
_NAME_LATIN = r"[A-Z][A-Za-z'’-]{1,30}"
_PLACE_ZH = r"(?P<v>[\u4e00-\u9fff]{2,6}?)(?=[，,。.!！;；\s]|工作|生活|上班|定居|常驻|了|$)"
_PLACE_EN = r"(?P<v>[A-Z][\w.'-]+(?:[ ]+[A-Z][\w.'-]+){0,2})"

NAME_ZH = [
    re.compile(r"我(?:的名字)?叫\s*(?P<v>" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?|[\u4e00-\u9fff]{1,4})"),
    re.compile(r"我的名字是\s*(?P<v>" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?|[\u4e00-\u9fff]{1,4})"),
]
NAME_ZH_IS = re.compile(r"我是\s*(?P<v>" + _NAME_LATIN + r"|[\u4e00-\u9fff]{2,3})(?=[，,。.!！\s]|$)")
NAME_EN = [
    (re.compile(r"(?i:\bmy name is)\s+(?P<v>" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?)"), EXPLICIT),
    (re.compile(r"(?i:\bcall me)\s+(?P<v>" + _NAME_LATIN + r")"), STATED),
    (re.compile(r"(?i:(?<![A-Za-z])(?:i'm|i’m|i am|this is))\s+(?P<v>" + _NAME_LATIN + r")\b"), STATED),
]
ROLE_EN_AT = re.compile(
    r"(?i:\b(?:an?))\s+(?P<role>(?:[A-Za-z-]+\s+){0,3}?" + "(?i:" + _ROLE_NOUNS_EN + r"))\b"
    r"(?:\s+(?i:at|for|with)\s+(?P<org>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,2}))?"
)
ROLE_EN_IS = re.compile(r"(?i:\bmy (?:role|job title|job|position) is)\s+(?:an?\s+)?(?P<role>[\w -]{3,40}?)(?=[,.;!]|$)")
ORG_EN = re.compile(r"(?i:\bi\s+(?:work|am working|'m working)\s+(?:at|for))\s+(?P<org>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,2})")
FIRST_PERSON_EN = re.compile(r"(?i)(?<![A-Za-z])(?:i|i'm|i’m|my|me)(?![A-Za-z])")
ROLE_ZH = re.compile(r"我是(?:一名|一个|一位|个|名)?(?P<role>[\u4e00-\u9fffA-Za-z]{0,8}?" + _ROLE_NOUNS_ZH + ")")
ROLE_ZH_TRADE = re.compile(r"从事(?P<role>[\u4e00-\u9fff]{1,8}?(?:工作|行业))")
ROLE_ZH_TITLE = re.compile(r"我的(?:职位|岗位|职业|工作)是\s*(?P<role>[\u4e00-\u9fffA-Za-z ]{2,16})")
ORG_ZH_ROLE = re.compile(
    r"我在(?P<org>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)(?:做|当|担任)(?P<role>[\u4e00-\u9fffA-Za-z]{1,8}?"
    + _ROLE_NOUNS_ZH + r"|[\u4e00-\u9fff]{2,6}开发)"
)
ORG_ZH = re.compile(r"我在(?P<org>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)(?:工作|上班|任职|实习)")

LOCATION_ZH = [
    (re.compile(r"(?:之前|以前|原来)(?:住)?在[\u4e00-\u9fff]{2,6}?[，,、\s]*(?:现在|目前|如今)(?:长期|常驻|定居|住)?在" + _PLACE_ZH), True),
    (re.compile(r"(?:搬到|搬去|搬家到|移居到?|调到)了?" + _PLACE_ZH), True),
    (re.compile(r"我(?:现在|目前)?(?:住在|居住在|生活在|定居在|常驻)" + _PLACE_ZH), False),
    (re.compile(r"(?:长期|常驻)在" + _PLACE_ZH), False),
]
LOCATION_EN = [
    (re.compile(r"(?i:\bi\s+(?:just\s+|recently\s+)?(?:moved|relocated))\s+to\s+" + _PLACE_EN), True),
    (re.compile(r"(?i:\bi\s+now\s+live)\s+in\s+" + _PLACE_EN), True),
    (re.compile(r"(?i:\bi\s+(?:live|am living|'m living|reside))\s+in\s+" + _PLACE_EN), False),
    (re.compile(r"(?i:\bi'?m\s+based|\bi\s+am\s+based)\s+in\s+" + _PLACE_EN), False),
]
LANGUAGE_ZH = [
    re.compile(r"我的母语是\s*(?P<v>[\u4e00-\u9fff]{1,4}(?:语|话|文)?)"),
    re.compile(r"我(?:会说|说|讲)(?P<v>[\u4e00-\u9fff]{1,4}(?:语|话))"),
]
LANGUAGE_EN = [
    re.compile(r"(?i:\bmy (?:native|first|mother) (?:language|tongue) is)\s+(?P<v>[A-Z][a-z]+)"),
    re.compile(r"(?i:\bi speak)\s+(?P<v>[A-Z][a-z]+)"),
]
PEN_NAME = [
    re.compile(r"(?P<v>[\u4e00-\u9fff·]{1,8}|" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?)\s*是我的笔名"),
    re.compile(r"我的笔名(?:是|叫)\s*[「“\"]?(?P<v>[\u4e00-\u9fff·]{1,8}|" + _NAME_LATIN + r")"),
    re.compile(r"(?:用|以)笔名\s*[「“\"]?(?P<v>[\u4e00-\u9fff·]{1,8}|" + _NAME_LATIN + r")"),
    re.compile(r"(?i:\bmy pen ?name is)\s+(?P<v>" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?)"),
    re.compile(r"(?i:\bi write (?:under the (?:pen )?name|as))\s+(?P<v>" + _NAME_LATIN + r"(?:\s" + _NAME_LATIN + r")?)"),
]

HEALTH_ZH = re.compile(
    r"糖尿病|高血压|心脏病|冠心病|哮喘|过敏|抑郁|焦虑症|癌|肿瘤|怀孕|孕期|失眠|病史|确诊|住院|手术|服药|吃药|胰岛素|"
    r"血糖|血压|口渴|疲劳|乏力|头痛|头疼|发烧|咳嗽|胸闷|恶心"
)
HEALTH_EN = re.compile(
    r"(?i)\b(?:diabet\w*|asthma|allerg\w*|depress\w*|anxiety disorder|cancer|tumou?r|pregnan\w*|insomnia|"
    r"diagnos\w*|migraine|blood pressure|hypertension|surgery|medication|chronic \w+|adhd|insulin)\b"
)
LEGAL_ZH = re.compile(r"交通事故|车祸|诉讼|起诉|官司|仲裁|法院|判决|律师函|赔偿|离婚|纠纷|被告|原告|误工费|保险公司")
LEGAL_EN = re.compile(
    r"(?i)\b(?:lawsuit|sued|suing|sue|court|attorney|litigation|settlement|custody|divorce|arbitration|"
    r"legal dispute|legal case|landlord dispute)\b"
)

CORRECTION_ZH = re.compile(r"(?:迁到|迁移到|迁移至|迁至|切到|切换到|换成|换到|改用|改成|转到|升级到|迁去)了?")
CORRECTION_EN = re.compile(
    r"(?i)\b(?:moved|migrated|switched|changed|ported|upgraded)\b(?:[^.;]*?)\bto\b|\bnow (?:uses|runs on|on)\b"
)
CORRECTION_MARKERS = re.compile(r"(?i)^(?:correction|update|actually)\b|更正|纠正一下|更新一下|补充更正")
PAST_MARKERS = re.compile(r"(?i)原来|之前|以前|过去|曾经|\bused to\b|\bpreviously\b|\bformerly\b")
PLAN_MARKERS = re.compile(
    r"(?i)可能要|可能会|也许会?|打算|计划(?:要|把|在|下|明|今|将|于)|准备|考虑|想换|想用|想要换|\bmight\b|\bmay\b|\bplan(?:ning)? to\b|"
    r"\bthinking (?:about|of)\b|\bconsidering\b|\bgoing to\b|\bcould switch\b"
)
USAGE_MARKERS = re.compile(
    r"(?i)使用|用的是|采用|基于|跑在|部署在|用了|在用|用|\buses?\b|\busing\b|\bruns? on\b|\brunning on\b|"
    r"\bbuilt (?:on|with)\b|\bbacked by\b|\bwritten in\b|\bpowered by\b|\bon\b|\bwith\b"
)
LIKING = re.compile(r"(?i)喜欢|偏好|最爱|\bprefer\b|\bi like\b|\bfavou?rite\b")

PROJECT_ZH = re.compile(r"(?P<name>[A-Za-z0-9.+_\- \u4e00-\u9fff]*?)(?P<kind>项目|工程)")
PROJECT_ZH_PREFIXES = (
    "更新一下", "我们的", "我们", "我的", "我", "负责", "参与", "主导", "维护", "正在做", "在做", "做",
    "一个", "这个", "那个", "该", "的", "个", "目前", "现在", "主要", "上周", "这周", "了",
)
PROJECT_EN = re.compile(
    r"(?i:\b(?:our|my|the))\s+(?P<name>(?:[A-Za-z0-9][\w.+-]*\s+){0,2}?[A-Za-z0-9][\w.+-]*)\s+"
    r"(?P<kind>(?i:project|service|app|application|system|platform|backend|api|website|pipeline))\b"
)
_PROJECT_EN_NOT_NAMES = {"new", "whole", "same", "other", "main", "current", "old", "this", "that", "entire"}
WORKS_ON_ZH = re.compile(r"(?:^|我|主要)\s*(?:负责|在做|正在做|参与|主导|维护)")
WORKS_ON_EN = re.compile(r"(?i)\bi\s+(?:work on|am working on|'m working on|lead|maintain|own|run|am responsible for)\b")

ONE_OFF = re.compile(
    r"(?i)今天|这次|这一次|本次|此次|这回|今晚|暂时|这个问题|\bthis time\b|\btoday\b|\bfor now\b|\bjust for this\b|"
    r"\bfor this (?:one|answer|question|reply|conversation|chat)\b|\bright now\b"
)
STYLE_WORDS = re.compile(
    r"(?i)短一|短点|简洁|简短|详细|简单|中文|英文|例子|示例|步骤|运行方式|注释|测试|生产实践|格式|列表|要点|表格|语气|"
    r"正式|口语|markdown|\bbullet|\bshort\b|\bshorter\b|\bconcise|\bbrief|\bdetailed\b|\bexamples?\b|\btests?\b|"
    r"\bcomments?\b|\bsteps\b|\bformat|\btone\b|\bformal\b|\bcasual\b|\benglish\b|\bchinese\b|\bgerman\b|"
    r"\btype hints\b|\bplain language\b|\bemoji"
)
# A quality alone is not a preference ("帮我写测试" is a task): it needs a habit or a way of answering.
REQUEST_WORDS = re.compile(
    r"(?i)尽量|请|麻烦|回答|回复|写得|讲得|说得|以后|今后|总是|每次|始终|今天|这次|这一次|本次|\bplease\b|\bkeep\b|"
    r"\balways\b|\bnever\b|\bprefer\b|\b(?:answer|reply|respond) in\b|\banswers\b|\breplies\b|\bresponses\b|"
    r"\bthis time\b|\bfrom now on\b|\bdon't\b|\bdo not\b|\bavoid\b"
)
PREFERENCE_LEADS = re.compile(
    r"(?i)^(?:(?:以后|今后|往后|从现在起|今天|这次|这一次|本次|此次|这回|今晚|暂时|麻烦|请你?|帮我|并且|而且|另外|还有|"
    r"please|just this time|this time|for now|today|from now on|going forward|in future|in the future)[\s,，:：]*)+"
)
_EN_AND_SPLIT = re.compile(r"\s+and\s+(?=(?:always|never|include|use|add|keep|avoid|don't|do not|write|give|answer|reply)\b)", re.I)
_LEADING_I = re.compile(r"(?i)^(?:我|i\s+|i'm\s+|i am\s+)")


STATEMENTS = (*patterns_zh.STATEMENTS, *patterns_en.STATEMENTS)
ORGANIZATIONS = (patterns_zh.ORGANIZATION, patterns_en.ORGANIZATION)
SKIP = (*patterns_zh.SKIP, *patterns_en.SKIP)
_NOT_AN_ORGANIZATION = ("一家", "一个", "某", "a ", "an ", "some ")
_EN_CLAUSE = re.compile(r",\s+|\s+and\s+(?=my\b|i\b|i'm\b)", re.I)


def _statement_parts(sentence: Span) -> list[Span]:
    """What of a sentence may state something: all of it, or its clauses without a masked
    credential ("我住在杭州，服务器密码是 [redacted …]") and before a trailing question
    ("我叫何平，Docker 怎么装？")."""
    redacted = "[redacted" in sentence.text
    question = _is_question(sentence)
    if not redacted and not question:
        return [sentence]
    if re.search(r"[\u4e00-\u9fff]", sentence.text):
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
             entity_name="", kind=Kind.FACT, scope=MemoryScope.LONG_TERM, supersedes=False):
        value = _clean(value)
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
        if any(pattern.search(sentence.text) for pattern in SKIP):
            return
        plan = bool(PLAN_MARKERS.search(self._without_project_names(sentence.text)))
        correction = bool(CORRECTION_MARKERS.search(sentence.text))
        self._sensitive(sentence)
        self._identity(sentence, plan=plan, correction=correction)
        self._projects(sentence, plan=plan, correction=correction)
        self._preferences(sentence)
        self._statements(sentence, plan=plan, correction=correction)

    def _statements(self, sentence: Span, *, plan: bool, correction: bool) -> None:
        text, lower = sentence.text, sentence.lower
        for pattern in ORGANIZATIONS:
            name = pattern.find(text, lower)
            if name and name not in CN_PLACES:
                self._organization(name, sentence, kind=Kind.PLAN if plan else Kind.FACT)
        for entry in STATEMENTS:
            value = entry.find(text, lower)
            if not value:
                continue
            kind = Kind.PLAN if plan and entry.kind == Kind.FACT else entry.kind
            supersedes = entry.supersedes or correction
            if entry.entity == "user":
                self.emit_user(entry.field, value, sentence, kind=kind, supersedes=supersedes)
            elif entry.entity == "project" and self.current_project is not None:
                project = self.current_project
                self.emit(entity_type="project", entity_id=project.entity_id, entity_name=project.name,
                          field=entry.field, value=value, evidence=sentence, kind=kind, supersedes=supersedes)
            elif entry.entity == "organization" and self.current_organization is not None:
                entity_id, name = self.current_organization
                self.emit(entity_type="organization", entity_id=entity_id, entity_name=name, field=entry.field,
                          value=value, evidence=sentence, kind=kind)

    def _without_project_names(self, text: str) -> str:
        # "星图计划现在用 TiDB" states a fact: the 计划 is part of a name, not a plan.
        lower = text.lower()
        for alias, _ in self._known_projects:
            if alias in lower:
                lower = lower.replace(alias, " ")
        return lower

    def _sensitive(self, sentence: Span) -> None:
        lower = sentence.lower
        zh_first_person = "我" in sentence.text
        en_first_person = bool(FIRST_PERSON_EN.search(sentence.text))
        if HEALTH_ZH.search(sentence.text) and zh_first_person:
            for clause in _clauses(sentence):
                if HEALTH_ZH.search(clause.text):
                    self.emit_user("health", _LEADING_I.sub("", clause.text), clause)
        elif HEALTH_EN.search(lower) and en_first_person:
            self.emit_user("health", _LEADING_I.sub("", sentence.text), sentence)
        if LEGAL_ZH.search(sentence.text) or (LEGAL_EN.search(lower) and en_first_person):
            self.emit_user("legal_matter", _LEADING_I.sub("", sentence.text), sentence)

    def _identity(self, sentence: Span, *, plan: bool, correction: bool) -> None:
        text, lower = sentence.text, sentence.lower
        kind = Kind.PLAN if plan else Kind.FACT
        if "我" in text:
            self._identity_zh(sentence, kind=kind, correction=correction)
        if "i" in lower and FIRST_PERSON_EN.search(text):
            self._identity_en(sentence, kind=kind, correction=correction)
        if "笔名" in text or "pen name" in lower or "write under" in lower or "write as" in lower:
            for pattern in PEN_NAME:
                match = pattern.search(text)
                if match:
                    self.emit_user("relation:pen_name", match.group("v"), sentence, kind=Kind.RELATION)
                    break

    def _identity_zh(self, sentence: Span, *, kind: str, correction: bool) -> None:
        text = sentence.text
        if "叫" in text or "名字" in text:
            for pattern in NAME_ZH:
                match = pattern.search(text)
                if match:
                    self.emit_user("name", match.group("v"), sentence, confidence=EXPLICIT, kind=kind)
                    break
        if "我是" in text:
            match = NAME_ZH_IS.search(text)
            if match and match.group("v")[0] in CN_SURNAMES | set("ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
                if not re.search(_ROLE_NOUNS_ZH, match.group("v")):
                    self.emit_user("name", match.group("v"), sentence, kind=kind)
            match = ROLE_ZH.search(text)
            if match:
                self.emit_user("role", match.group("role"), sentence, kind=kind)
        if "从事" in text:
            match = ROLE_ZH_TRADE.search(text)
            if match:
                self.emit_user("role", match.group("role"), sentence, kind=kind)
        if "我的" in text:
            match = ROLE_ZH_TITLE.search(text)
            if match:
                self.emit_user("role", match.group("role"), sentence, kind=kind)
        if "我在" in text:
            match = ORG_ZH_ROLE.search(text) or ORG_ZH.search(text)
            if match:
                place = match.group("org")
                if place in CN_PLACES:
                    self.emit_user("location", place, sentence, kind=kind, supersedes=correction)
                elif place.endswith(_ORG_SUFFIXES) or re.match(r"[A-Z]", place):
                    self._organization(place, sentence, kind=kind)
                if "role" in match.groupdict() and match.group("role"):
                    self.emit_user("role", match.group("role"), sentence, kind=kind)
        if "在" in text or "搬" in text or "移居" in text:
            for pattern, supersedes in LOCATION_ZH:
                match = pattern.search(text)
                if match:
                    self.emit_user("location", match.group("v"), sentence, kind=kind, supersedes=supersedes or correction)
                    break
        if "语" in text or "话" in text:
            for pattern in LANGUAGE_ZH:
                match = pattern.search(text)
                if match:
                    self.emit_user("language", match.group("v"), sentence, kind=kind)
                    break

    def _identity_en(self, sentence: Span, *, kind: str, correction: bool) -> None:
        text, lower = sentence.text, sentence.lower
        if "name" in lower or "i'm" in lower or "i’m" in lower or "i am" in lower or "this is" in lower or "call me" in lower:
            for pattern, confidence in NAME_EN:
                match = pattern.search(text)
                if match and match.group("v").split()[0] not in _NOT_NAMES_EN:
                    self.emit_user("name", match.group("v"), sentence, confidence=confidence, kind=kind)
                    break
        match = ROLE_EN_AT.search(text) if (" a " in lower or " an " in lower) else None
        if match:
            self.emit_user("role", match.group("role"), sentence, kind=kind)
            if match.group("org"):
                self._organization(match.group("org"), sentence, kind=kind)
        elif "my " in lower:
            match = ROLE_EN_IS.search(text)
            if match:
                self.emit_user("role", match.group("role"), sentence, kind=kind)
        if " work" in lower:
            match = ORG_EN.search(text)
            if match:
                self._organization(match.group("org"), sentence, kind=kind)
        if " in " in lower or " to " in lower:
            for pattern, supersedes in LOCATION_EN:
                match = pattern.search(text)
                if match:
                    self.emit_user("location", match.group("v"), sentence, kind=kind, supersedes=supersedes or correction)
                    break
        if "speak" in lower or "language" in lower or "tongue" in lower:
            for pattern in LANGUAGE_EN:
                match = pattern.search(text)
                if match:
                    self.emit_user("language", match.group("v"), sentence, kind=kind)
                    break

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
        text = clause.text
        if "项目" in text or "工程" in text:
            match = PROJECT_ZH.search(text)
            if match:
                name = match.group("name").strip()
                changed = True
                while changed and name:
                    changed = False
                    for prefix in PROJECT_ZH_PREFIXES:
                        if name.startswith(prefix):
                            name, changed = name[len(prefix):].strip(), True
                if name:
                    return _Project(project_entity_id(name), f"{name}{match.group('kind')}")
                return self.current_project  # "项目使用 MySQL": the project just named
        match = PROJECT_EN.search(text)
        if match and match.group("name").split()[0].lower() not in _PROJECT_EN_NOT_NAMES:
            name = f"{match.group('name')} {match.group('kind')}"
            return _Project(project_entity_id(name), name)
        lower = clause.lower
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
        has_tech = bool(_TECH_PATTERN.search(text))
        if not has_tech and "项目" not in text and "工程" not in text and not PROJECT_EN.search(text):
            return
        for clause in _clauses(sentence) if not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", text) else [sentence]:
            project = self._named_project(clause)
            if project is not None:
                self.current_project = project
                if WORKS_ON_ZH.search(clause.text) or WORKS_ON_EN.search(clause.text):
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
        moved = CORRECTION_ZH.search(text) or CORRECTION_EN.search(text)
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
        for match in _TECH_PATTERN.finditer(scope_text):
            token = match.group(1).lower()
            field = "database" if token in DATABASES else "tech_stack"
            self.emit(entity_type="project", entity_id=project.entity_id, entity_name=project.name, field=field,
                      value=_TECH[token], evidence=sentence, confidence=confidence, kind=kind,
                      supersedes=supersedes and field == "database")

    # -- preferences -------------------------------------------------------------------
    def _preferences(self, sentence: Span) -> None:
        text = sentence.text
        if not (STYLE_WORDS.search(text) or LIKING.search(text)):
            return
        if re.search(r"[\u4e00-\u9fff]", text):
            parts = _clauses(sentence)
        else:
            parts = [Span(part) for part in _EN_AND_SPLIT.split(text.strip(_STRIP))]
        one_off_sentence = bool(ONE_OFF.search(text))
        for part in parts:
            if LIKING.search(part.text) and not STYLE_WORDS.search(part.text):
                if re.search(r"最喜欢|偏好|\bprefer\b|\bfavou?rite\b|更喜欢", part.text):
                    self.emit_user("preference", _LEADING_I.sub("", part.text), part)
                continue
            if not (STYLE_WORDS.search(part.text) and REQUEST_WORDS.search(part.text)):
                continue
            if _TECH_PATTERN.search(part.text) and self._projectish(part):
                continue
            value = PREFERENCE_LEADS.sub("", part.text.strip(_STRIP))
            if one_off_sentence or ONE_OFF.search(part.text):
                self.emit_user("preference", value, part, confidence=EXPLICIT, scope=MemoryScope.THREAD)
            else:
                self.emit_user("preference", value, part)

    def _projectish(self, part: Span) -> bool:
        return bool(USAGE_MARKERS.search(part.text) and self._named_project(part))
