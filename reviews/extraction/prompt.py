"""The LLM extractor's prompt (SPEC §8), in Chinese and English.

Change :data:`PROMPT_VERSION` with any change to the text: every candidate records it, so
the quality figures per prompt version stay honest.
"""
from __future__ import annotations

from .base import ExtractionContext

PROMPT_VERSION = "entity-facts-v1"

SYSTEM_PROMPT = """\
You extract long-term memory about ONE end user from ONE chat message, for a governed memory
store. A deterministic policy and human reviewers check everything you propose, so propose
only what the message itself states.
你从一条聊天消息中提取关于这一位用户的长期记忆。你提出的每一条都会经过策略和人工审核，
所以只提取这条消息本身明确陈述的内容。

Rules / 规则:
1. Only what the user stated explicitly about themselves, the things they work on, or their
   organisation (or what a business system confirmed). Never greetings, small talk, passing
   questions, requests for a single task, guesses, or anything the assistant said.
   只提取用户明确陈述的内容；不要问候、寒暄、随口的问题、一次性的任务请求、猜测，也不要提取助手说的话。
2. Never output credentials: passwords, API keys, tokens, private keys, card or id numbers.
   They appear masked as "[redacted …]"; leave such statements out entirely.
   绝不输出凭据（密码、密钥、令牌、卡号、证件号）；它们显示为 "[redacted …]"，整句都不要提取。
3. The user is entity_type "user", entity_id "me"; 我 / I / me / my refer to them. Reuse the id
   of a known entity when the message names it by any of its aliases; otherwise make a short
   lowercase slug (e.g. "flask-migration") and give the name as written in entity_name.
   用户本人是 user/me；提到已知实体（任一别名）时沿用其 id，否则用简短的小写 slug 作为 id。
4. Use only the entity types and fields listed below. Relations use field "relation:<name>"
   (e.g. relation:works_on, relation:pen_name) with kind "relation" and the target as value
   ("project:flask-migration", or the name itself).
   只使用下列实体类型和字段；关系用 "relation:<名称>" 字段，kind 为 relation。
5. kind: "plan" for intentions and possibilities ("可能要", "打算", "we might", "planning to");
   "inference" only for something implied but not said; otherwise "fact".
   意图或可能性（可能要、打算、we might）用 plan；没有明说的推断用 inference；其余用 fact。
6. scope: "thread" for a one-off request about this conversation ("今天帮我写得短一点",
   "this time", "just for this answer"); "long_term" for lasting statements ("以后…", "always").
   只针对本次对话的一次性要求用 thread；长期有效的（以后…、always）用 long_term。
7. supersedes: true when the user corrects or replaces an earlier value ("现在迁到 PostgreSQL",
   "we moved … to …", "correction:", "之前在上海，现在在深圳").
   用户更正或替换旧值时 supersedes 为 true。
8. evidence: copy the exact words of the message that state the fact, verbatim (no paraphrase).
   value: short and self-contained (≤ 200 characters), in the language of the message.
   evidence 必须逐字引用消息原文；value 简短、独立、与消息同一语言。
9. confidence: 0.95 when stated outright and unambiguous, 0.8–0.9 when clear but loosely
   phrased, below 0.8 when unsure. source_message_id: the id of the message you read.
10. If the message states nothing worth remembering, answer {"facts": []}.
    没有值得记住的内容时返回 {"facts": []}。
"""


def render_request(context: ExtractionContext) -> str:
    """The user turn: schema, known entities, the thread so far, and the message itself."""
    lines = ["Allowed entity types and fields / 允许的实体类型和字段:"]
    lines += [f"- {field}" for field in context.allowed_fields] or ["- (none)"]
    lines.append("- relation:<name> on any entity type")
    lines.append("")
    lines.append("Known entities of this user / 已知实体 (type:id — aliases):")
    if context.known_entities:
        for entity in context.known_entities:
            aliases = ", ".join(alias for alias in entity.aliases if alias) or entity.display_name
            # The subject is "user:me" to the model, whatever their id in the host application.
            entity_id = "me" if entity.entity_type == "user" else entity.entity_id
            lines.append(f"- {entity.entity_type}:{entity_id} — {aliases}")
    else:
        lines.append("- (none yet)")
    lines.append("")
    if context.thread_history:
        lines.append("Earlier in this conversation (context only; do not extract from these) / 之前的对话（仅供参考）:")
        for prior in context.thread_history:
            lines.append(f"[{prior.message_id}] {prior.role}: {prior.content}")
        lines.append("")
    lines.append(f"Message to extract from / 需要提取的消息 (id {context.message_id}, role {context.role}):")
    lines.append("<<<")
    lines.append(context.content)
    lines.append(">>>")
    return "\n".join(lines)
