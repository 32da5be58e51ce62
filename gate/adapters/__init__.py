"""Provider payloads → :class:`gate.model.ToolCall` — the only place provider shapes live.

One module per provider (docs/agent-protocol.md) — :mod:`~gate.adapters.openai_chat`,
:mod:`~gate.adapters.openai_responses`, :mod:`~gate.adapters.anthropic`,
:mod:`~gate.adapters.gemini`, :mod:`~gate.adapters.plain` — each reading calls from the
structured field (its docstring names it) and never from text. Each returns an
:class:`~gate.adapters.interface.AssistantTurn`; a payload without the provider's shape
raises :class:`~gate.adapters.interface.PayloadError`. :func:`parse` picks the module by
:class:`Provider`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from gate.adapters import anthropic, gemini, openai_chat, openai_responses, plain
from gate.adapters.interface import AssistantTurn
from gate.errors import PayloadError

__all__ = ["AssistantTurn", "PayloadError", "Provider", "parse", "stream_accumulator"]


class Provider(enum.StrEnum):
    OPENAI_CHAT = "openai_chat"
    OPENAI_RESPONSES = "openai_responses"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    PLAIN = "plain"


_PARSERS: dict[Provider, Callable[[Any], AssistantTurn]] = {
    Provider.OPENAI_CHAT: openai_chat.parse_completion,
    Provider.OPENAI_RESPONSES: openai_responses.parse_response,
    Provider.ANTHROPIC: anthropic.parse_message,
    Provider.GEMINI: gemini.parse_response,
    Provider.PLAIN: plain.parse_plain,
}
Accumulator = (
    openai_chat.StreamAccumulator
    | openai_responses.StreamAccumulator
    | anthropic.StreamAccumulator
    | gemini.StreamAccumulator
)
_ACCUMULATORS: dict[Provider, Callable[[], Accumulator]] = {
    Provider.OPENAI_CHAT: openai_chat.StreamAccumulator,
    Provider.OPENAI_RESPONSES: openai_responses.StreamAccumulator,
    Provider.ANTHROPIC: anthropic.StreamAccumulator,
    Provider.GEMINI: gemini.StreamAccumulator,
}


def parse(provider: Provider, payload: Any) -> AssistantTurn:
    """One complete (non-streamed) payload of ``provider`` → :class:`AssistantTurn`."""
    return _PARSERS[provider](payload)


def stream_accumulator(provider: Provider) -> Accumulator:
    """A fresh accumulator for ``provider``'s streamed events (``add(event)``, ``finish()``)."""
    if provider is Provider.PLAIN:
        raise ValueError("plain calls are not streamed")
    return _ACCUMULATORS[provider]()
