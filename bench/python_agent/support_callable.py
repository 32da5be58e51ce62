"""The example support agent (examples/support-agent/agent.py) as a ``python`` agent:
the same rules, driven through ``call_tool`` instead of the command protocol. Used by
``bench/python_agent/toolgate.yml`` to measure what running a ``python`` agent costs."""

from __future__ import annotations

import json
from typing import Any

import agent as support  # examples/support-agent/agent.py (on agent.path)

_OPENED: dict[tuple[str, int], int] = {}
"""Per case-sample, the messages before its first user turn (a conversation's history)."""


def run(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    call_tool: Any,
    case_id: str,
    sample: int,
    turn: int,
) -> dict[str, Any]:
    if turn == 1:
        _OPENED[(case_id, sample)] = len(messages) - 1
    opened = _OPENED.get((case_id, sample), len(messages) - 1)
    said = [str(m.get("content") or "") for m in messages[opened:] if m.get("role") == "user"]
    session = support.Session(
        {"case_id": case_id, "sample": sample, "messages": messages, "tools": tools},
        "good",
        said[:-1] if turn > 1 else None,
    )
    reply = session.step(None)
    while reply["type"] == "tool_calls":
        calls = [(c["name"], json.loads(c["arguments"])) for c in reply["calls"]]
        outcomes = call_tool.batch(calls)
        results = [
            {"id": c["id"], "name": c["name"], "content": o.content, "is_error": o.is_error}
            for c, o in zip(reply["calls"], outcomes, strict=True)
        ]
        reply = session.step(results)
    return {"content": reply["content"], "usage": reply.get("usage")}
