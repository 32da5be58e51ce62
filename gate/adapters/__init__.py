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
from typing import Any, assert_never

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


def parse(provider: Provider, payload: Any) -> AssistantTurn:
    """One complete (non-streamed) payload of ``provider`` → :class:`AssistantTurn`."""
    match provider:
        case Provider.OPENAI_CHAT:
            return openai_chat.parse_completion(payload)
        case Provider.OPENAI_RESPONSES:
            return openai_responses.parse_response(payload)
        case Provider.ANTHROPIC:
            return anthropic.parse_message(payload)
        case Provider.GEMINI:
            return gemini.parse_response(payload)
        case Provider.PLAIN:
            return plain.parse_plain(payload)
        case _:
            assert_never(provider)


def stream_accumulator(
    provider: Provider,
) -> (
    openai_chat.StreamAccumulator
    | openai_responses.StreamAccumulator
    | anthropic.StreamAccumulator
    | gemini.StreamAccumulator
):
    """A fresh accumulator for ``provider``'s streamed events (``add(event)``, ``finish()``)."""
    match provider:
        case Provider.OPENAI_CHAT:
            return openai_chat.StreamAccumulator()
        case Provider.OPENAI_RESPONSES:
            return openai_responses.StreamAccumulator()
        case Provider.ANTHROPIC:
            return anthropic.StreamAccumulator()
        case Provider.GEMINI:
            return gemini.StreamAccumulator()
        case Provider.PLAIN:
            raise ValueError("plain calls are not streamed")
        case _:
            assert_never(provider)
