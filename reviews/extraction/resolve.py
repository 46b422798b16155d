"""Naming helpers shared by the extractors: stable ids for named things, evidence checks.

Entity ids are slugs, never display names (SPEC §1). A project named in Chinese and the
same project named in English should land on the same id, so a short glossary turns the
common Chinese words of project names into their English slug words ("Flask 迁移项目" and
"the Flask migration project" are both ``flask-migration``). Anything the glossary does
not know stays as written (slugs keep CJK characters); reviewers merge what remains.
"""
from __future__ import annotations

import re
import unicodedata

from ..policy.normalize import normalize_text, slugify_entity_id

# Longest keys first when matching; values are slug words.
_GLOSSARY = {
    "迁移": "migration",
    "检索": "retrieval",
    "搜索": "search",
    "推荐": "recommendation",
    "计费": "billing",
    "支付": "payment",
    "订单": "order",
    "用户": "user",
    "数据": "data",
    "分析": "analytics",
    "监控": "monitoring",
    "日志": "logging",
    "报表": "reporting",
    "客服": "support",
    "聊天": "chat",
    "机器人": "bot",
    "知识库": "knowledge-base",
    "网站": "website",
    "官网": "website",
    "后台": "admin",
    "管理": "management",
    "重构": "refactor",
    "升级": "upgrade",
    "平台": "platform",
    "小程序": "mini-program",
    "缓存": "cache",
}
_GLOSSARY_PATTERN = re.compile("|".join(sorted(map(re.escape, _GLOSSARY), key=len, reverse=True)))
# Words that say what kind of thing it is, not which one: "billing service" is "billing".
_GENERIC_SUFFIXES = (
    "项目", "工程", "服务", "系统", "应用", "project", "service", "app", "application", "system",
)
_LEADING_ARTICLES = re.compile(r"^(?:the|our|my|a|an)\s+", re.I)


def project_entity_id(name: str) -> str:
    """A stable id for a project, the same for its Chinese and English names."""
    text = normalize_text(name).replace("_", " ")
    text = _LEADING_ARTICLES.sub("", text)
    changed = True
    while changed:
        changed = False
        for suffix in _GENERIC_SUFFIXES:
            if text.endswith(suffix) and len(text) > len(suffix):
                text = text[: -len(suffix)].strip()
                changed = True
    text = _GLOSSARY_PATTERN.sub(lambda match: f" {_GLOSSARY[match.group(0)]} ", text)
    return slugify_entity_id(text)


def organization_entity_id(name: str) -> str:
    return slugify_entity_id(_LEADING_ARTICLES.sub("", normalize_text(name)))


def canonical_entity_id(entity_type: str, name: str) -> str:
    """The id a name of this entity type resolves to, the same however it is written."""
    if entity_type == "project":
        return project_entity_id(name)
    if entity_type == "organization":
        return organization_entity_id(name)
    return slugify_entity_id(name)


_SPACE = re.compile(r"\s+")


def _comparable(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text or "")).strip().casefold()


def evidence_occurs(evidence: str, content: str) -> bool:
    """True when the quoted span really is in the message (width, case and spacing aside)."""
    quoted = _comparable(evidence)
    return bool(quoted) and quoted in _comparable(content)
