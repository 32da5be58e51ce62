#!/usr/bin/env python3
"""A starter agent for ToolGate: replace the rules in `decide` with your real agent.

ToolGate runs this file as a long-lived worker and talks to it in JSON Lines:

    ToolGate -> agent  {"type": "start", "case_id", "sample", "seed", "messages", "tools"}
    agent -> ToolGate  {"type": "tool_calls", "case_id", "sample",
                        "calls": [{"id", "name", "arguments"}]}
    ToolGate -> agent  {"type": "tool_results", "results": [{"id", "name", "content", "is_error"}]}
    agent -> ToolGate  ... more tool_calls, then
                       {"type": "final", "case_id", "sample", "content": "..."}
    ToolGate -> agent  {"type": "user", "case_id", "sample", "content", "messages"}
                       (a conversation's next user turn, with the conversation so far;
                       answered like "start")

Every reply echoes the case_id and sample of the start message it answers: a reply
without them (or naming another case) is an error of that case.

No real tool ever runs: ToolGate answers each call from the dataset's frozen responses.
Anything you print to stdout must be one JSON object per line; log to stderr.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Generator
from typing import Any

Flow = Generator[list[dict[str, Any]], list[dict[str, Any]], str]


def decide(user: str) -> Flow:
    """Yield batches of tool calls (each batch runs in parallel), receive their results,
    and return the final answer. ``user`` is everything the user said so far. This
    keyword version only knows the starter dataset."""
    dates = re.findall(r"\d{4}-\d{2}-\d{2}", user)
    if "book" in user.lower() and dates:
        title = re.search(r"'([^']+)'", user)
        time = re.search(r"\b(\d{2}:\d{2})\b", user)
        if not time:
            return "What time should I book it for?"  # ask rather than guess
        minutes = re.search(r"(\d+) minutes", user)
        args: dict[str, Any] = {"title": title.group(1) if title else "Meeting", "date": dates[0]}
        args["time"] = time.group(1) if time else "09:00"
        if minutes:
            args["duration_min"] = int(minutes.group(1))
        yield [{"name": "create_event", "arguments": args}]
        return "Booked."
    if dates:
        results = yield [{"name": "list_events", "arguments": {"date": d}} for d in dates]
        if any(r["is_error"] for r in results):
            return "Sorry, I can't reach your calendar right now."
        events = [e for r in results for e in r["content"].get("events", [])]
        summary = ", ".join(f"{e['time']} {e['title']}" for e in events) or "nothing"
        email = re.search(r"[\w.+-]+@[\w-]+\.[\w.]+", user)
        if email:
            address = email.group(0).rstrip(".")
            yield [
                {
                    "name": "send_email",
                    "arguments": {"to": address, "subject": "Your calendar", "body": summary},
                }
            ]
            return f"Sent the list to {address}."
        return f"You have: {summary}."
    return "Happy to help!"


def main() -> None:
    flow: Flow | None = None
    counter = 0
    ids: dict[str, Any] = {}  # the case-sample being answered: every reply names it
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            if msg["type"] in ("start", "user"):
                ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
                said = [m["content"] for m in msg["messages"] if m["role"] == "user"]
                flow = decide(" ".join(c for c in said if isinstance(c, str)))
                calls = next(flow)
            else:
                assert flow is not None
                calls = flow.send(msg["results"])
            out = []
            for call in calls:
                counter += 1
                out.append({"id": f"call_{counter}", **call})
            reply: dict[str, Any] = {"type": "tool_calls", "calls": out}
        except StopIteration as done:
            reply = {"type": "final", "content": str(done.value)}
        except Exception as exc:  # report, and stay alive for the next case
            reply = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
        print(json.dumps({**reply, **ids}), flush=True)


if __name__ == "__main__":
    main()
