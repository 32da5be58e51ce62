"""Compare a baseline run with a head run: per-case flips, metric deltas, tool drift.

The flip rule (exact; vectorised in :mod:`gate.policy.flips`). Each case has a pass rate
on each side: passed samples ÷ samples run (confirmation samples included). A case is
**stable** on a side when its pass rate is 1 (stable pass: every sample passed) or 0
(stable fail: every sample failed), and **flaky** when 0 < rate < 1. Then, for a case
present on both sides:

* stable pass → stable fail: **regression**;
* stable fail → stable pass: **fix**;
* any other change of pass rate (one side or both flaky): **noise**, listed apart with
  both pass rates, never counted as a regression or a fix;
* the same pass rate on both sides: not a flip, not listed.

So one unlucky run does not become a regression (3/3 → 2/3 is noise), a consistent drop
does (3/3 → 0/3). What "stable" can mean depends on the samples: with 1 sample every
case is stable and a single failing run is a regression — use ``confirm:`` (extra head
samples for apparent flips, :mod:`gate.policy.confirm`) or more samples. Cases only in
head are **new**, only in base **removed**.

Comparability: results made from different datasets (sha256) are not compared
(``comparable: false`` with a note; no flips, no metric deltas) — except when only the
tool files the dataset references differ (equal ``cases_sha256``): then the cases are the
same and comparing is exactly how a tool-definition change shows its effect. Tool drift
(tools whose definition hash changed, were added or removed) is listed in both cases,
with a compact diff of description and schema and the flipped cases that involve them.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from gate import jsonio
from gate.policy.flips import FIX, NOISE, REGRESSION, SAME, classify_rates
from gate.policy.reduce import in_shard
from gate.results import (
    CaseResult,
    Comparison,
    Flip,
    MetricDelta,
    MetricStat,
    Results,
    ToolDrift,
    ToolInfo,
)

__all__ = ["comparable", "compare", "definition_diff", "stable_rule"]

_KIND_NAMES = {REGRESSION: "regression", FIX: "fix", NOISE: "noise"}
MAX_DIFF_LINES = 40
"""Longest tool-definition diff kept in results (the report shows it whole)."""


def stable_rule(base_samples: int, head_samples: int) -> str:
    """The flip rule in words, for these sample counts."""
    if base_samples <= 1 or head_samples <= 1:
        caveat = (
            " With 1 sample every case counts as stable, so a single failing run is a "
            "regression: raise `samples` or set `confirm.max_extra_samples`."
        )
    else:
        caveat = ""
    return (
        f"Stable means the same outcome in every sample (base {base_samples} sample(s), "
        f"head {head_samples}). A regression is a case that passed every base sample and "
        "fails every head sample; a fix the reverse; any other change of pass rate involves "
        "a flaky case and is listed as noise, not counted." + caveat
    )


def comparable(base: Results, head: Results) -> bool:
    """Same dataset, or datasets that differ only in the tool files they reference."""
    if base.dataset.sha256 == head.dataset.sha256:
        return True
    return base.dataset.cases_sha256 is not None and (
        base.dataset.cases_sha256 == head.dataset.cases_sha256
    )


def compare(base: Results, head: Results, *, source: str = "baseline") -> Comparison:
    """Compare ``base`` (the baseline) with ``head`` (this run). See the module docstring."""
    drift = _tool_drift(base.tools, head.tools)
    same_data = base.dataset.sha256 == head.dataset.sha256
    tools_only = not same_data and comparable(base, head)
    rule = stable_rule(base.samples, head.samples)
    if not same_data and not tools_only:
        return Comparison(
            source=source,
            comparable=False,
            note=(
                f"the baseline was made from another dataset (sha256 "
                f"{base.dataset.sha256[:12]}…, this run {head.dataset.sha256[:12]}…): "
                "nothing was compared; refresh the baseline on this dataset"
            ),
            rule=rule,
            base_dataset_sha256=base.dataset.sha256,
            base_samples=base.samples,
            tool_drift=drift,
            base_usage=dict(base.usage),
        )
    note = None
    if tools_only:
        note = (
            "the dataset differs from the baseline's only in the tool files it references "
            "(tool definitions): cases compared; see the tool drift"
        )
    flips = _flips(
        _in_scope(base.cases, head), _in_scope(head.cases, base), {d.tool for d in drift}
    )
    counts = Counter(f.kind for f in flips)
    for d in drift:
        d.flipped_cases = [
            f.case_id for f in flips if f.kind in _KIND_NAMES.values() and d.tool in f.tools
        ]
    return Comparison(
        source=source,
        comparable=True,
        note=note,
        rule=rule,
        base_dataset_sha256=base.dataset.sha256,
        base_samples=base.samples,
        regressions=counts["regression"],
        fixes=counts["fix"],
        noise=counts["noise"],
        metrics=_metric_deltas(base, head),
        slice_metrics=_slice_deltas(base, head),
        flips=flips,
        tool_drift=drift,
        base_usage=dict(base.usage),
    )


def _in_scope(cases: Sequence[CaseResult], other: Results) -> Sequence[CaseResult]:
    """The cases of one side that the other side's shard could hold (a shard compared
    with a whole run must not list the other shards' cases as new or removed)."""
    if other.shard is None:
        return cases
    shard = (other.shard.index, other.shard.count)
    return [c for c in cases if in_shard(c.id, shard)]


def _flips(
    base_cases: Sequence[CaseResult], head_cases: Sequence[CaseResult], drifted: set[str]
) -> list[Flip]:
    base_index = {c.id: i for i, c in enumerate(base_cases)}
    head_ids = {c.id for c in head_cases}
    pairs = [(base_cases[base_index[c.id]], c) for c in head_cases if c.id in base_index]
    kinds = classify_rates([b.pass_rate for b, _ in pairs], [h.pass_rate for _, h in pairs])
    out: dict[int, list[Flip]] = {REGRESSION: [], FIX: [], NOISE: []}
    for (b, h), kind in zip(pairs, kinds, strict=True):
        if kind != SAME:
            out[kind].append(_flip(_KIND_NAMES[kind], b, h, drifted))
    new = [_flip("new", None, c, drifted) for c in head_cases if c.id not in base_index]
    removed = [_flip("removed", c, None, drifted) for c in base_cases if c.id not in head_ids]
    return [*out[REGRESSION], *out[FIX], *out[NOISE], *new, *removed]


def _counts(c: CaseResult | None) -> str:
    if c is None:
        return "—"
    n = len(c.samples)
    return f"{round(c.pass_rate * n)}/{n}"


def _failed_checks(c: CaseResult | None) -> list[str]:
    if c is None:
        return []
    tally: Counter[str] = Counter()
    for s in c.samples:
        tally.update(s.failed_checks)
    return [name for name, _ in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]


def _flip(kind: str, b: CaseResult | None, h: CaseResult | None, drifted: set[str]) -> Flip:
    tools = list(dict.fromkeys([*(h.tools if h else []), *(b.tools if b else [])]))
    checks = _failed_checks(b if kind == "fix" else h)
    extra = h.extra_samples if h else 0
    confirmed = f" (confirmed with {extra} extra sample(s))" if extra and kind != "noise" else ""
    if kind == "regression":
        reason = f"passed {_counts(b)} on base, fails {_counts(h)} on head{confirmed}"
    elif kind == "fix":
        reason = f"failed {_counts(b)} on base, passes {_counts(h)} on head{confirmed}"
    elif kind == "noise":
        reason = (
            f"base {_counts(b)} passed → head {_counts(h)}: a flaky case, not counted as a "
            "regression or a fix"
        )
    elif kind == "new":
        reason = f"new case: {_counts(h)} passed"
    else:
        reason = f"removed case: {_counts(b)} passed on base"
    if checks and kind in {"regression", "noise", "fix"}:
        reason += f"; failed checks: {', '.join(checks[:4])}"
    ref = h or b
    assert ref is not None
    return Flip(
        case_id=ref.id,
        kind=kind,  # type: ignore[arg-type]
        base_pass_rate=None if b is None else b.pass_rate,
        head_pass_rate=None if h is None else h.pass_rate,
        base_samples=0 if b is None else len(b.samples),
        head_samples=0 if h is None else len(h.samples),
        head_extra_samples=extra,
        failed_checks=checks,
        tools=tools,
        drifted_tools=[t for t in tools if t in drifted],
        line=ref.line,
        reason=reason,
    )


def _metric_deltas(base: Results, head: Results) -> dict[str, MetricDelta]:
    return _deltas(base.metrics, head.metrics)


def _slice_deltas(base: Results, head: Results) -> dict[str, dict[str, MetricDelta]]:
    out: dict[str, dict[str, MetricDelta]] = {}
    for name in sorted(set(base.slices) | set(head.slices)):
        b = base.slices.get(name)
        h = head.slices.get(name)
        out[name] = _deltas(b.metrics if b else {}, h.metrics if h else {})
    return out


def _deltas(
    base: Mapping[str, MetricStat], head: Mapping[str, MetricStat]
) -> dict[str, MetricDelta]:
    out: dict[str, MetricDelta] = {}
    for name in sorted(set(base) | set(head)):
        b = base.get(name)
        h = head.get(name)
        bm = None if b is None else b.mean
        hm = None if h is None else h.mean
        delta = None if bm is None or hm is None else round(hm - bm, 12)
        out[name] = MetricDelta(base=bm, head=hm, delta=delta)
    return out


def _tool_drift(base: dict[str, ToolInfo], head: dict[str, ToolInfo]) -> list[ToolDrift]:
    out: list[ToolDrift] = []
    for name in sorted(set(base) | set(head)):
        b = base.get(name)
        h = head.get(name)
        if b is not None and h is not None and b.hash == h.hash:
            continue
        change: Literal["added", "removed", "changed"] = (
            "added" if b is None else "removed" if h is None else "changed"
        )
        out.append(ToolDrift(tool=name, change=change, diff=_definition_diff(b, h)))
    return out


def _definition_lines(t: ToolInfo | None) -> list[str]:
    if t is None:
        return []
    text = jsonio.dumps({"description": t.description, "parameters": t.parameters}, indent=True)
    return text.decode().splitlines()


def _definition_diff(b: ToolInfo | None, h: ToolInfo | None) -> list[str]:
    """A unified diff (1 line of context) of description and schema, at most 40 lines."""
    lines = list(
        difflib.unified_diff(
            _definition_lines(b), _definition_lines(h), "base", "head", n=1, lineterm=""
        )
    )[2:]  # the ---/+++ header says nothing the report does not
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return lines


definition_diff = _definition_diff
"""The compact definition diff, for other drift sources (``gate.interop.mcp_tools``)."""
