"""A stateful ``command`` agent: it keeps its own memory of each case-sample and reads
only the new user message (``content``) of each ``user`` message, never ``messages``.

``python stateful_agent.py [VARIANT]``; the variant ``crash2`` exits in the middle of
the second user turn, and ``log`` writes every message it gets to the file named by
``TG_LOG`` (one JSON line each).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.conversation.support import Memory

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "good"
LOG = os.environ.get("TG_LOG")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    memory: dict[tuple[str, int], Memory] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if LOG:
            with open(LOG, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(msg) + "\n")
        key = (msg["case_id"], msg["sample"])
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        if msg["type"] == "start":
            memory[key] = Memory("good" if VARIANT in ("crash2", "log") else VARIANT)
            text = msg["messages"][-1]["content"]
        elif msg["type"] == "user":
            text = msg["content"]
            if VARIANT == "crash2":
                sys.stderr.write("the agent fell over in turn 2\n")
                sys.exit(3)
        else:
            raise SystemExit(f"unexpected {msg['type']}")
        mem = memory[key]
        step = mem.hear(text)
        while "calls" in step:
            calls = [{"id": f"s{i}", **c} for i, c in enumerate(step["calls"])]
            send({"type": "tool_calls", **ids, "calls": calls})
            results = json.loads(sys.stdin.readline())["results"]
            step = mem.results(step["calls"], [r["content"] for r in results])
        send({"type": "final", **ids, "content": step.get("content")})


if __name__ == "__main__":
    main()
