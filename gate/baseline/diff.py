"""Compare a baseline run with a head run: per-case flips, metric deltas, tool drift.

The flip rule (:func:`flip_kind`, exact). Each case has a pass rate
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
case is stable and a single failing run is a regression. ``toolgate check`` uses this rule
only where no test against a base history ran (``toolgate diff`` on two files); the gate
passes ``decided``, the cases the tests of :mod:`gate.policy.engine` found regressed or
improved, and those are then the flips. Cases only in
head are **new**, only in base **removed**.

Comparability: results made from different datasets (sha256) are not compared
(``comparable: false`` with a note; no flips, no metric deltas) — except when only the
tool files the dataset references differ (equal ``cases_sha256``): then the cases are the
same and comparing is exactly how a tool-definition change shows its effect. Tool drift
(tools whose definition hash changed, were added or removed) is listed in both cases,
with a compact diff of description and schema and the flipped cases that involve them.

Both sides are :class:`~gate.model.SuiteStats` (this run's from the reduction, a
baseline's read back by ``gate.results``); the comparison runs before the verdict is
decided and is handed to it (:func:`gate.policy.decide.decide`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import Counter
from collections.abc import Mapping, Sequence

from gate import jsonio
from gate.model import (
    CaseStats,
    Comparison,
    DecidedCase,
    DriftChange,
    Flip,
    FlipKind,
    MetricDelta,
    MetricStats,
    SuiteStats,
    ToolDrift,
    ToolRef,
)

__all__ = ["comparable", "compare", "definition_diff", "flip_kind", "stable_rule"]

MAX_DIFF_LINES = 40
"""Longest tool-definition diff kept in results (the report shows it whole)."""
_COUNTED = (FlipKind.REGRESSION, FlipKind.FIX, FlipKind.NOISE)


def flip_kind(base_rate: float, head_rate: float) -> FlipKind | None:
    """The flip rule on one case's pass rates (module docstring); ``None``: no flip."""
    if base_rate == head_rate:
        return None
    if base_rate == 1.0 and head_rate == 0.0:
        return FlipKind.REGRESSION
    if base_rate == 0.0 and head_rate == 1.0:
        return FlipKind.FIX
    return FlipKind.NOISE


def stable_rule(base_samples: int, head_samples: int) -> str:
    """The flip rule in words, for these sample counts."""
    if base_samples <= 1 or head_samples <= 1:
        caveat = (
            " With 1 sample every case counts as stable, so a single failing run is a "
            "regression: raise `samples`."
        )
    else:
        caveat = ""
    return (
        f"Stable means the same outcome in every sample (base {base_samples} sample(s), "
        f"head {head_samples}). A regression is a case that passed every base sample and "
        "fails every head sample; a fix the reverse; any other change of pass rate involves "
        "a flaky case and is listed as noise, not counted." + caveat
    )


def comparable(base: SuiteStats, head: SuiteStats) -> bool:
    """Same dataset, or datasets that differ only in the tool files they reference."""
    b, h = base.header.dataset, head.header.dataset
    if b.sha256 == h.sha256:
        return True
    return b.cases_sha256 is not None and b.cases_sha256 == h.cases_sha256


HISTORY_RULE = (
    "A regression is a case whose head samples are significantly worse than its base "
    "history (an anytime-valid test per case, the false-block rate controlled across the "
    "cases of the run) by at least the minimum practical effect; a fix the reverse. Cases "
    "still undecided, and cases changed since their history (not comparable), are listed "
    "apart, never as flips."
)


def compare(
    base: SuiteStats,
    head: SuiteStats,
    *,
    source: str = "baseline",
    decided: Mapping[str, DecidedCase] | None = None,
) -> Comparison:
    """Compare ``base`` (the baseline) with ``head`` (this run). See the module docstring.

    ``decided``: the cases the test against the base history found regressed or improved
    (``gate.policy.engine``); with it, those are the flips (and nothing else is), instead
    of the stable-pass/stable-fail rule on the two runs' pass rates."""
    drift = _tool_drift(base.header.tools, head.header.tools)
    bd, hd = base.header.dataset, head.header.dataset
    same_data = bd.sha256 == hd.sha256
    tools_only = not same_data and comparable(base, head)
    rule = stable_rule(base.samples, head.samples) if decided is None else HISTORY_RULE
    if not same_data and not tools_only and decided is None:
        return Comparison(
            source=source,
            comparable=False,
            note=(
                f"the baseline was made from another dataset (sha256 "
                f"{bd.sha256[:12]}…, this run {hd.sha256[:12]}…): "
                "nothing was compared; refresh the baseline on this dataset"
            ),
            rule=rule,
            base_dataset_sha256=bd.sha256,
            base_samples=base.samples,
            regressions=0,
            fixes=0,
            noise=0,
            metrics={},
            slice_metrics={},
            flips=(),
            tool_drift=tuple(drift),
            base_usage=dict(base.usage),
        )
    note = None
    if not same_data and not tools_only:
        note = (
            "the dataset differs from the baseline's: each case was compared by its hash "
            "(content, tools, agent, scoring), so changed cases are not comparable"
        )
    elif tools_only:
        note = (
            "the dataset differs from the baseline's only in the tool files it references "
            "(tool definitions): cases compared; see the tool drift"
        )
    flips = _flips(
        _in_scope(base.cases, head), _in_scope(head.cases, base), {d.tool for d in drift}, decided
    )
    counts = Counter(f.kind for f in flips)
    drift = [
        ToolDrift(
            tool=d.tool,
            change=d.change,
            diff=d.diff,
            flipped_cases=tuple(
                f.case_id for f in flips if f.kind in _COUNTED and d.tool in f.tools
            ),
        )
        for d in drift
    ]
    return Comparison(
        source=source,
        comparable=True,
        note=note,
        rule=rule,
        base_dataset_sha256=bd.sha256,
        base_samples=base.samples,
        regressions=counts[FlipKind.REGRESSION],
        fixes=counts[FlipKind.FIX],
        noise=counts[FlipKind.NOISE],
        metrics=_deltas(base.metrics, head.metrics),
        slice_metrics=_slice_deltas(base, head),
        flips=tuple(flips),
        tool_drift=tuple(drift),
        base_usage=dict(base.usage),
    )


def _in_scope(cases: Sequence[CaseStats], other: SuiteStats) -> Sequence[CaseStats]:
    """The cases of one side that the other side's shard could hold (a shard compared
    with a whole run must not list the other shards' cases as new or removed)."""
    shard = other.header.shard
    if shard is None:
        return list(cases)
    return [c for c in cases if shard.holds(c.id)]


def _flips(
    base_cases: Sequence[CaseStats],
    head_cases: Sequence[CaseStats],
    drifted: set[str],
    decided: Mapping[str, DecidedCase] | None = None,
) -> list[Flip]:
    base_by_id = {c.id: c for c in base_cases}
    head_ids = {c.id for c in head_cases}
    out: dict[FlipKind, list[Flip]] = {k: [] for k in _COUNTED}
    new: list[Flip] = []
    for h in head_cases:
        b = base_by_id.get(h.id)
        if b is None:
            new.append(_flip(FlipKind.NEW, None, h, drifted))
            continue
        if decided is not None:
            d = decided.get(h.id)
            if d is not None:
                out[d.kind].append(_decided_flip(d, b, h, drifted))
            continue
        if not h.samples:  # not sampled (every sample missing): neither a pass nor a fail
            continue
        kind = flip_kind(b.pass_rate, h.pass_rate)
        if kind is not None:
            out[kind].append(_flip(kind, b, h, drifted))
    removed = [
        _flip(FlipKind.REMOVED, c, None, drifted) for c in base_cases if c.id not in head_ids
    ]
    return [*out[FlipKind.REGRESSION], *out[FlipKind.FIX], *out[FlipKind.NOISE], *new, *removed]


def _counts(c: CaseStats | None) -> str:
    if c is None:
        return "—"
    return f"{round(c.pass_rate * c.samples)}/{c.samples}"


def _decided_flip(d: DecidedCase, b: CaseStats, h: CaseStats, drifted: set[str]) -> Flip:
    """A flip the test against the base history decided: the history's counts and the
    head's, with the test's p-value."""
    flip = _flip(d.kind, b, h, drifted)
    p = "" if d.p_value is None else f" (p = {d.p_value:.2g})"
    base_c = f"{d.base_passes}/{d.base_samples}"
    head_c = f"{d.head_passes}/{d.head_samples}"
    if d.kind is FlipKind.REGRESSION:
        reason = f"passed {base_c} in the base history, {head_c} on head{p}"
    else:
        reason = f"passed {base_c} in the base history, {head_c} on head: improved{p}"
    if flip.failed_checks:
        reason += f"; failed checks: {', '.join(flip.failed_checks[:4])}"
    return dataclasses.replace(
        flip,
        base_pass_rate=d.base_passes / d.base_samples if d.base_samples else None,
        head_pass_rate=d.head_passes / d.head_samples if d.head_samples else None,
        base_samples=d.base_samples,
        head_samples=d.head_samples,
        reason=reason,
        p_value=d.p_value,
    )


def _flip(kind: FlipKind, b: CaseStats | None, h: CaseStats | None, drifted: set[str]) -> Flip:
    tools = tuple(dict.fromkeys([*(h.tools if h else []), *(b.tools if b else [])]))
    side = b if kind is FlipKind.FIX else h
    checks = side.failed_checks if side is not None else ()
    extra = h.extra_samples if h else 0
    confirmed = (
        f" (confirmed with {extra} extra sample(s))" if extra and kind is not FlipKind.NOISE else ""
    )
    match kind:
        case FlipKind.REGRESSION:
            reason = f"passed {_counts(b)} on base, fails {_counts(h)} on head{confirmed}"
        case FlipKind.FIX:
            reason = f"failed {_counts(b)} on base, passes {_counts(h)} on head{confirmed}"
        case FlipKind.NOISE:
            reason = (
                f"base {_counts(b)} passed → head {_counts(h)}: a flaky case, not counted as a "
                "regression or a fix"
            )
        case FlipKind.NEW:
            reason = f"new case: {_counts(h)} passed"
        case FlipKind.REMOVED:
            reason = f"removed case: {_counts(b)} passed on base"
    if checks and kind in _COUNTED:
        reason += f"; failed checks: {', '.join(checks[:4])}"
    ref = h or b
    assert ref is not None
    return Flip(
        case_id=ref.id,
        kind=kind,
        base_pass_rate=None if b is None else b.pass_rate,
        head_pass_rate=None if h is None else h.pass_rate,
        base_samples=0 if b is None else b.samples,
        head_samples=0 if h is None else h.samples,
        head_extra_samples=extra,
        failed_checks=tuple(checks),
        tools=tools,
        drifted_tools=tuple(t for t in tools if t in drifted),
        line=ref.line,
        reason=reason,
    )


def _slice_deltas(base: SuiteStats, head: SuiteStats) -> dict[str, dict[str, MetricDelta]]:
    out: dict[str, dict[str, MetricDelta]] = {}
    for name in sorted(set(base.slices) | set(head.slices)):
        b = base.slices.get(name)
        h = head.slices.get(name)
        out[name] = _deltas(b.metrics if b else {}, h.metrics if h else {})
    return out


def _deltas(
    base: Mapping[str, MetricStats], head: Mapping[str, MetricStats]
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


def _tool_drift(base: Mapping[str, ToolRef], head: Mapping[str, ToolRef]) -> list[ToolDrift]:
    out: list[ToolDrift] = []
    for name in sorted(set(base) | set(head)):
        b = base.get(name)
        h = head.get(name)
        if b is not None and h is not None and b.hash == h.hash:
            continue
        change = (
            DriftChange.ADDED
            if b is None
            else DriftChange.REMOVED
            if h is None
            else DriftChange.CHANGED
        )
        out.append(
            ToolDrift(
                tool=name, change=change, diff=tuple(_definition_diff(b, h)), flipped_cases=()
            )
        )
    return out


def _definition_lines(t: ToolRef | None) -> list[str]:
    if t is None:
        return []
    text = jsonio.dumps({"description": t.description, "parameters": t.parameters}, indent=True)
    return text.decode().splitlines()


def _definition_diff(b: ToolRef | None, h: ToolRef | None) -> list[str]:
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
