"""Chinese statements the rule extractor reads (see ``patterns/__init__.py``)."""
import re

from ...models import Kind
from . import CLAUSE, EXPLICIT, NAME_LATIN, SENTENCE, ProjectNaming, skip, statement

SCRIPT = re.compile(r"[\u4e00-\u9fff]")  # the sentences these statements are tried on
SELF = re.compile("我")

_CJK = r"[\u4e00-\u9fff]"
_NAME = r"(?P<v>" + NAME_LATIN + r"(?:\s" + NAME_LATIN + r")?|" + _CJK + r"{1,4})"
_PLACE = r"(?P<v>" + _CJK + r"{2,6}?)(?=[，,。.!！;；\s]|工作|生活|上班|了|$)"
# Where one lives ("住在杭州", "现在常驻深圳"): the place may be followed by how.
_PLACE_LIVED = r"(?P<v>" + _CJK + r"{2,6}?)(?=[，,。.!！;；\s]|工作|生活|上班|定居|常驻|了|$)"
_ROLE_NOUNS = (
    r"(?:工程师|程序员|开发者|经理|设计师|架构师|分析师|研究员|科学家|研究生|博士生|学生|老师|教师|医生|护士|"
    r"律师|会计|作家|编辑|翻译|顾问|运维|创始人|总监|主管|实习生)"
)
_ROLE_AT = r"[\u4e00-\u9fffA-Za-z]{1,8}?" + _ROLE_NOUNS + r"|" + _CJK + r"{2,6}开发"
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴"
    "莫孔向汤小老阿"
)
PLACES = frozenset(
    "北京 上海 广州 深圳 杭州 南京 苏州 成都 重庆 武汉 西安 天津 长沙 厦门 青岛 大连 宁波 合肥 郑州 济南 "
    "福州 昆明 沈阳 哈尔滨 长春 石家庄 太原 南昌 南宁 贵阳 兰州 海口 三亚 珠海 东莞 佛山 无锡 香港 澳门 台北 "
    "新加坡 东京 大阪 首尔 伦敦 巴黎 柏林 纽约 旧金山 硅谷 西雅图 洛杉矶 多伦多 悉尼 墨尔本 温哥华".split()
)
_PLACE_NAMED = r"(?P<v>" + "|".join(sorted(PLACES, key=len, reverse=True)) + r")"
_ORG_SUFFIXES = r"(?:公司|集团|科技|银行|大学|学院|医院|研究院|研究所|实验室|工作室)"
# "我在腾讯工作", "我在华为担任产品经理", "我在阿里做前端开发": what follows a workplace.
_AT_WORK = r"(?=(?:做|当|担任)(?:" + _ROLE_AT + r")|工作|上班|任职|实习)"
NOT_AN_ORGANIZATION = ("一家", "一个", "某")  # "我在一家银行做…": some bank, not a named one
_NOT_ORGS = frozenset({"一家", "家里", "公司", "这里", "那里", "外地", "国外", "本地", "家"}) | PLACES

_HEALTH = (
    r"糖尿病|高血压|心脏病|冠心病|哮喘|过敏|抑郁|焦虑症|癌|肿瘤|怀孕|孕期|失眠|病史|确诊|住院|手术|服药|吃药|胰岛素|"
    r"血糖|血压|口渴|疲劳|乏力|头痛|头疼|发烧|咳嗽|胸闷|恶心"
)
_LEGAL = r"交通事故|车祸|诉讼|起诉|官司|仲裁|法院|判决|律师函|赔偿|离婚|纠纷|被告|原告|误工费|保险公司"

STATEMENTS = [
    # health and legal matters (sensitive): the clause or sentence that says it
    statement("health", _HEALTH, requires=SELF, takes=CLAUSE, first_of="health"),
    statement("legal_matter", _LEGAL, takes=SENTENCE),
    # name
    statement("name", r"我(?:的名字)?叫\s*" + _NAME, ("叫", "名字"), confidence=EXPLICIT, first_of="zh-name"),
    statement("name", r"我的名字是\s*" + _NAME, ("叫", "名字"), confidence=EXPLICIT, first_of="zh-name"),
    # "我是王磊": a surname first, and not "我是王老师"
    statement("name", r"我是\s*(?P<v>(?!.{0,2}?" + _ROLE_NOUNS + r")(?:" + NAME_LATIN + r"|[" + SURNAMES + r"]"
              + _CJK + r"{1,2}))(?=[，,。.!！\s]|$)", "我是"),
    # role
    statement("role", r"我是(?:一名|一个|一位|个|名)?(?P<v>[\u4e00-\u9fffA-Za-z]{0,8}?" + _ROLE_NOUNS + ")", "我是", first_of="zh-role"),
    statement("role", r"从事(?P<v>" + _CJK + r"{1,8}?(?:工作|行业))", "从事", requires=SELF, first_of="zh-role"),
    statement("role", r"我的(?:职位|岗位|职业|工作)是\s*(?P<v>[\u4e00-\u9fffA-Za-z ]{2,16})", "我的", first_of="zh-role"),
    # where one works: a city, or a named organisation, and the role there
    statement("location", r"我在" + _PLACE_NAMED + _AT_WORK, "我在"),
    statement("name", r"我在(?P<v>(?:[A-Z][\u4e00-\u9fffA-Za-z0-9]{1,11}?|[\u4e00-\u9fffA-Za-z0-9]{0,10}?"
              + _ORG_SUFFIXES + r"))" + _AT_WORK, "我在", entity="organization", not_values=_NOT_ORGS),
    statement("role", r"我在[\u4e00-\u9fffA-Za-z0-9]{2,12}?(?:做|当|担任)(?P<v>" + _ROLE_AT + ")", "我在", first_of="zh-role"),
    # location
    statement("location", r"(?:之前|以前|原来)(?:住)?在" + _CJK + r"{2,6}?[，,、\s]*(?:现在|目前|如今)(?:长期|常驻|定居|住)?在"
              + _PLACE_LIVED, ("在",), requires=SELF, supersedes=True, first_of="zh-location"),
    statement("location", r"(?:搬到|搬去|搬家到|移居到?|调到)了?" + _PLACE_LIVED, ("搬", "移居", "调到"), requires=SELF,
              supersedes=True, first_of="zh-location"),
    statement("location", r"我(?:现在|目前)?(?:住在|居住在|生活在|定居在|常驻)" + _PLACE_LIVED, ("在", "常驻"),
              first_of="zh-location"),
    statement("location", r"(?:长期|常驻)在" + _PLACE_LIVED, "在", requires=SELF, first_of="zh-location"),
    # language
    statement("language", r"我的母语是\s*(?P<v>" + _CJK + r"{1,4}(?:语|话|文)?)", ("语", "话"), first_of="zh-language"),
    statement("language", r"我(?:会说|说|讲)(?P<v>" + _CJK + r"{1,4}(?:语|话))", ("语", "话"), first_of="zh-language"),
    # a pen name
    statement("relation:pen_name", r"(?P<v>[\u4e00-\u9fff·]{1,8}|" + NAME_LATIN + r"(?:\s" + NAME_LATIN + r")?)\s*是我的笔名",
              "笔名", kind=Kind.RELATION, first_of="pen_name"),
    statement("relation:pen_name", r"我的笔名(?:是|叫)\s*[「“\"]?(?P<v>[\u4e00-\u9fff·]{1,8}|" + NAME_LATIN + r")", "笔名",
              kind=Kind.RELATION, first_of="pen_name"),
    statement("relation:pen_name", r"(?:用|以)笔名\s*[「“\"]?(?P<v>[\u4e00-\u9fff·]{1,8}|" + NAME_LATIN + r")", "笔名",
              kind=Kind.RELATION, first_of="pen_name"),
    # Organisations named without a suffix: "我在腾讯工作", "我在华为担任产品经理".
    statement("name", r"我在(?P<v>[\u4e00-\u9fffA-Za-z0-9]{2,8}?)(?:工作|上班|实习|任职|担任|做)", "我在",
              entity="organization", not_values=_NOT_ORGS),
    # more ways of giving a name, a role, a place
    statement("name", r"(?:叫我|称呼我)(?P<v>" + _CJK + r"{2,3}?)(?=就|吧|[，,。.!！\s]|$)", ("叫我", "称呼我")),
    statement("name", r"我姓" + _CJK + r"[，,]\s*叫(?P<v>" + _CJK + r"{2,3})", "我姓"),
    statement("role", r"我(?:现在|目前)?(?:是|担任)(?:一名|一个|一位|个|名)?(?P<v>" + _CJK
              + r"{0,4}(?:总监|负责人|主管|经理|组长))", "我", first_of="zh-role"),
    statement("location", r"我在(?P<v>" + _CJK + r"{2,6}?)生活", "生活"),
    # "我叫刘洋，在北京工作": a city the clause works in
    statement("location", r"(?:^|[，,]\s*)在" + _PLACE_NAMED + r"(?=工作|上班|生活)", "在", requires=SELF),
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

# "支付项目", "我负责的 Flask 迁移工程"; "项目使用 MySQL" means the project just named.
PROJECT = ProjectNaming(
    pattern=re.compile(r"(?P<name>[A-Za-z0-9.+_\- \u4e00-\u9fff]*?)(?P<kind>项目|工程|系统|平台|小程序)"),
    guard=("项目", "工程", "系统", "平台", "小程序"),
    strip=("更新一下", "我们的", "我们", "我的", "我", "负责", "参与", "主导", "维护", "正在做", "在做", "做",
           "一个", "这个", "那个", "该", "的", "个", "目前", "现在", "主要", "上周", "这周", "了"),
    bare_means_current=True,
)

MARKERS = {
    "plan": r"可能要|可能会|也许会?|打算|计划(?:要|把|在|下|明|今|将|于)|准备|考虑|想换|想用|想要换",
    "correction": r"更正|纠正一下|更新一下|补充更正",  # the sentence corrects what was said before
    "moved": r"(?:迁到|迁移到|迁移至|迁至|切到|切换到|换成|换到|改用|改成|转到|升级到|迁去)了?",  # what follows is the new value
    "past": r"原来|之前|以前|过去|曾经",
    "uses": r"使用|用的是|采用|基于|跑在|部署在|用了|在用|用|存在|存到|存储在|存|拿",
    "works_on": r"(?:^|我|主要)\s*(?:负责|在做|正在做|参与|主导|维护)",
    "liking": r"喜欢|偏好|最爱",
    "favourite": r"最喜欢|偏好|更喜欢",  # a liking stated as a lasting preference
    # A quality of answers alone is not a preference ("帮我写测试" is a task): it needs a request.
    "style": r"短一|短点|简洁|简短|详细|简单|中文|英文|例子|示例|步骤|运行方式|类型注解|注释|测试|生产实践|格式|列表|要点|表格|语气|"
             r"正式|口语|编号|来源|单位|结论|流程图|段|日期",
    "request": r"尽量|请|麻烦|回答|回复|写得|讲得|说得|以后|今后|总是|每次|始终|今天|这次|这一次|本次|习惯|喜欢|给我|控制",
    "one_off": r"今天|这次|这一次|本次|此次|这回|今晚|暂时|这个问题",  # a request for this conversation only
    "request_lead": r"以后|今后|往后|从现在起|今天|这次|这一次|本次|此次|这回|今晚|暂时|麻烦|请你?|帮我|并且|而且|另外|还有",
    "self": r"我",  # trimmed off the front of a recorded clause
}

SKIP = [
    # Someone else's facts: "我朋友用 Java", "我妈妈有高血压", "他叫王强".
    skip(r"^(?:我的?|我们的?)?(?:朋友|同事|同学|老婆|老公|妻子|丈夫|妈妈|母亲|爸爸|父亲|哥哥|姐姐|弟弟|妹妹|表妹|表哥|"
         r"表姐|表弟|老板|领导|儿子|女儿|孩子|室友|邻居)"),
    skip(r"^(?:他|她|他们|她们)"),
    # Hypotheticals: "如果我搬到北京", "假设我住在深圳".
    skip(r"^(?:如果|假如|假设|要是|万一|倘若|假使)"),
    skip(r"梦想|想成为|希望成为|想当|下辈子"),
    # Jokes: a statement that laughs at itself is not one to remember.
    skip(r"哈哈|呵呵|笑死|😂|🤣|😅"),
]
