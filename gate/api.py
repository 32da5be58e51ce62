"""The Python API for pytest users: ``gate.assert_tool_calls`` (docs/interop.md, "Python
API for pytest", gives an example and the shapes ``actual`` and ``expected`` take).

The check is the gate's own: one case and one run built from the arguments, scored by
:func:`gate.scorers.score_sample` with the same matchers, normalisation and pass rule as
``toolgate score``; on failure ``AssertionError`` carries the evidence the PR comment
shows. In ``expected`` an element that is a list is one batch (``[[a, b], c]``, as in the
dataset). Without ``tools`` every name used counts as a tool that accepts any arguments
(there is no schema to validate against).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gate.adapters import AssistantTurn, PayloadError
from gate.adapters.openai_chat import call_from_tool_call
from gate.adapters.plain import call_from_plain
from gate.config import NormalizeConfig, ScoringConfig
from gate.dataset.matchers import parse_args
from gate.dataset.tools import parse_tool
from gate.model import (
    ArgsMatch,
    Case,
    ExpectedCall,
    OrderMode,
    Run,
    SampleScore,
    SourceRef,
    ToolCall,
    ToolSpec,
    Turn,
)
from gate.report.escape import calls_repr
from gate.scorers.registry import REGISTRY

__all__ = ["assert_tool_calls", "check_tool_calls"]

_SOURCE = SourceRef("<assert_tool_calls>", 0)


def _call(obj: Any, where: str) -> ToolCall:
    if isinstance(obj, ToolCall):
        return obj
    try:
        if isinstance(obj, Mapping) and isinstance(obj.get("function"), Mapping):
            return call_from_tool_call(obj, where)  # an OpenAI tool_calls entry
        return call_from_plain(obj, where)
    except PayloadError as exc:
        raise TypeError(f"actual {exc}") from None


def _run(actual: Any) -> Run:
    if isinstance(actual, Run):
        return actual
    if isinstance(actual, AssistantTurn):
        return Run(
            case_id="assert", sample=0, turns=(Turn(calls=actual.calls, content=actual.content),)
        )
    if isinstance(actual, str | bytes) or not isinstance(actual, Iterable):
        raise TypeError(
            "actual must be a list of calls, a list of per-turn lists, a Run or an AssistantTurn"
        )
    items = list(actual)
    turns: list[Turn] = []
    for i, item in enumerate(items):
        if isinstance(item, list | tuple):
            turns.append(Turn(calls=tuple(_call(c, f"[{i}][{j}]") for j, c in enumerate(item))))
        else:
            turns.append(Turn(calls=(_call(item, f"[{i}]"),)))
    return Run(case_id="assert", sample=0, turns=tuple(turns))


def _expected(expected: Iterable[Any]) -> tuple[ExpectedCall, ...]:
    out: list[ExpectedCall] = []
    problems: list[str] = []

    def report(field: str, message: str) -> None:
        problems.append(f"{field}: {message}")

    items = list(expected)
    batched = any(isinstance(e, list) for e in items)
    for i, item in enumerate(items):
        members = (
            [(f"expected[{i}][{k}]", e) for k, e in enumerate(item)]
            if isinstance(item, list)
            else [(f"expected[{i}]", item)]
        )
        if not members:
            raise TypeError(f"expected[{i}] is an empty batch: list at least one call")
        for where, e in members:
            call = _one_expected(e, where, report)
            if call is not None:
                out.append(dataclasses.replace(call, batch=i) if batched else call)
    if problems:
        raise ValueError("invalid expectation: " + "; ".join(problems))
    return tuple(out)


def _one_expected(e: Any, where: str, report: Callable[[str, str], None]) -> ExpectedCall | None:
    if isinstance(e, ExpectedCall):
        return e
    if not isinstance(e, Mapping) or not isinstance(e.get("name"), str):
        raise TypeError(f"{where} must be {{'name': str, 'args': {{...}}}}")
    unknown = set(e) - {"name", "args", "args_match", "required_args_only"}
    if unknown:
        raise TypeError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    args = parse_args(e.get("args", {}), f"{where}.args", report)
    if "args_match" in e:
        if "required_args_only" in e:
            raise TypeError(f"{where}: give args_match or required_args_only, not both")
        try:
            mode = ArgsMatch(e["args_match"])
        except ValueError:
            options = ", ".join(m.value for m in ArgsMatch)
            raise TypeError(f"{where}.args_match must be one of {options}") from None
    else:
        rao = e.get("required_args_only", True)
        if not isinstance(rao, bool):
            raise TypeError(f"{where}.required_args_only must be true or false")
        mode = ArgsMatch.SUBSET if rao else ArgsMatch.EXACT
    return None if args is None else ExpectedCall(name=e["name"], args=args, args_match=mode)


def _tools(tools: Any) -> tuple[ToolSpec, ...]:
    if tools is None:
        return ()
    if isinstance(tools, Mapping):
        tools = list(tools.values())
    specs: list[ToolSpec] = []
    for i, t in enumerate(tools):
        if isinstance(t, ToolSpec):
            specs.append(t)
            continue
        spec, issues = parse_tool(t)
        if spec is None or issues:
            detail = (
                "; ".join(f"tools[{i}]{f}: {m}" for f, m in issues) or f"tools[{i}] is unusable"
            )
            raise ValueError(f"invalid tool definition: {detail}")
        specs.append(spec)
    return tuple(specs)


def _normalize(normalize: Any) -> NormalizeConfig:
    if normalize is None:
        return NormalizeConfig()
    if isinstance(normalize, NormalizeConfig):
        return normalize
    if isinstance(normalize, str):
        return NormalizeConfig(profile=normalize)  # type: ignore[arg-type]
    if isinstance(normalize, Mapping):
        return NormalizeConfig.model_validate(dict(normalize))
    raise TypeError(
        "normalize must be a NormalizeConfig, a mapping of its settings, or a profile name"
    )


def check_tool_calls(
    actual: Any,
    expected: Iterable[Any],
    *,
    order: str | OrderMode = "unordered",
    tools: Any = None,
    must_not_call: Sequence[str] = (),
    normalize: Any = None,
) -> SampleScore:
    """Score ``actual`` against ``expected`` exactly as the gate does; never raises on a
    mismatch (see :func:`assert_tool_calls` for the arguments)."""
    from gate.scorers import ScoringContext, score_sample

    exp = _expected(expected)
    run = _run(actual)
    specs = _tools(tools)
    if tools is None:
        # No tool list: every name used is taken as a tool that accepts any arguments, so
        # that nothing counts as an unknown tool and argument differences are explained.
        names = dict.fromkeys([e.name for e in exp] + [c.name for c in run.calls])
        specs = tuple(ToolSpec(name=n, parameters={"type": "object"}) for n in names)
    case = Case(
        id="assert",
        user_input="",
        source=_SOURCE,
        available_tools=specs,
        expected_tool_calls=exp,
        expected_no_tool=not exp,
        must_not_call=tuple(must_not_call),
        order=OrderMode(order),
    )
    scoring = ScoringConfig()
    ctx = ScoringContext.build(scoring, _normalize(normalize), {s.name: s for s in specs})
    return score_sample(case, run, ctx, full=True)


def assert_tool_calls(
    actual: Any,
    expected: Iterable[Any],
    *,
    order: str | OrderMode = "unordered",
    tools: Any = None,
    must_not_call: Sequence[str] = (),
    normalize: Any = None,
) -> SampleScore:
    """Assert that ``actual`` tool calls pass against ``expected`` (docs/interop.md).

    * ``order``: ``unordered`` (default: the same calls, nothing missing, nothing extra) ·
      ``superset`` (every expected call made, extra calls allowed) · ``subset`` ·
      ``strict``;
    * ``tools``: the tool definitions (OpenAI ``{"type": "function", "function": …}`` or
      bare ``{name, description, parameters}``) — enables the JSON-Schema validity check;
    * ``must_not_call``: names that fail the assertion when called;
    * ``normalize``: a :class:`~gate.config.NormalizeConfig`, a mapping of its settings, or
      a profile name (``"bfcl"``);

    Returns the :class:`~gate.model.SampleScore` when it passes (every metric, for further
    asserts); raises ``AssertionError`` with the evidence otherwise.
    """
    score = check_tool_calls(
        actual,
        expected,
        order=order,
        tools=tools,
        must_not_call=must_not_call,
        normalize=normalize,
    )
    if not score.passed:
        raise AssertionError(render_failure(score))
    return score


def render_failure(score: SampleScore) -> str:
    """The evidence of a failed sample, as the PR comment and JUnit report show it."""
    from gate.results import evidence_json

    ev = evidence_json(score.evidence) if score.evidence is not None else {}
    lines = [f"tool calls do not match (failing checks: {', '.join(score.failed_checks) or '—'})"]
    if isinstance(ev.get("summary"), str) and ev["summary"]:
        lines.append(f"  why: {ev['summary']}")
    lines.append(f"  expected: {calls_repr(ev.get('expected'))}")
    lines.append(f"  actual:   {calls_repr(ev.get('actual'))}")
    if ev.get("missing"):
        lines.append(
            "  missing:  " + ", ".join(f"{m.get('name')} ({m.get('why')})" for m in ev["missing"])
        )
    if ev.get("extra"):
        lines.append(
            "  extra:    " + ", ".join(f"#{x.get('index')} {x.get('name')}" for x in ev["extra"])
        )
    for d in ev.get("arg_diffs") or []:
        for diff in d.get("diffs", []):
            got = f", got {json.dumps(diff['actual'])}" if "actual" in diff else ", absent"
            lines.append(
                f"  argument: {d.get('tool')}.{diff.get('argument')}: expected "
                f"{json.dumps(diff.get('expected'))}{got} — {diff.get('why')}"
            )
    for m in ev.get("malformed") or []:
        lines.append(
            f"  malformed: #{m.get('index')} {m.get('name')}: {m.get('kind')} — {m.get('detail')}"
        )
    for v in ev.get("violations") or []:
        lines.append(f"  forbidden: {v.get('message')}")
    if ev.get("agent_error"):
        lines.append(f"  agent error: {ev['agent_error']}")
    # Then every metric that missed its best value, in the registry's order, with its reason.
    for metric in REGISTRY:
        value = score.scores.get(metric.name)
        if value is not None and value != metric.ideal:
            reason = score.reasons.get(metric.name, "")
            lines.append(f"  {metric.name} {value:g}: {reason}".rstrip(": "))
    return "\n".join(lines)
