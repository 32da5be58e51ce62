"""A stateless ``command`` agent: it answers every ``start`` and ``user`` message from
the ``messages`` it is given (the conversation so far), nothing remembered.

``python stateless_agent.py [VARIANT]`` — see ``tests/conversation/support.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.conversation.support import decide

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "good"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] not in ("start", "user"):
            raise SystemExit(f"unexpected {msg['type']}")
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        messages = list(msg["messages"])
        while True:
            step = decide(messages, VARIANT)
            if "calls" not in step:
                send({"type": "final", **ids, "content": step.get("content")})
                break
            calls = [{"id": f"c{len(messages)}_{i}", **c} for i, c in enumerate(step["calls"])]
            send({"type": "tool_calls", **ids, "calls": calls})
            results = json.loads(sys.stdin.readline())["results"]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": json.dumps(c["arguments"]),
                            },
                        }
                        for c in calls
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": r["id"], "content": json.dumps(r["content"])}
                for r in results
            ]


if __name__ == "__main__":
    main()
