"""A tiny driver for the example agent: speaks the command-adapter protocol to
``examples/support-agent/agent.py`` over a real subprocess, answers tool calls from a
case's frozen responses, and judges each case with a deliberately simple rule (the real
scoring lives in ``gate.scorers``; this only lets the agent be tested on its own).

Simplified pass rule: the calls made equal one expectation list as a multiset (names and
argument matchers; plain values compared case-insensitively, ``ord_`` prefixes ignored),
in sequence when ``order: strict``, every expected call made when ``superset``; no
must-not-call tool called; every call valid against its JSON Schema. A case judged by its
effects (``pass_on: effects``) compares only the writes — calls of tools whose
annotations do not say ``readOnlyHint: true``, and whose response was not an error.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from gate.model import (
    ArgMatcher,
    Case,
    ExpectedCall,
    FrozenResponse,
    MatcherKind,
    OrderMode,
    PassOn,
)

AGENT = Path(__file__).resolve().parents[2] / "examples" / "support-agent" / "agent.py"


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        v = " ".join(v.split()).casefold()
        return v.removeprefix("ord_")
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return v


def matcher_ok(m: ArgMatcher, present: bool, value: Any) -> bool:
    match m.kind:
        case MatcherKind.ABSENT:
            return not present
        case MatcherKind.ANY:
            return present
        case MatcherKind.EQUAL:
            return present and _norm(value) == _norm(m.value)
        case MatcherKind.IN:
            return present and any(_norm(value) == _norm(o) for o in m.options)
        case MatcherKind.REGEX:
            return (
                present
                and isinstance(value, str)
                and re.fullmatch(m.pattern or "", value) is not None
            )
        case MatcherKind.APPROX:
            return present and isinstance(value, int | float) and abs(value - m.value) <= m.tol
    return False  # pragma: no cover


def args_ok(
    expected: Mapping[str, ArgMatcher], actual: Mapping[str, Any], exact: bool = False
) -> bool:
    if exact and set(actual) - {k for k, m in expected.items() if m.kind is not MatcherKind.ABSENT}:
        return False
    return all(matcher_ok(m, k in actual, actual.get(k)) for k, m in expected.items())


def call_ok(e: ExpectedCall, name: str, args: Mapping[str, Any]) -> bool:
    return e.name == name and args_ok(e.args, args, exact=not e.required_args_only)


@dataclass
class Outcome:
    case_id: str
    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    final: str | None = None
    error: str | None = None
    passed: bool = False
    why: str = ""

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [c for t in self.turns for c in t]


def respond(
    case: Case, name: str, args: Mapping[str, Any], used: dict[int, int]
) -> tuple[Any, bool]:
    """The frozen response for a call: specific args first, then a per-tool default."""
    candidates: list[tuple[int, FrozenResponse]] = [
        (i, r)
        for i, r in enumerate(case.tool_responses)
        if r.name == name and r.args is not None and args_ok(r.args, args)
    ] + [(i, r) for i, r in enumerate(case.tool_responses) if r.name == name and r.args is None]
    if not candidates:
        return {"error": f"no frozen response for {name}"}, True
    i, r = candidates[0]
    used[i] = used.get(i, 0) + 1
    return (r.error, True) if r.is_error else (r.response, False)


def judge(case: Case, out: Outcome) -> None:
    calls = [(c["name"], c["arguments"]) for c in out.calls]
    if out.error:
        out.why = f"agent error: {out.error}"
        return
    bad = [n for n, _ in calls if n in case.must_not_call]
    if bad:
        out.why = f"must-not-call {bad[0]}"
        return
    for n, a in calls:
        spec = case.tool(n)
        if spec is None or list(Draft202012Validator(dict(spec.parameters)).iter_errors(a)):
            out.why = f"schema-invalid call {n} {a}"
            return
    if case.pass_on is PassOn.EFFECTS:
        made = [
            (c["name"], c["arguments"])
            for c in out.calls
            if _writes(case, c["name"]) and not c["is_error"]
        ]
        for expected in case.expectation_lists():
            if _matches([e for e in expected if _writes(case, e.name)], made, OrderMode.UNORDERED):
                out.passed = True
                return
        out.why = f"writes {made} match no expectation"
        return
    if case.expected_no_tool:
        out.passed = not calls
        out.why = "" if out.passed else f"called {[n for n, _ in calls]} on a no-tool case"
        return
    for expected in case.expectation_lists():
        if _matches(expected, calls, case.order):
            out.passed = True
            return
    out.why = f"calls {calls} match no expectation"


def _writes(case: Case, name: str) -> bool:
    spec = case.tool(name)
    return not (spec is not None and spec.annotations and spec.annotations.get("readOnlyHint"))


def _matches(
    expected: Sequence[ExpectedCall], calls: list[tuple[str, Any]], order: OrderMode
) -> bool:
    if order is OrderMode.STRICT:
        return len(expected) == len(calls) and all(
            call_ok(e, n, a) for e, (n, a) in zip(expected, calls, strict=True)
        )
    remaining = list(calls)
    for e in expected:
        hit = next((i for i, (n, a) in enumerate(remaining) if call_ok(e, n, a)), None)
        if hit is None:
            return False
        remaining.pop(hit)
    return order is OrderMode.SUPERSET or not remaining


class AgentProcess:
    """One long-lived agent worker."""

    def __init__(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        python_flags: Sequence[str] = (),
        agent: Path | None = None,
    ):
        self.proc = subprocess.Popen(
            [sys.executable, *python_flags, str(agent or AGENT), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(env) if env is not None else None,
        )

    def send(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        reply = json.loads(line)
        assert isinstance(reply, dict)
        return reply

    def run_case(
        self, case: Case, *, sample: int = 0, seed: int = 0, max_turns: int = 10
    ) -> Outcome:
        messages = [*case.message_history, {"role": "user", "content": case.user_input}]
        tools = [{"type": "function", "function": t.definition()} for t in case.available_tools]
        reply = self.send(
            {
                "type": "start",
                "case_id": case.id,
                "sample": sample,
                "seed": seed,
                "messages": messages,
                "tools": tools,
            }
        )
        out = Outcome(case.id)
        used: dict[int, int] = {}
        for _ in range(max_turns):
            if reply["type"] == "final":
                out.final = reply["content"]
                break
            if reply["type"] == "error":
                out.error = reply["message"]
                break
            turn = []
            results = []
            for c in reply["calls"]:
                args = (
                    json.loads(c["arguments"])
                    if isinstance(c["arguments"], str)
                    else c["arguments"]
                )
                content, is_error = respond(case, c["name"], args, used)
                turn.append({"name": c["name"], "arguments": args, "is_error": is_error})
                results.append(
                    {"id": c["id"], "name": c["name"], "content": content, "is_error": is_error}
                )
            out.turns.append(turn)
            reply = self.send({"type": "tool_results", "results": results})
        else:
            out.error = "step budget exhausted"
        judge(case, out)
        return out

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=10)
        self.proc.stdout.close()
        return code
