"""Builders for runner tests: cases, configs and small agent programs on disk."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.model import ArgMatcher, Case, FrozenResponse, MatcherKind, SourceRef, ToolSpec

LOOKUP = ToolSpec(
    "lookup_order",
    "Look up an order by id.",
    {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)
REFUND = ToolSpec(
    "issue_refund",
    "Refund an order.",
    {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
    },
)


def eq(value: Any) -> ArgMatcher:
    return ArgMatcher(MatcherKind.EQUAL, value)


def response(
    name: str, args: dict[str, Any] | None = None, *, ok: Any = None, error: Any = None
) -> FrozenResponse:
    return FrozenResponse(
        name=name,
        args={k: eq(v) for k, v in args.items()} if args is not None else None,
        response=ok,
        error=error,
    )


def case(
    id: str,
    *,
    user: str = "where is my order ord_1?",
    tools: tuple[ToolSpec, ...] = (LOOKUP, REFUND),
    responses: tuple[FrozenResponse, ...] | None = None,
    step_budget: int | None = None,
) -> Case:
    return Case(
        id=id,
        user_input=user,
        source=SourceRef("dataset.jsonl", 1),
        available_tools=tools,
        tool_responses=responses
        if responses is not None
        else (response("lookup_order", {"order_id": "ord_1"}, ok={"status": "shipped"}),),
        step_budget=step_budget,
    )


class FakeDataset:
    def __init__(self, cases: list[Case]):
        self.cases = tuple(cases)
        self.sha256 = hashlib.sha256("\0".join(c.id for c in cases).encode()).hexdigest()


def config(tmp_path: Path, agent: dict[str, Any], **extra: Any) -> Config:
    data: dict[str, Any] = {"dataset": {"path": "dataset.jsonl"}, "agent": agent, **extra}
    cfg = Config.model_validate(data)
    return cfg.model_copy(update={"source": tmp_path / "toolgate.yml"})


def write_agent(tmp_path: Path, name: str, body: str) -> list[str]:
    """A Python agent program speaking the JSON-lines protocol; returns its argv.

    ``body`` defines ``answer(msg, send, recv)`` for one case; the loop around it reads
    start messages forever. ``send`` adds the running case-sample's ``case_id`` and
    ``sample`` (as the protocol requires) unless called with ``ids=False``.
    """
    src = (
        textwrap.dedent(
            """
        import json, os, sys, time

        IDS = {}  # the running case-sample: send() adds its ids unless told otherwise

        def send(obj, ids=True):
            sys.stdout.write(json.dumps({**IDS, **obj} if ids else obj) + "\\n")
            sys.stdout.flush()

        def recv():
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            msg = json.loads(line)
            if msg.get("type") == "start":
                IDS.clear()
                IDS.update(case_id=msg["case_id"], sample=msg["sample"])
            return msg
        """
        )
        + textwrap.dedent(body)
        + textwrap.dedent(
            """
        while True:
            msg = recv()
            answer(msg, send, recv)
        """
        )
    )
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    return [sys.executable, str(path)]


LOOKUP_THEN_FINAL = """
def answer(msg, send, recv):
    send({"type": "tool_calls", "calls": [{"id": "c1", "name": "lookup_order",
          "arguments": {"order_id": "ord_1"}}], "usage": {"prompt_tokens": 3}})
    res = recv()
    content = res["results"][0]["content"]
    status = content.get("status") if isinstance(content, dict) else None
    send({"type": "final", "content": f"status: {status}",
          "usage": {"prompt_tokens": 2, "completion_tokens": 1}})
"""
