"""Compare a baseline run with a head run: per-case flips, metric deltas, setup changes
and tool drift.

The flips come from the tests against the base history (:mod:`gate.policy.flips`: the
one classification — regression, fix, likely regression or fix, noise — that every
command uses): :func:`compare` is handed them with the cases that were comparable, and
lists them with both sides' counts; cases only in head are **new**, only in base
**removed**. Not comparable cases (their content or the scoring changed since their
history) are never flips.

What a pull request changed of the setup (``setup_changes``), tool drift, and when a
metric's change is **beyond noise** are docs/policy.md's rules (without a bootstrap
interval a metric is beyond noise when it moved by :data:`MOVED`); every report reads
that flag, none decides it again.

Both sides are :class:`~gate.model.SuiteStats` (this run's from the reduction, a
baseline's read back by ``gate.results``); the comparison runs before the verdict is
decided and is handed to it (:func:`gate.policy.decide.decide`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from gate import jsonio
from gate.model import (
    CaseChanges,
    CaseFlip,
    CaseStats,
    Comparison,
    CostDelta,
    DriftChange,
    Flip,
    FlipKind,
    MetricDelta,
    MetricStats,
    NotCompared,
    NotComparedWhy,
    RemovedCase,
    SetupChange,
    SuiteStats,
    ToolDrift,
    ToolRef,
)
from gate.policy.history import IDENTITY_KEYS, agent_identity

__all__ = ["HISTORY_RULE", "compare", "definition_diff", "setup_changes"]

MAX_DIFF_LINES = 40
"""Longest tool-definition diff kept in results (the report shows it whole)."""
MOVED = 0.01
"""Without a bootstrap interval, a metric that moved at least this much is beyond noise."""
_EPS = 1e-9
_COUNTED = (
    FlipKind.REGRESSION,
    FlipKind.LIKELY_REGRESSION,
    FlipKind.FIX,
    FlipKind.LIKELY_FIX,
    FlipKind.UNDECIDED,
    FlipKind.NOISE,
)

HISTORY_RULE = (
    "Each case's head samples are tested against its base history (an anytime-valid test "
    "per case, the false-block rate controlled across the cases of the run). A regression "
    "fell by at least the minimum effect and is significant; a likely regression fell as "
    "far and the evidence points that way, but it is not significant yet; a fix and a "
    "likely fix are the reverse. An undecided case moved as far, but no outcome of its "
    "samples could have made the test significant: too few samples to tell. Any other "
    "change of a case's pass rate is noise: the test could have told, and did not. Cases "
    "changed since their history (not comparable) are listed apart, never as flips."
)


def setup_changes(base: Mapping[str, object], head: Mapping[str, object]) -> list[SetupChange]:
    """The agent identity keys that differ between two agent descriptions."""
    b, h = agent_identity(base), agent_identity(head)
    return [
        SetupChange(key, b.get(key), h.get(key))
        for key in SETUP_ORDER
        if (key in b or key in h) and b.get(key) != h.get(key)
    ]


SETUP_ORDER = (*(k for k in IDENTITY_KEYS if k != "kind"), "kind")
"""The order the reports name a setup's changes in: the identity keys, the kind last."""


def compare(
    base: SuiteStats,
    head: SuiteStats,
    *,
    flips: Mapping[str, CaseFlip],
    tested: Collection[str],
    source: str = "baseline",
    significant: Collection[str] = (),
    cost: Sequence[CostDelta] = (),
    changed: Collection[str] = (),
    retired: Mapping[str, str] | None = None,
) -> Comparison:
    """Compare ``base`` (the baseline) with ``head`` (this run). See the module docstring.

    ``flips``: the classification of the comparable cases whose pass rate moved;
    ``tested``: the ids of every comparable case; ``significant``: the metrics whose
    suite test found a significant change (``case_passed`` for the pass rate); ``cost``:
    the cost metrics against the base history (:func:`cost_deltas`); ``changed``: the
    ids of the cases whose hash differs from their history's; ``retired``: the config's
    ``dataset.retired`` (case id → reason), which the removed cases are matched with."""
    drift = _tool_drift(base.header.tools, head.header.tools)
    bd, hd = base.header.dataset, head.header.dataset
    skeleton = Comparison(
        source=source,
        comparable=False,
        rule=HISTORY_RULE,
        base_dataset_sha256=bd.sha256,
        base_samples=base.samples,
        tool_drift=tuple(drift),
        base_usage={k: float(v) for k, v in base.usage.items()},
        setup_changes=tuple(setup_changes(base.header.agent, head.header.agent)),
    )
    if not tested:
        not_compared = _not_compared(base, head)
        return dataclasses.replace(
            skeleton,
            note=(
                f"{not_compared.detail}: nothing was compared; the histories of its cases "
                "start again with this run"
            ),
            not_compared=not_compared,
        )
    note = None
    case_changes = _case_changes(base, head, changed, retired or {})
    if bd.sha256 != hd.sha256:
        if bd.cases_sha256 is not None and bd.cases_sha256 == hd.cases_sha256:
            note = (
                "the dataset differs from the baseline's only in the tool files it "
                "references (tool definitions): cases compared; see the tool drift"
            )
        else:
            note = (
                "the dataset differs from the baseline's: each case was compared by its "
                "own hash (content and scoring) — the metric table's base and head figures "
                "are over different cases"
            )
    if base.header.gate_name != head.header.gate_name:
        other = (
            f"the baseline was made by the gate {base.header.gate_name!r}, this gate is "
            f"{head.header.gate_name!r} (its name: changed?): each case was compared by its "
            "own hash"
        )
        note = other if note is None else f"{note}; {other}"
    listed = _flips(
        _in_scope(base.cases, head), _in_scope(head.cases, base), {d.tool for d in drift}, flips
    )
    counts = Counter(f.kind for f in listed)
    drift = [
        ToolDrift(
            tool=d.tool,
            change=d.change,
            diff=d.diff,
            flipped_cases=tuple(
                f.case_id for f in listed if f.kind in _COUNTED and d.tool in f.tools
            ),
        )
        for d in drift
    ]
    moved = _moved_by_flips(base.cases, head.cases, listed)
    return dataclasses.replace(
        skeleton,
        comparable=True,
        note=note,
        regressions=counts[FlipKind.REGRESSION],
        fixes=counts[FlipKind.FIX],
        noise=counts[FlipKind.NOISE],
        metrics=_deltas(base.metrics, head.metrics, significant, moved),
        slice_metrics=_slice_deltas(base, head, moved),
        flips=tuple(listed),
        tool_drift=tuple(drift),
        likely_regressions=counts[FlipKind.LIKELY_REGRESSION],
        likely_fixes=counts[FlipKind.LIKELY_FIX],
        undecided=counts[FlipKind.UNDECIDED],
        cost=tuple(cost),
        changes=case_changes,
    )


def _not_compared(base: SuiteStats, head: SuiteStats) -> NotCompared:
    """Why no case of ``head`` could be tested against ``base``'s histories."""
    bd, hd = base.header.dataset, head.header.dataset
    base_cases = _in_scope(base.cases, head)
    shared = {c.id for c in base_cases} & {c.id for c in head.cases}
    bg, hg = base.header.gate_name, head.header.gate_name
    if not base_cases:
        return NotCompared(NotComparedWhy.NO_COMPARABLE_CASE, "the baseline holds no case")
    if bg != hg:
        return NotCompared(
            NotComparedWhy.OTHER_GATE,
            f"the baseline was made by the gate {bg!r}, not {hg!r}, and "
            + (
                "none of its cases is in this run's dataset"
                if not shared
                else "none of its cases is comparable with this run's"
            ),
        )
    if not shared:
        return NotCompared(
            NotComparedWhy.OTHER_DATASET,
            f"the baseline was made from another dataset: none of its {len(base_cases):,} "
            f"cases is in this run's (dataset sha256 {bd.sha256[:12]}…, this run "
            f"{hd.sha256[:12]}…)",
        )
    other = (
        f"; the baseline was made from dataset sha256 {bd.sha256[:12]}…, this run {hd.sha256[:12]}…"
        if bd.sha256 != hd.sha256
        else ""
    )
    return NotCompared(
        NotComparedWhy.NO_COMPARABLE_CASE,
        f"every case this run shares with the baseline ({len(shared):,}) changed since its "
        f"history (its content or the scoring config){other}",
    )


def _case_changes(
    base: SuiteStats, head: SuiteStats, changed: Collection[str], retired: Mapping[str, str]
) -> CaseChanges:
    """The cases added, changed and removed, in dataset order (removed: the baseline's)."""
    base_cases = _in_scope(base.cases, head)
    base_ids = {c.id for c in base_cases}
    head_ids = {c.id for c in head.cases}
    changed_ids = set(changed)
    return CaseChanges(
        added=tuple(c.id for c in head.cases if c.id not in base_ids),
        changed=tuple(c.id for c in head.cases if c.id in changed_ids and c.id in base_ids),
        removed=tuple(
            RemovedCase(c.id, round(c.pass_rate * c.samples), c.samples, retired.get(c.id))
            for c in base_cases
            if c.id not in head_ids
        ),
    )


def _moved_by_flips(
    base: Sequence[CaseStats], head: Sequence[CaseStats], flips: Sequence[Flip]
) -> set[str]:
    """Metrics whose per-case mean changed in a case that flipped (a regression or fix,
    likely or significant): a change of the suite's figures that is a flip, not noise."""
    flipped = {f.case_id for f in flips if f.kind.worse or f.kind.better}
    if not flipped:
        return set()
    by_id = {c.id: c for c in base}
    out: set[str] = {"case_passed"}
    for h in head:
        b = by_id.get(h.id)
        if h.id not in flipped or b is None:
            continue
        for name, hv in h.scores.items():
            bv = b.scores.get(name)
            if hv is not None and bv is not None and abs(hv - bv) >= _EPS:
                out.add(name)
    return out


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
    flips: Mapping[str, CaseFlip],
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
        d = flips.get(h.id)
        if d is not None:
            out[d.kind].append(_tested_flip(d, b, h, drifted))
    removed = [
        _flip(FlipKind.REMOVED, c, None, drifted) for c in base_cases if c.id not in head_ids
    ]
    return [*(f for k in _COUNTED for f in out[k]), *new, *removed]


def _counts(c: CaseStats | None) -> str:
    if c is None:
        return "—"
    return f"{round(c.pass_rate * c.samples)}/{c.samples}"


def _tested_flip(d: CaseFlip, b: CaseStats, h: CaseStats, drifted: set[str]) -> Flip:
    """A flip of the test against the base history: the history's counts and the
    head's, the test's p-value, and for a likely one why it is not significant yet."""
    flip = _flip(d.kind, b, h, drifted)
    p = "" if d.p_value is None else f" (p = {d.p_value:.2g})"
    counts = f"passed {d.base_passes}/{d.base_samples} in the base history, " + (
        f"{d.head_passes}/{d.head_samples} on head"
    )
    match d.kind:
        case FlipKind.REGRESSION:
            reason = f"{counts}: regressed{p}"
        case FlipKind.FIX:
            reason = f"{counts}: fixed{p}"
        case FlipKind.LIKELY_REGRESSION:
            reason = f"{counts}: likely regressed{p}, not significant: {d.because}"
        case FlipKind.LIKELY_FIX:
            reason = f"{counts}: likely fixed{p}, not significant: {d.because}"
        case FlipKind.UNDECIDED:
            reason = f"{counts}: changed, too few samples to tell ({d.because})"
        case _:
            reason = f"{counts}: within noise{p}"
    if flip.failed_checks and d.kind is not FlipKind.NOISE:
        reason += f"; failed checks: {', '.join(flip.failed_checks[:4])}"
    return dataclasses.replace(
        flip,
        base_pass_rate=d.base_passes / d.base_samples if d.base_samples else None,
        head_pass_rate=d.head_passes / d.head_samples if d.head_samples else None,
        base_samples=d.base_samples,
        head_samples=d.head_samples,
        reason=reason,
        p_value=d.p_value,
        because=d.because,
    )


def _flip(kind: FlipKind, b: CaseStats | None, h: CaseStats | None, drifted: set[str]) -> Flip:
    tools = tuple(dict.fromkeys([*(h.tools if h else []), *(b.tools if b else [])]))
    rose = b is not None and h is not None and h.pass_rate > b.pass_rate
    side = b if kind.better or (kind is FlipKind.UNDECIDED and rose) else h
    checks = side.failed_checks if side is not None else ()
    extra = h.extra_samples if h else 0
    match kind:
        case FlipKind.NEW:
            reason = f"new case: {_counts(h)} passed"
        case FlipKind.REMOVED:
            reason = f"removed case: {_counts(b)} passed on base"
        case _:
            reason = f"base {_counts(b)} passed → head {_counts(h)}"
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


def _slice_deltas(
    base: SuiteStats, head: SuiteStats, moved: Collection[str]
) -> dict[str, dict[str, MetricDelta]]:
    out: dict[str, dict[str, MetricDelta]] = {}
    for name in sorted(set(base.slices) | set(head.slices)):
        b = base.slices.get(name)
        h = head.slices.get(name)
        out[name] = _deltas(b.metrics if b else {}, h.metrics if h else {}, (), moved)
    return out


def _deltas(
    base: Mapping[str, MetricStats],
    head: Mapping[str, MetricStats],
    significant: Collection[str],
    moved: Collection[str],
) -> dict[str, MetricDelta]:
    out: dict[str, MetricDelta] = {}
    for name in sorted(set(base) | set(head)):
        b = base.get(name)
        h = head.get(name)
        bm = None if b is None else b.mean
        hm = None if h is None else h.mean
        delta = None if bm is None or hm is None else round(hm - bm, 12)
        out[name] = MetricDelta(
            base=bm,
            head=hm,
            delta=delta,
            beyond_noise=_beyond_noise(name, bm, delta, h, significant, moved),
        )
    return out


def _beyond_noise(
    name: str,
    base: float | None,
    delta: float | None,
    head: MetricStats | None,
    significant: Collection[str],
    moved: Collection[str],
) -> bool:
    """The module docstring's rule."""
    if base is None or delta is None or abs(delta) < _EPS:
        return False
    if name in significant or name in moved:
        return True
    if head is not None and head.ci_low is not None and head.ci_high is not None:
        return bool(base < head.ci_low - _EPS or base > head.ci_high + _EPS)
    return abs(delta) >= MOVED


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
            ToolDrift(tool=name, change=change, diff=tuple(definition_diff(b, h)), flipped_cases=())
        )
    return out


def _definition_lines(t: ToolRef | None) -> list[str]:
    if t is None:
        return []
    text = jsonio.dumps({"description": t.description, "parameters": t.parameters}, indent=True)
    return text.decode().splitlines()


def definition_diff(b: ToolRef | None, h: ToolRef | None) -> list[str]:
    """A unified diff (1 line of context) of description and schema, at most 40 lines
    (also for other drift sources: ``gate.interop.mcp_tools``)."""
    lines = list(
        difflib.unified_diff(
            _definition_lines(b), _definition_lines(h), "base", "head", n=1, lineterm=""
        )
    )[2:]  # the ---/+++ header says nothing the report does not
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return lines
