"""Chinese statements read by their parts: a subject (我, or the clause before's), a verb of
being, doing, living or speaking, and its object, cut into words by jieba.

The object is the run of words right after the verb, up to the first word that cannot be
part of it (a particle, a time, another verb, punctuation): "我干数据标注员这行五年了" gives
数据标注员, "我现在落脚在阿姆斯特丹" gives 阿姆斯特丹. What the object may be is checked by
its own parts: a role ends in a word naming a person by what they do (…师, …员, 销售, 助理),
a language in 语/话/文, a name is not an ordinary word of the dictionary. Nothing here
knows a list of cities, names or titles.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .patterns.en import OCCUPATION_HEAD
from .segment import dictionary_tag, words

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_PHRASE = re.compile(r"^[A-Za-zÀ-ÖØ-öø-ɏ][A-Za-zÀ-ÖØ-öø-ɏ.' -]*$")
_SELF = re.compile(r"我(?!们)|本人")
_OTHERS = re.compile(r"^(?:他|她|他们|她们|它)")

# The verbs, by what their object is. Order matters: the first verb found in a clause is read.
_VERBS = (
    ("name", re.compile(r"(?:我(?:的名字)?叫|叫我|本人|全名(?:是|叫)?|我的名字是|我这边是|(?:我的)?英文名(?:是|叫))\s*")),
    ("language", re.compile(r"(?:母语是|从小(?:就)?(?:说|讲)|我会(?:说|讲))\s*")),
    ("location", re.compile(r"(?<![不没])(?:住在?|待在|呆在|落脚在?|定居在|常驻(?:在)?|搬(?:到|来|去|家到)|迁居到?|移居到?|家在|人在)\s*")),
    # "…，在银川当飞行员", "我在拉萨定居": where the clause's role is done, or life lived
    ("location_of_work", re.compile(r"(?:^|我(?!们))(?:现在|目前|一直)?在\s*")),
    # The verb of being or doing follows its subject (我, 本人, or none: the clause before's),
    # perhaps a place (在…当), never a negation ("我不是产品经理").
    ("role", re.compile(r"(?:^|我(?!们)|本人)(?:现在|目前|本职|平时|一直|也|还|的职业|的工作|的职位|的岗位|的头衔|的\s*title\s*|是(?=做)|(?:现在|目前)?在\s*[^，,]{1,12}?)*"
                        r"(?<![不没])(?:是|当|做|担任|干|从事)(?:一名|一位|一个|个|名|位)?\s*")),
    ("role_alone", re.compile(r"^(?:一名|一位)\s*")),  # "我是蒲俊杰，一名物流调度"
)
# Words that end an object: particles, times, adverbs, verbs that follow a place or a role.
_EXPLICIT_NAME = re.compile(r"我(?:的名字)?叫|我的名字是")
_STOP = frozenset(
    "了 的 地 得 着 过 吧 呢 啊 呀 嘛 哦 就 就行 啦 和 与 跟 及 并 这 那 这行 这一行 行业 很 都 也 还 又 再 "
    "已经 一直 平时 现在 目前 今年 去年 明年 之前 以前 以后 工作 生活 定居 落脚 上班 当 做 担任 干 从事 是 "
    "在 到 来 去 住 请 多 关照 您 你 好 大家 经常 加班 忙".split()
)
_TIME = re.compile(r"^[零一二三四五六七八九十两几半多\d]+(?:年|个月|月|天|岁)")
_ROLE_HEAD_CHARS = frozenset("师员工生家官者匠医警士")
_ROLE_HEAD_WORDS = (
    "销售", "运营", "开发", "美术", "剪辑", "设计", "编辑", "翻译", "会计", "教练", "司机", "护士", "助理",
    "调度", "顾问", "经理", "总监", "主管", "代表", "专员", "主播", "记者", "代理人", "经纪人", "负责人",
    "创始人", "主持人", "合伙人", "制片人", "码农", "运维", "保安", "店主", "模特", "演员", "歌手", "导演", "编剧",
    "院长", "校长", "店长", "行长", "厂长", "队长", "组长", "科长", "处长", "部长", "社长", "船长", "机长",
    "歌手", "选手", "水手", "舵手", "助手", "骑手", "操盘手",
)
_NOT_PLACES = frozenset(
    "家 家里 这里 那里 这边 那边 本地 外地 国外 国内 公司 单位 学校 医院 宿舍 附近 市区 郊区 老家 城里 乡下".split()
)
_ORG_ENDINGS = ("公司", "集团", "银行", "大学", "学院", "医院", "研究院", "研究所", "实验室", "工作室", "科技")


@dataclass(frozen=True)
class Part:
    field: str
    value: str
    clause: str  # the clause, verbatim: the evidence
    # "我叫…", "我的名字是…" leave no doubt (the policy may approve them itself); the rest is read.
    explicit: bool = False


def _object(rest: str) -> tuple[str, str]:
    """The object at the start of ``rest`` and the word after it ("" at the end)."""
    taken = []
    end = 0
    following = ""
    for offset, word in words(rest):
        if word in _STOP or _TIME.match(word) or not (_CJK.search(word) or word[0].isalnum() or word in "·-'"):
            following = word
            break
        if taken and offset > end and _CJK.search(word) and _CJK.search(rest[end - 1 : end] or "x"):
            following = word
            break
        taken.append(word)
        end = offset + len(word)
    return rest[:end].strip(), following


def is_role(value: str) -> bool:
    if _LATIN_PHRASE.match(value):
        return bool(re.search(OCCUPATION_HEAD + r"$", value.strip()))
    if not 2 <= len(value) <= 10 or not _CJK.search(value):
        return False
    return value[-1] in _ROLE_HEAD_CHARS or value.endswith(_ROLE_HEAD_WORDS)


def _is_name(value: str) -> bool:
    if _LATIN_PHRASE.match(value):
        return value[0].isupper() and len(value.split()) <= 3
    if "·" in value:
        return 3 <= len(value) <= 12
    if not 2 <= len(value) <= 4 or is_role(value):
        return False
    return dictionary_tag(value) in ("", "nr", "nrt", "nrfg")  # not an ordinary word


def _place(value: str) -> bool:
    if _LATIN_PHRASE.match(value):
        return value[0].isupper() and len(value.split()) <= 4
    return 2 <= len(value) <= 6 and value not in _NOT_PLACES and not value.endswith(_ORG_ENDINGS)


def read_sentence(text: str, *, subject: bool) -> list[Part]:
    """What a Chinese sentence states about its speaker, clause by clause. ``subject``: the
    sentence is the speaker's (it says 我 or 本人 before any clause without a subject)."""
    parts: list[Part] = []
    speaking = subject
    for match in re.finditer(r"[^，,。.!！？?；;]+", text):
        clause = match.group(0).strip()
        if not clause:
            continue
        if _OTHERS.match(clause):
            speaking = False  # "…，他住在…": someone else from here on
            continue
        if _SELF.search(clause):
            speaking = True
        if not speaking:
            continue
        parts.extend(_read_clause(clause))
    return parts


def _read_clause(clause: str) -> list[Part]:
    found = []
    for field, verb in _VERBS:
        for match in verb.finditer(clause):
            found.extend(_read_object(field, clause, match))
    return found


def _verb_of(matched: str) -> str:
    found = re.search(r"(?:是|当|做|担任|干|从事)(?=(?:一名|一位|一个|个|名|位)?\s*$)", matched)
    return found.group(0) if found else ""


def _read_object(field: str, clause: str, match: re.Match) -> list[Part]:
    value, following = _object(clause[match.end():])
    if not value:
        return []
    if field == "name":
        explicit = bool(_EXPLICIT_NAME.match(match.group(0)))
        return [Part("name", value, clause, explicit)] if _is_name(value) else []
    if field == "language":
        return [Part("language", value, clause)] if re.search(r"(?:语|话|文)$", value) else []
    if field == "location":
        return [Part("location", value, clause)] if _place(value) else []
    if field == "location_of_work":
        # "在银川当飞行员", "在拉萨定居"; "在 Cebu 工作" (a Latin name after 在…工作 is a place,
        # a Chinese one as often an employer, left to the organisation statements)
        # "我在华为担任…" names an employer: only a clause without its subject places the role
        lived = following in ("生活", "定居", "落脚") or (following in ("当", "做", "担任") and not _SELF.search(clause))
        if lived or (following == "工作" and _LATIN_PHRASE.match(value)):
            return [Part("location", value, clause)] if _place(value) else []
        return []
    verb = match.group(0).rstrip()[-1:] if field != "role" else _verb_of(match.group(0))
    if verb == "做" and following == "的":  # "我是做跨境电商运营的": what one does, whatever its head
        return [Part("role", value, clause)]
    if is_role(value):
        return [Part("role", value, clause)]
    if (field == "role" and verb == "是" and not re.search(r"(?:一名|一位|一个|个|名|位)\s*$", match.group(0))
            and not following and _is_name(value)
            and re.search(r"(?:^|我|这边)是\s*$", clause[:match.end()])):
        return [Part("name", value, clause)]  # "大家好，我是司马卓"
    return []
