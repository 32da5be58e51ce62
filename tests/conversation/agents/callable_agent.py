"""A ``python`` agent: ``run`` is called once per user turn with the conversation so far,
and answers from it alone (``tests/conversation/support.py``'s ``decide``)."""

from __future__ import annotations

import json
from typing import Any

from tests.conversation.support import decide


def _agent(variant: str) -> Any:
    def run(messages: list[dict[str, Any]], tools: list[dict[str, Any]], call_tool: Any) -> Any:
        messages = list(messages)
        while True:
            step = decide(messages, variant)
            if "calls" not in step:
                return step.get("content")
            calls = step["calls"]
            outcomes = call_tool.batch([(c["name"], c["arguments"]) for c in calls])
            ids = [f"p{len(messages)}_{i}" for i in range(len(calls))]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": json.dumps(c["arguments"]),
                            },
                        }
                        for i, c in zip(ids, calls, strict=True)
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": i, "content": json.dumps(o.content)}
                for i, o in zip(ids, outcomes, strict=True)
            ]

    return run


good = _agent("good")
forbidden = _agent("forbidden")
