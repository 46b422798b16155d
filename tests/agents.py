"""A stand-in chat model for tests that run a real LangGraph agent (``create_agent``) with
no model server: it calls one tool, then answers with what the tool returned."""
from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class OneToolCallModel(BaseChatModel):
    tool_name: str
    # The tool argument the user's question is passed as; None: the tool takes none.
    question_as: str | None = None

    # _llm_type and _generate are the hooks LangChain asks a chat model to implement.
    @property
    def _llm_type(self) -> str:
        return "one-tool-call"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=str(last.content))
        else:
            args = {}
            if self.question_as:
                args[self.question_as] = next(m.content for m in messages if isinstance(m, HumanMessage))
            reply = AIMessage(content="", tool_calls=[{"name": self.tool_name, "args": args, "id": "call-1"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])
