"""Builders for scorer tests: dataset-syntax JSON → model objects (the same shapes the
dataset loader produces), so that table-driven cases stay readable JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gate.model import (
    ArgMatcher,
    ArgsMatch,
    Case,
    ExpectedCall,
    MatcherKind,
    OrderMode,
    Run,
    SourceRef,
    ToolCall,
    ToolResult,
    ToolSpec,
    Turn,
)


def matcher(value: Any) -> ArgMatcher:
    """Dataset syntax → ArgMatcher (docs/dataset.md)."""
    if isinstance(value, dict) and len(value) >= 1:
        keys = set(value)
        if keys == {"$in"}:
            return ArgMatcher(MatcherKind.IN, options=tuple(value["$in"]))
        if keys == {"$regex"}:
            return ArgMatcher(MatcherKind.REGEX, pattern=value["$regex"])
        if keys <= {"$approx", "tol"} and "$approx" in keys:
            return ArgMatcher(MatcherKind.APPROX, value=value["$approx"], tol=value.get("tol", 0.0))
        if keys == {"$absent"}:
            return ArgMatcher(MatcherKind.ABSENT)
        if keys == {"$any"}:
            return ArgMatcher(MatcherKind.ANY)
    return ArgMatcher(MatcherKind.EQUAL, value=value)


def matchers(args: Mapping[str, Any]) -> dict[str, ArgMatcher]:
    return {k: matcher(v) for k, v in args.items()}


def expected(
    name: str,
    args: Mapping[str, Any] | None = None,
    *,
    exact: bool = False,
    mode: ArgsMatch | None = None,
    batch: int | None = None,
) -> ExpectedCall:
    if mode is None:
        mode = ArgsMatch.EXACT if exact else ArgsMatch.SUBSET
    return ExpectedCall(name=name, args=matchers(args or {}), args_match=mode, batch=batch)


def _one(item: Mapping[str, Any], batch: int | None) -> ExpectedCall:
    mode = item.get("args_match")
    return expected(
        item["name"],
        item.get("args"),
        exact=item.get("required_args_only") is False,
        mode=ArgsMatch(mode) if mode is not None else None,
        batch=batch,
    )


def expected_list(items: Sequence[Any]) -> tuple[ExpectedCall, ...]:
    """Dataset syntax → expected calls; an element that is a list is one batch."""
    batched = any(isinstance(i, list) for i in items)
    out: list[ExpectedCall] = []
    for k, item in enumerate(items):
        for one in item if isinstance(item, list) else [item]:
            out.append(_one(one, k if batched else None))
    return tuple(out)


def call(name: str, args: Any = None, *, id: str | None = None, raw: str | None = None) -> ToolCall:
    """A call; ``args`` a dict (parsed) or a string that did not parse (``parse_ok`` false)."""
    if isinstance(args, str):
        return ToolCall(name=name, arguments=None, id=id, raw_arguments=args, parse_ok=False)
    return ToolCall(name=name, arguments=args if args is not None else {}, id=id, raw_arguments=raw)


def tool(name: str, parameters: Mapping[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(
        name=name, description=f"{name} tool", parameters=parameters or {"type": "object"}
    )


def case(
    id: str = "c1",
    *,
    expect: Sequence[ExpectedCall] = (),
    no_tool: bool = False,
    alternatives: Sequence[Sequence[ExpectedCall]] = (),
    must_not_call: Sequence[str] = (),
    tools: Sequence[ToolSpec] | None = None,
    order: str | None = None,
    step_budget: int | None = None,
    tags: Sequence[str] = (),
) -> Case:
    if tools is None:
        names = sorted({e.name for e in expect} | {e.name for alt in alternatives for e in alt})
        tools = [tool(n) for n in names]
    return Case(
        id=id,
        user_input="test",
        source=SourceRef("dataset.jsonl", 1),
        available_tools=tuple(tools),
        expected_tool_calls=tuple(expect),
        expected_no_tool=no_tool,
        acceptable_alternatives=tuple(tuple(a) for a in alternatives),
        must_not_call=tuple(must_not_call),
        order=None if order is None else OrderMode(order),
        step_budget=step_budget,
        tags=tuple(tags),
    )


def run(
    *turns: Sequence[ToolCall] | Turn,
    case_id: str = "c1",
    sample: int = 0,
    error: str | None = None,
    final: str | None = "done",
) -> Run:
    """A run whose turns are the given batches of calls (a Turn is taken as is)."""
    built = tuple(t if isinstance(t, Turn) else Turn(calls=tuple(t)) for t in turns)
    return Run(case_id=case_id, sample=sample, turns=built, final=final, error=error)


def turn(calls: Sequence[ToolCall], results: Sequence[tuple[Any, bool]] = ()) -> Turn:
    """A turn whose i-th call got results[i] = (content, is_error)."""
    res = tuple(
        ToolResult(id=c.id, content=content, is_error=err)
        for c, (content, err) in zip(calls, results, strict=False)
    )
    return Turn(calls=tuple(calls), tool_results=res)
