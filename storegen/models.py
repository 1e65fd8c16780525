"""Scripted chat models: deterministic AIMessages with tool calls, usage and model names.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> model = ScriptedChatModel(replies=[Reply("Hello!"), Reply("", [("lookup_order", {"order_id": "A-1"})])])
    >>> msg = model.invoke([HumanMessage("hi")])
    >>> msg.content, msg.response_metadata["model_name"], msg.usage_metadata["output_tokens"] > 0
    ('Hello!', 'gpt-4o-mini-2024-07-18', True)
    >>> model.invoke([HumanMessage("order?")]).tool_calls[0]["name"]
    'lookup_order'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from storegen.clock import advance_active
from storegen.ids import current_ids

GPT = "gpt-4o-mini-2024-07-18"
CLAUDE = "claude-3-5-sonnet-20241022"


@dataclass
class Reply:
    """One scripted assistant turn.

    ``tool_calls`` are ``(tool_name, args)`` pairs; ids are generated. ``model``
    overrides the model's default name (two models in one thread).

    Example:
        >>> Reply("Checking…", [("lookup_order", {"order_id": "A-1043"})], model=CLAUDE).model
        'claude-3-5-sonnet-20241022'
    """

    content: str | list[Any] = ""
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = field(default_factory=tuple)
    model: str | None = None


Responder = Callable[[list[BaseMessage]], Reply]


def _chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or []:
        if isinstance(block, str):
            total += len(block)
        elif isinstance(block, dict):
            total += len(str(block.get("text", ""))) or 85  # images cost ~85 tokens
    return total


def provider_message_id(model_name: str) -> str:
    """A provider-looking response id (``chatcmpl-…`` / ``msg_01…``), seeded."""
    ids = current_ids()
    if model_name.startswith("claude"):
        return "msg_01" + ids.token(22)
    return "chatcmpl-" + ids.token(29)


def make_ai_message(
    reply: Reply,
    prompt: Sequence[BaseMessage] = (),
    *,
    default_model: str = GPT,
    with_id: bool = True,
) -> AIMessage:
    """Build the AIMessage a provider integration would return for ``reply``."""
    ids = current_ids()
    model_name = reply.model or default_model
    tool_calls = [
        {"name": name, "args": args, "id": "call_" + ids.token(24), "type": "tool_call"}
        for name, args in reply.tool_calls
    ]
    input_tokens = sum(math.ceil(_chars(m.content) / 4) + 4 for m in prompt) + 12
    output_tokens = math.ceil(_chars(reply.content) / 4) + 18 * len(tool_calls) + 1
    provider = "anthropic" if model_name.startswith("claude") else "openai"
    return AIMessage(
        content=reply.content,
        tool_calls=tool_calls,
        id=provider_message_id(model_name) if with_id else None,
        usage_metadata={
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
        response_metadata={
            "model_name": model_name,
            "model_provider": provider,
            "finish_reason": "tool_calls" if tool_calls else "stop",
        },
    )


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays back ``replies`` in order (or asks ``responder``).

    Each call advances the active :class:`~storegen.clock.Clock` by a latency of
    ``base_latency + seconds_per_char * len(reply)`` so assistant checkpoints
    land a few seconds after the user's; ``base_latency=0`` keeps ts tied.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, protected_namespaces=())

    replies: list[Reply] = []
    responder: Responder | None = None
    model_name: str = GPT
    base_latency: float = 0.9
    seconds_per_char: float = 0.011

    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "storegen-scripted"

    @property
    def calls(self) -> int:
        return self._calls

    def next_reply(self, messages: list[BaseMessage]) -> Reply:
        if self.responder is not None:
            return self.responder(messages)
        if self._calls >= len(self.replies):
            raise RuntimeError(f"script exhausted after {len(self.replies)} replies")
        return self.replies[self._calls]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.next_reply(messages)
        self._calls += 1
        message = make_ai_message(reply, messages, default_model=self.model_name)
        if self.base_latency or self.seconds_per_char:
            latency = self.base_latency + self.seconds_per_char * _chars(reply.content)
            # Odd microseconds keep most ts off whole seconds, as live data is.
            advance_active(round(latency, 3) + 0.000137)
        return ChatResult(generations=[ChatGeneration(message=message)])
