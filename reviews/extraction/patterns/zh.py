"""Chinese statements the rule extractor reads (see ``patterns/__init__.py``)."""
from ...models import Kind
from . import skip, statement

_CJK = r"[\u4e00-\u9fff]"
_PLACE = r"(?P<v>" + _CJK + r"{2,6}?)(?=[，,。.!！;；\s]|工作|生活|上班|了|$)"
_NOT_ORGS = frozenset({"一家", "家里", "公司", "这里", "那里", "外地", "国外", "本地", "家"})

STATEMENTS = [
    # name
    statement("name", r"(?:叫我|称呼我)(?P<v>" + _CJK + r"{2,3}?)(?=就|吧|[，,。.!！\s]|$)", ("叫我", "称呼我")),
    statement("name", r"我姓" + _CJK + r"[，,]\s*叫(?P<v>" + _CJK + r"{2,3})", "我姓"),
    # role
    statement("role", r"我(?:现在|目前)?(?:是|担任)(?:一名|一个|一位|个|名)?(?P<v>" + _CJK + r"{0,4}(?:总监|负责人|主管|经理|组长))", ("我",)),
    # location
    statement("location", r"我在(?P<v>" + _CJK + r"{2,6}?)生活", "生活"),
    statement("location", r"我人在(?P<v>" + _CJK + r"{2,6}?)(?=[，,。.!！\s]|$)", "我人在"),
    statement("location", r"(?:^|[，,]\s*)(?:现在|目前)?(?:住在|定居在|常驻)" + _PLACE, ("住在", "定居", "常驻")),
    statement("location", r"我常驻" + _PLACE, "我常驻"),
    statement("location", r"(?:现在|目前)(?:住在|定居在)" + _PLACE, ("现在住在", "目前住在", "现在定居", "目前定居"),
              supersedes=True),
    statement("location", r"(?:打算|计划|准备)(?:明年|下个月|今年)?(?:搬到|搬去|移居)" + _PLACE, ("打算", "计划", "准备"),
              kind=Kind.PLAN),
    # finance (sensitive)
    statement("finance", r"我.{0,8}?(?P<v>房贷|车贷|贷款|欠款|负债|年薪|月薪|工资|收入|存款|债务)",
              ("房贷", "车贷", "贷款", "欠款", "负债", "年薪", "月薪", "工资", "收入", "存款", "债务")),
    # organisation industry: "我们公司做在线教育" / "我们公司是做跨境电商的"
    statement("industry", r"我们公司(?:是)?(?:做|从事)(?P<v>" + _CJK + r"{2,8}?)(?:的|行业|[，,。.!！]|$)", "我们公司",
              entity="organization"),
    # project status
    statement("status", r"(?:已经)?上线了?", "上线", entity="project", value="已上线"),
    statement("status", r"暂停了?", "暂停", entity="project", value="暂停"),
    statement("status", r"(?:还在|正在)开发(?:中)?", "开发", entity="project", value="开发中"),
]

# Organisations named without a suffix: "我在腾讯工作", "我在华为担任产品经理".
ORGANIZATION = statement(
    "name", r"我在(?P<v>[\u4e00-\u9fffA-Za-z0-9]{2,8}?)(?:工作|上班|实习|任职|担任|做)", "我在", entity="organization",
    not_values=_NOT_ORGS,
)

SKIP = [
    # Someone else's facts: "我朋友用 Java", "我妈妈有高血压", "他叫王强".
    skip(r"^(?:我的?|我们的?)?(?:朋友|同事|同学|老婆|老公|妻子|丈夫|妈妈|母亲|爸爸|父亲|哥哥|姐姐|弟弟|妹妹|表妹|表哥|"
         r"表姐|表弟|老板|领导|儿子|女儿|孩子|室友|邻居)"),
    skip(r"^(?:他|她|他们|她们)"),
    # Hypotheticals: "如果我搬到北京", "假设我住在深圳".
    skip(r"^(?:如果|假如|假设|要是|万一|倘若|假使)"),
]
