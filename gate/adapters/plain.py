"""Plain ``{name, arguments}`` calls → :class:`ToolCall`.

The provider-neutral shape used by the command-adapter protocol, by transcripts and by
hand-written runs: ``{"id"?: str, "name": str, "arguments": object | JSON string}``.
An object is accepted as is; a string is decoded strictly (failure → ``parse_ok=False``
with the raw string kept); a missing ``arguments`` means no arguments (``{}``).
"""

from __future__ import annotations

from typing import Any

from gate.adapters.interface import AssistantTurn, expect_list, expect_mapping, make_call
from gate.model import ToolCall


def call_from_plain(obj: Any, path: str = "call") -> ToolCall:
    """One ``{name, arguments}`` object → :class:`ToolCall`."""
    c = expect_mapping(obj, path)
    arguments = c.get("arguments", {})
    return make_call(c.get("name"), arguments, c.get("id"), path)


def calls_from_plain(obj: Any, path: str = "calls") -> tuple[ToolCall, ...]:
    """A list of plain calls (or one) → the calls, in order."""
    if isinstance(obj, dict):
        return (call_from_plain(obj, path),)
    return tuple(call_from_plain(c, f"{path}[{i}]") for i, c in enumerate(expect_list(obj, path)))


def parse_plain(obj: Any) -> AssistantTurn:
    """``{"calls": [...], "content"?: str}`` or a bare list of calls → :class:`AssistantTurn`."""
    if isinstance(obj, list):
        return AssistantTurn(calls=calls_from_plain(obj))
    o = expect_mapping(obj, "turn")
    content = o.get("content")
    return AssistantTurn(
        calls=calls_from_plain(o.get("calls", []), "calls"),
        content=content if isinstance(content, str) else None,
    )
