"""The Markdown reports: the PR comment and the full report (report.md, step summary).

Both are rendered from a :class:`gate.results.Results` alone — never recomputing a score —
by the same section builders, in the order issue 6 sets for the comment:

1. the verdict and why, in one line (then a note when the baseline is not comparable);
2. hard failures (must-not-call first);
3. the metric table base → head with deltas, arrows and the threshold each gate used;
4. regressed cases (expected vs actual calls, the failing check, pass rates over samples);
5. tool-definition drift (changed tools, a compact diff, the flipped cases using them);
6. fixed cases; flaky cases and changes within noise apart; new and removed cases;
7. per-tool recall with a bar chart;
8. judge scores, "reported, not gating";
9. a collapsible table of every case;
10. run information: dataset version and hash, agent, samples, usage base → head, timing.

The full report adds every metric, the gates with their reasons, slices, the confusion
pairs, malformed-call classes, per-sample evidence of every failing case and the notices.
Every data string goes through :class:`gate.report.escape.Escaper`; sizes are kept by
:mod:`gate.report.fit`.
"""

from __future__ import annotations

import enum
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gate.model import JUDGE_METRIC_PREFIX
from gate.report import evidence, fmt
from gate.report.escape import Escaper, calls_repr, json_compact
from gate.report.fit import Block, LazyRows
from gate.results import CaseResult, Flip, HardFailureResult, MetricDelta, Results, SampleResult
from gate.scorers.registry import HEADLINE_METRICS, METRICS

__all__ = ["HEADLINE_METRICS", "Style", "build", "status"]

MOVED = 0.01
"""A metric whose value moved at least this much is shown in the comment's table."""

HARD_KIND_ORDER = {"must_not_call": 0, "arg_scope": 1, "required_before": 2}


class Style(enum.Enum):
    COMMENT = "comment"
    FULL = "full"


def status(results: Results) -> tuple[str, str]:
    """(emoji, word) of the verdict."""
    if results.run_error is not None:
        return "⛔", "error"
    if results.verdict is None:
        return "⚪", "not gated"
    return ("✅", "passed") if results.verdict.passed else ("❌", "failed")


def build(results: Results, style: Style, esc: Escaper) -> list[Block]:
    """Every block of the report, in order (the caller fits them into a size)."""
    full = style is Style.FULL
    blocks: list[Block] = [_verdict(results, style, esc)]
    if results.run_error is not None:  # nothing was decided: no regressions to list
        return [*blocks, run_not_valid(results, esc), *_run_info(results, esc, full)]
    blocks += _missing(results, esc)
    blocks += _hard_failures(results, esc, full)
    blocks += _metrics(results, esc, full)
    if full:
        blocks += _gates(results, esc)
    blocks += _regressions(results, esc, full)
    if not full:
        blocks += _failing_without_baseline(results, esc)
    blocks += _drift(results, esc, full)
    blocks += _fixed(results, esc)
    blocks += _flaky(results, esc)
    blocks += _new_removed(results, esc)
    blocks += _per_tool(results, esc)
    if full:
        blocks += _slices(results, esc)
        blocks += _confusion(results, esc)
        blocks += _failing_cases(results, esc)
    blocks += _judge(results, esc)
    blocks += _all_cases(results, esc)
    blocks += _run_info(results, esc, full)
    return blocks


# ─── 1. verdict ───────────────────────────────────────────────────────────────


def _verdict(results: Results, style: Style, esc: Escaper) -> Block:
    emoji, word = status(results)
    name = esc.code(results.gate_name, 64, table=False)
    if results.verdict is None:
        why = "scored only; no thresholds were evaluated"
    else:
        why = esc.text(_strip_word(results.verdict.summary), 400) or word
    level = "##" if style is Style.COMMENT else "#"
    lines = [f"{level} {emoji} ToolGate {name} {word} — {why}", ""]
    cmp = results.comparison
    if cmp is None:
        lines += ["_No baseline: showing this run only._", ""]
    else:
        src = esc.text(cmp.source, 200)
        if not cmp.comparable:
            note = f" — {esc.text(cmp.note, 300)}" if cmp.note else ""
            lines += [f"> ⚠️ The baseline ({src}) is not comparable with this run{note}.", ""]
        else:
            lines += [f"_Compared with {src}._", ""]
    return Block(head=lines)


def run_not_valid(results: Results, esc: Escaper) -> Block:
    """The fixed section of a run whose verdict is "error": why, the missing samples, the
    first error lines."""
    err = results.run_error
    assert err is not None
    lines = [
        "**This run is not valid: it says nothing about the agent.** "
        f"{esc.text(err.reason, 400)}. Fix the cause and run it again.",
        "",
    ]
    lines += _missing_lines(results)
    if err.first_errors:
        lines += ["First errors:", ""]
        lines += [f"- {esc.code(e, 300, table=False)}" for e in err.first_errors]
        lines += [""]
    return Block(head=lines)


def _missing_lines(results: Results) -> list[str]:
    gone = results.missing
    if gone is None:
        return []
    why = ", ".join(f"`{k}` {n}" for k, n in gone.by_reason.items())
    return [
        f"Missing case-samples: {gone.count} of {gone.planned} ({why}) — failed by the "
        "infrastructure after their retries; not counted as failures or passes.",
        "",
    ]


def _missing(results: Results, esc: Escaper) -> list[Block]:
    lines = _missing_lines(results)
    return [Block(head=lines)] if lines else []


_VERDICT_WORD = re.compile(r"^\s*(?:pass(?:ed)?|fail(?:ed)?|error)\s*(?:—|-|:)\s*", re.IGNORECASE)


def _strip_word(summary: str) -> str:
    """ "FAIL — x" → "x": the heading already says passed or failed."""
    return _VERDICT_WORD.sub("", summary, count=1)


# ─── 2. hard failures ────────────────────────────────────────────────────────


def _hard_failures(results: Results, esc: Escaper, full: bool) -> list[Block]:
    if not results.hard_failures:
        return []
    groups: dict[tuple[str, str, str], list[HardFailureResult]] = defaultdict(list)
    for hf in results.hard_failures:
        groups[(hf.kind, hf.case_id, str(hf.call.get("name", "?")))].append(hf)
    ordered = sorted(groups.items(), key=lambda kv: (HARD_KIND_ORDER.get(kv[0][0], 9), kv[0]))
    lim = 300 if full else 120

    def row(group: tuple[tuple[str, str, str], list[HardFailureResult]]) -> str:
        (kind, case_id, _), items = group
        first = items[0]
        samples = ", ".join(str(s) for s in sorted({h.sample for h in items}))
        return (
            f"| {_case_cell(case_id, first.line, esc)} | {_kind_label(kind)} | {samples} "
            f"| {esc.code(_call_of(first.call), lim)} | {esc.text(first.message, lim)} |"
        )

    rows = LazyRows(ordered, row)
    n = len(results.hard_failures)
    head = [
        f"### 🛑 Hard failures ({n}) — these fail the gate whatever the averages",
        "",
        "| Case | Kind | Samples | Call | Why |",
        "|---|---|---|---|---|",
    ]
    return [Block(head, rows, [""], keep=10, cut=7, what="hard failures")]


def _kind_label(kind: str) -> str:
    return {
        "must_not_call": "must-not-call",
        "arg_scope": "argument scope",
        "required_before": "required step missing",
    }.get(kind, kind)


def _call_of(call: Mapping[str, Any]) -> str:
    return calls_repr(call) if call else "—"


# ─── 3. metrics ──────────────────────────────────────────────────────────────


def _metrics(results: Results, esc: Escaper, full: bool) -> list[Block]:
    cmp = results.comparison
    deltas: Mapping[str, MetricDelta] = cmp.metrics if cmp is not None and cmp.comparable else {}
    gates = results.verdict.gates if results.verdict else []
    gate_of: dict[str, list[Any]] = defaultdict(list)
    for g in gates:
        if g.slice is None:
            gate_of[g.metric].append(g)
    names: list[str] = []

    def add(metric: str) -> None:
        if metric not in names and not metric.startswith(JUDGE_METRIC_PREFIX):
            names.append(metric)

    for g in gates:
        if g.slice is None:
            add(g.metric)
    if full:
        for m in METRICS:
            if m in results.metrics:
                add(m)
        for m in sorted(results.metrics):
            add(m)
    else:
        for m in HEADLINE_METRICS:
            if m in results.metrics:
                add(m)
        for m in sorted(deltas):
            d = deltas[m].delta
            if d is not None and abs(d) >= MOVED and m in results.metrics:
                add(m)
    has_base = bool(deltas)
    if has_base:
        head = ["| Metric | Base | Head | Δ | Gate |", "|---|--:|--:|--:|---|"]
    else:
        head = ["| Metric | Value | Gate |", "|---|--:|---|"]
    rows = []
    for m in names:
        stat = results.metrics.get(m)
        value = stat.mean if stat else None
        gate_cell = " ".join(_gate_cell(g) for g in gate_of.get(m, [])) or ""
        label = esc.code(m, 80)
        if full and stat is not None and stat.ci_low is not None and stat.ci_high is not None:
            value_cell = f"{fmt.num(value)} [{fmt.num(stat.ci_low)}, {fmt.num(stat.ci_high)}]"
        else:
            value_cell = fmt.num(value)
        if has_base:
            md = deltas.get(m)
            base = fmt.num(md.base) if md else "—"
            delta = fmt.delta(m, md.delta) if md else "—"
            rows.append(f"| {label} | {base} | {value_cell} | {delta} | {gate_cell} |")
        else:
            rows.append(f"| {label} | {value_cell} | {gate_cell} |")
    for g in gates:
        if g.slice is not None:
            label = f"{esc.code(g.metric, 80)} on {esc.code(g.slice, 60)}"
            if has_base:
                assert cmp is not None
                md = cmp.slice_metrics.get(g.slice, {}).get(g.metric)
                base = fmt.num(md.base) if md else "—"
                delta = fmt.delta(g.metric, md.delta) if md else "—"
                rows.append(
                    f"| {label} | {base} | {fmt.num(g.value)} | {delta} | {_gate_cell(g)} |"
                )
            else:
                rows.append(f"| {label} | {fmt.num(g.value)} | {_gate_cell(g)} |")
    if not rows:
        return []
    title = "### Metrics" + (" (base → head)" if has_base else "")
    if full and has_base is False and cmp is not None and not cmp.comparable:
        title += " — baseline not comparable"
    return [Block([title, "", *head], rows, [""])]


def _gate_cell(g: Any) -> str:
    op = "≥" if g.op == "min" else "≤"
    return f"{'✅' if g.passed else '❌'} {op} {fmt.num(g.threshold)}"


def _gates(results: Results, esc: Escaper) -> list[Block]:
    v = results.verdict
    if v is None:
        return []
    blocks: list[Block] = []
    if v.gates:
        rows = []
        for g in v.gates:
            where = f" on {esc.code(g.slice, 60)}" if g.slice else ""
            failing = ", ".join(esc.code(c, 60) for c in g.failing_cases[:20])
            if len(g.failing_cases) > 20:
                failing += f" … (+{len(g.failing_cases) - 20})"
            rows.append(
                f"| {esc.code(g.metric, 80)}{where} | {_gate_cell(g)} | {fmt.num(g.value)} "
                f"| {esc.text(g.reason, 300)} | {failing} |"
            )
        head = [
            "### Gates",
            "",
            "| Gate | Threshold | Value | Reason | Failing cases |",
            "|---|---|--:|---|---|",
        ]
        blocks.append(Block(head, rows, [""]))
    var = v.variance
    lines = ["### Variance guard", ""]
    bits = [f"- {'✅ within limits' if var.passed else '❌ too noisy'}"]
    if var.observed_max_std is not None:
        worst = f" ({esc.code(var.worst_metric, 80, table=False)})" if var.worst_metric else ""
        limit = f" (limit {fmt.num(var.max_std)})" if var.max_std is not None else ""
        bits.append(f"- largest std over samples: {fmt.num(var.observed_max_std)}{worst}{limit}")
    limit = f" (limit {fmt.num(var.max_flaky_share)})" if var.max_flaky_share is not None else ""
    bits.append(f"- flaky share: {fmt.num(var.flaky_share)}{limit}")
    bits += [f"- {esc.text(r, 300)}" for r in var.reasons]
    if v.reasons:
        bits += ["", "**Reasons**", ""] + [f"- {esc.text(r, 400)}" for r in v.reasons]
    blocks.append(Block([*lines, *bits, ""]))
    return blocks


# ─── 4. regressions (with evidence) ──────────────────────────────────────────


def _flips(results: Results, kind: str) -> list[Flip]:
    if results.comparison is None:
        return []
    return [f for f in results.comparison.flips if f.kind == kind]


def _drop(f: Flip) -> float:
    return (f.base_pass_rate or 0.0) - (f.head_pass_rate or 0.0)


def _case_index(results: Results) -> dict[str, CaseResult]:
    return {c.id: c for c in results.cases}


def _drift_by_case(results: Results) -> dict[str, list[str]]:
    """Case id → drifted tools it uses (from the drift record, or the case's tool list)."""
    out: dict[str, list[str]] = defaultdict(list)
    if results.comparison is None:
        return out
    drifted = {d.tool for d in results.comparison.tool_drift}
    for d in results.comparison.tool_drift:
        for cid in d.flipped_cases:
            if d.tool not in out[cid]:
                out[cid].append(d.tool)
    for f in results.comparison.flips:
        for t in f.drifted_tools:
            if t not in out[f.case_id]:
                out[f.case_id].append(t)
    for c in results.cases:
        for t in c.tools:
            if t in drifted and t not in out[c.id]:
                out[c.id].append(t)
    return out


def _first_failing(case: CaseResult | None) -> SampleResult | None:
    if case is None:
        return None
    failing = [s for s in case.samples if not s.passed]
    return min(failing, key=lambda s: s.sample) if failing else None


def _regressions(results: Results, esc: Escaper, full: bool) -> list[Block]:
    flips = sorted(_flips(results, "regression"), key=lambda f: (-_drop(f), f.case_id))
    if not flips:
        cmp = results.comparison
        if cmp is not None and cmp.comparable and not _flips(results, "fix"):
            return [Block(["_No flips: no case changed outcome between base and head._", ""])]
        return []
    cases = _case_index(results)
    drift = _drift_by_case(results)
    lim = 240 if full else 100

    def row(f: Flip) -> str:
        case = cases.get(f.case_id)
        sample = _first_failing(case)
        ev = sample.evidence if sample else {}
        checks = f.failed_checks or (list(sample.failed_checks) if sample else [])
        why = _why(ev, sample, checks, esc, lim)
        if f.reason and not why:
            why = [esc.text(f.reason, lim)]
        if drift.get(f.case_id):
            tools = ", ".join(esc.code(t, 60) for t in drift[f.case_id])
            why.append(f"🔧 tool definition changed: {tools}")
        return (
            f"| {_case_cell(f.case_id, f.line or (case.line if case else None), esc)} "
            f"| {_rates(f)} | {_checks(checks, esc)} "
            f"| {esc.code(calls_repr(ev.get('expected')), lim) if 'expected' in ev else '—'} "
            f"| {esc.code(calls_repr(ev.get('actual')), lim) if 'actual' in ev else '—'} "
            f"| {'<br>'.join(why) or '—'} |"
        )

    rows = LazyRows(flips, row)
    head = [
        f"### 🔻 Regressions ({len(flips)}) — passed on base, fail on head",
        "",
        "| Case | Passing samples (base → head) | Failing checks | Expected | Actual | Why |",
        "|---|---|---|---|---|---|",
    ]
    return [Block(head, rows, [""], keep=10, cut=6, what="regressions")]


def _failing_without_baseline(results: Results, esc: Escaper) -> list[Block]:
    """With no comparable baseline there are no flips: list the cases that fail on every
    sample instead (flaky ones are listed apart), with the same evidence as regressions."""
    cmp = results.comparison
    if cmp is not None and cmp.comparable:
        return []
    # Flaky cases have their own section ("flaky cases apart").
    failing = sorted(
        (c for c in results.cases if not c.passed and not c.flaky),
        key=lambda c: (c.pass_rate, c.id),
    )
    if not failing:
        return []
    lim = 100

    def row(c: CaseResult) -> str:
        sample = _first_failing(c)
        ev = sample.evidence if sample else {}
        checks = list(sample.failed_checks) if sample else []
        why = _why(ev, sample, checks, esc, lim)
        return (
            f"| {_case_cell(c.id, c.line, esc)} | {fmt.rate_fraction(c.pass_rate, len(c.samples))} "
            f"| {_checks(checks, esc)} "
            f"| {esc.code(calls_repr(ev['expected']), lim) if 'expected' in ev else '—'} "
            f"| {esc.code(calls_repr(ev['actual']), lim) if 'actual' in ev else '—'} "
            f"| {'<br>'.join(why) or '—'} |"
        )

    head = [
        f"### ❌ Failing cases ({len(failing)}) — fail on every sample",
        "",
        "| Case | Passing samples | Failing checks | Expected | Actual | Why |",
        "|---|---|---|---|---|---|",
    ]
    return [Block(head, LazyRows(failing, row), [""], keep=10, cut=6, what="failing cases")]


def _case_cell(case_id: str, line: int | None, esc: Escaper) -> str:
    where = f" <sub>line {line}</sub>" if line else ""
    return f"{esc.code(case_id, 80)}{where}"


def _rates(f: Flip) -> str:
    base = fmt.rate_fraction(f.base_pass_rate, f.base_samples)
    head = fmt.rate_fraction(f.head_pass_rate, f.head_samples)
    return f"{base} → {head}"


def _checks(checks: Iterable[str], esc: Escaper) -> str:
    return ", ".join(esc.code(c, 60) for c in checks) or "—"


def _why(
    ev: Mapping[str, Any],
    sample: SampleResult | None,
    checks: Sequence[str],
    esc: Escaper,
    lim: int,
) -> list[str]:
    """Short rendered reasons from a sample's evidence (``gate.report.evidence``)."""
    out: list[str] = []
    for label, value, prose in evidence.items(ev, sample.error if sample else None):
        parts = [label] if label else []
        if value is not None:
            parts.append(esc.code(value, lim))
        if prose:
            parts.append(("— " if value is not None else "") + esc.text(prose, lim))
        out.append(" ".join(parts))
    if not out and sample is not None:
        for c in checks:
            reason = sample.reasons.get(c)
            if reason:
                out.append(esc.text(reason, lim))
    return out


# ─── 5. tool-definition drift ────────────────────────────────────────────────


def _drift(results: Results, esc: Escaper, full: bool) -> list[Block]:
    if results.comparison is None or not results.comparison.tool_drift:
        return []
    max_lines = 200 if full else 30
    rows = []
    for d in sorted(results.comparison.tool_drift, key=lambda d: d.tool):
        flipped = ", ".join(esc.code(c, 60) for c in d.flipped_cases[:20]) or "none"
        if len(d.flipped_cases) > 20:
            flipped += f" … (+{len(d.flipped_cases) - 20})"
        parts = [f"**{esc.code(d.tool, 80, table=False)}** {d.change} · flipped cases: {flipped}"]
        if d.diff:
            parts.append(_fenced(d.diff[:max_lines], esc, "diff"))
            if len(d.diff) > max_lines:
                parts.append(f"_… {len(d.diff) - max_lines} more diff lines in the full report._")
        rows.append("\n".join(parts) + "\n")
    head = [
        f"### 🔧 Tool-definition drift ({len(rows)})",
        "",
        "The model saw different tool definitions on base and head; a one-word change "
        "to a description can change which tool it picks.",
        "",
    ]
    return [Block(head, rows, [""], keep=5, cut=4, what="changed tools")]


def _fenced(lines: Sequence[str], esc: Escaper, lang: str) -> str:
    """A fenced block of data lines: each line made visible and truncated, and a fence
    longer than any backtick run inside, so the data cannot close it."""
    body = [esc.console(line, 300) for line in lines]
    longest = max((len(r) for line in body for r in _runs(line, "`")), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}{lang}", *body, fence])


def _runs(s: str, ch: str) -> list[str]:
    out, cur = [], ""
    for c in s:
        if c == ch:
            cur += c
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


# ─── 6. fixed, flaky, new/removed ────────────────────────────────────────────


def _fixed(results: Results, esc: Escaper) -> list[Block]:
    flips = sorted(_flips(results, "fix"), key=lambda f: (_drop(f), f.case_id))
    if not flips:
        return []
    rows = LazyRows(flips, lambda f: f"| {_case_cell(f.case_id, f.line, esc)} | {_rates(f)} |")
    head = [
        f"### ✅ Fixed ({len(flips)}) — failed on base, pass on head",
        "",
        "| Case | Passing samples (base → head) |",
        "|---|---|",
    ]
    return [Block(head, rows, [""], keep=0, cut=3, what="fixed cases")]


def _flaky(results: Results, esc: Escaper) -> list[Block]:
    noise = {f.case_id: f for f in _flips(results, "noise")}
    flipped = {f.case_id for f in _flips(results, "regression") + _flips(results, "fix")}
    flaky = [c for c in results.cases if (c.flaky or c.id in noise) and c.id not in flipped]
    if not flaky:
        return []

    def row(c: CaseResult) -> str:
        checks = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        f = noise.get(c.id)
        change = _rates(f) if f else fmt.rate_fraction(c.pass_rate, len(c.samples))
        return f"| {_case_cell(c.id, c.line, esc)} | {change} | {_checks(checks, esc)} |"

    rows = LazyRows(sorted(flaky, key=lambda c: (c.pass_rate, c.id)), row)
    head = [
        f"### 🎲 Flaky or within noise ({len(rows)}) — not counted as flips",
        "",
        "Cases that pass on some samples and fail on others, or whose change is within what "
        "the sample count can tell apart."
        + (f" Flip rule: {esc.text(_rule(results), 300)}" if _rule(results) else ""),
        "",
        "| Case | Passing samples | Checks failing on some samples |",
        "|---|---|---|",
    ]
    return [Block(head, rows, [""], keep=0, cut=3, what="flaky cases")]


def _rule(results: Results) -> str:
    return results.comparison.rule if results.comparison is not None else ""


def _new_removed(results: Results, esc: Escaper) -> list[Block]:
    new = _flips(results, "new")
    removed = _flips(results, "removed")
    if not new and not removed:
        return []
    rows = [
        f"| {_case_cell(f.case_id, f.line, esc)} | new | "
        f"{fmt.rate_fraction(f.head_pass_rate, f.head_samples)} |"
        for f in sorted(new, key=lambda f: f.case_id)
    ]
    rows += [
        f"| {esc.code(f.case_id, 80)} | removed | — |"
        for f in sorted(removed, key=lambda f: f.case_id)
    ]
    head = [
        f"### New and removed cases ({len(new)} new, {len(removed)} removed)",
        "",
        "| Case | Change | Passing samples (head) |",
        "|---|---|---|",
    ]
    return [Block(head, rows, [""], keep=0, cut=3, what="new or removed cases")]


# ─── 7. per-tool recall ──────────────────────────────────────────────────────


def _per_tool(results: Results, esc: Escaper) -> list[Block]:
    if not results.per_tool:
        return []
    items = sorted(
        results.per_tool.items(),
        key=lambda kv: (kv[1].recall if kv[1].recall is not None else 2.0, kv[0]),
    )
    rows = LazyRows(
        items,
        lambda kv: (
            f"| {esc.code(kv[0], 80)} | `{fmt.bar(kv[1].recall)}` {fmt.num(kv[1].recall)} "
            f"| {kv[1].matched}/{kv[1].expected} | {kv[1].called} |"
        ),
    )
    head = [
        "### Per-tool recall",
        "",
        "| Tool | Recall | Matched / expected | Called |",
        "|---|---|--:|--:|",
    ]
    return [Block(head, rows, [""], keep=0, cut=2, what="tools")]


# ─── full report only: slices, confusion, failing cases ─────────────────────


def _slices(results: Results, esc: Escaper) -> list[Block]:
    if not results.slices:
        return []
    shown = ["tool_selection_f1", "call_accuracy", "schema_validity", "must_not_call_violations"]
    head = [
        "### Slices",
        "",
        "| Slice | Cases | Pass rate | " + " | ".join(shown) + " |",
        "|---|--:|--:|" + "--:|" * len(shown),
    ]
    rows = []
    for name in sorted(results.slices):
        s = results.slices[name]
        vals = " | ".join(fmt.num(s.metrics[m].mean) if m in s.metrics else "—" for m in shown)
        rows.append(f"| {esc.code(name, 80)} | {s.cases} | {fmt.num(s.pass_rate)} | {vals} |")
    return [Block(head, rows, [""], keep=0, cut=2, what="slices")]


def _confusion(results: Results, esc: Escaper) -> list[Block]:
    blocks: list[Block] = []
    pairs = [
        (n, exp, act)
        for exp, row in results.confusion.items()
        for act, n in row.items()
        if exp != act and n
    ]
    if pairs:
        pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
        rows = [f"| {esc.code(e, 80)} | {esc.code(a, 80)} | {n} |" for n, e, a in pairs]
        head = [
            "### Tool confusion (single-tool cases)",
            "",
            "| Expected | Called instead | Times |",
            "|---|---|--:|",
        ]
        blocks.append(Block(head, rows, [""], keep=10, cut=2, what="confusion pairs"))
    if results.malformed:
        rows = [
            f"| {esc.code(k, 80)} | {n} |"
            for k, n in sorted(results.malformed.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        head = ["### Malformed calls", "", "| Class | Calls |", "|---|--:|"]
        blocks.append(Block(head, rows, [""]))
    return blocks


def _failing_cases(results: Results, esc: Escaper) -> list[Block]:
    failing = [c for c in results.cases if not c.passed]
    if not failing:
        return []

    def row(c: CaseResult) -> str:
        parts = [
            f"- {_case_cell(c.id, c.line, esc)} — "
            f"{fmt.rate_fraction(c.pass_rate, len(c.samples))} samples pass"
        ]
        for numbers, lines in group_samples(c, lambda s: _sample_lines(s, esc)):
            label = "sample" if len(numbers) == 1 else "samples"
            parts.append(f"  - {label} {', '.join(map(str, numbers))}: {lines[0]}")
            parts += [f"    - {line}" for line in lines[1:]]
        return "\n".join(parts)

    rows = LazyRows(failing, row)
    head = [f"### Failing cases ({len(failing)}), with evidence", ""]
    # Cut after the all-cases table (rank 1): evidence says more than a list of ids.
    return [Block(head, rows, [""], keep=20, cut=2, what="failing cases")]


def _sample_lines(s: SampleResult, esc: Escaper) -> list[str]:
    ev = s.evidence
    lines = [_checks(s.failed_checks, esc)]
    if "expected" in ev:
        lines.append(f"expected {esc.code(calls_repr(ev['expected']), 300, table=False)}")
    if "actual" in ev:
        lines.append(f"actual {esc.code(calls_repr(ev['actual']), 300, table=False)}")
    lines += _why(ev, s, s.failed_checks, esc, 300)
    return lines


def group_samples(
    case: CaseResult, describe: Callable[[SampleResult], list[str]]
) -> list[tuple[list[int], list[str]]]:
    """Failing samples with identical descriptions grouped (sample numbers ascending),
    groups in order of their first sample: three identical failures read as one."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for s in sorted(case.samples, key=lambda s: s.sample):
        if not s.passed:
            groups.setdefault(tuple(describe(s)), []).append(s.sample)
    return [(numbers, list(lines)) for lines, numbers in groups.items()]


# ─── 8. judge ─────────────────────────────────────────────────────────────────


def _judge(results: Results, esc: Escaper) -> list[Block]:
    names = sorted(m for m in results.metrics if m.startswith(JUDGE_METRIC_PREFIX))
    cmp = results.comparison
    deltas = cmp.metrics if cmp is not None and cmp.comparable else {}
    extras: list[str] = []
    judge = results.judge or {}
    for key in sorted(judge):
        value = judge[key]
        if isinstance(value, bool | int | float | str) or value is None:
            shown = fmt.num(value) if isinstance(value, float) else str(value)
            extras.append(
                f"- {esc.code(key, 60, table=False)}: {esc.code(shown, 120, table=False)}"
            )
    if not names and not extras:
        return []
    rows = []
    for m in names:
        stat = results.metrics[m]
        d = deltas.get(m)
        base = fmt.num(d.base) if d else "—"
        rows.append(
            f"| {esc.code(m[len(JUDGE_METRIC_PREFIX) :], 80)} | {base} | {fmt.num(stat.mean)} "
            f"| {fmt.delta(m, d.delta, plain=True) if d else '—'} | {stat.n} |"
        )
    head = [
        "### ⚖️ Judge scores — reported, not gating",
        "",
        "An LLM judge's scores; they never change the verdict.",
        "",
    ]
    if rows:
        head += ["| Rubric | Base | Head | Δ | Judged |", "|---|--:|--:|--:|--:|"]
    tail = ["", *extras, ""] if extras else [""]
    return [Block(head, rows, tail, keep=0, cut=3, what="rubrics")]


# ─── 9. all cases ─────────────────────────────────────────────────────────────


def _all_cases(results: Results, esc: Escaper) -> list[Block]:
    if not results.cases:
        return []

    def row(c: CaseResult) -> str:
        mark = "✅" if c.passed else "❌"
        flaky = "🎲" if c.flaky else ""
        checks = sorted({x for s in c.samples if not s.passed for x in s.failed_checks})
        return (
            f"| {esc.code(c.id, 80)} | {mark} | {fmt.rate_fraction(c.pass_rate, len(c.samples))} "
            f"| {flaky} | {_checks(checks, esc)} | {c.line or ''} |"
        )

    rows = LazyRows(results.cases, row)
    n_pass = sum(1 for c in results.cases if c.passed)
    head = [
        "<details>",
        f"<summary>All cases ({len(results.cases):,}: {n_pass:,} pass, "
        f"{len(results.cases) - n_pass:,} fail)</summary>",
        "",
        "| Case | Result | Passing samples | Flaky | Failing checks | Line |",
        "|---|---|---|---|---|--:|",
    ]
    return [Block(head, rows, ["", "</details>", ""], keep=0, cut=1, what="cases", drop_whole=True)]


# ─── 10. run information ─────────────────────────────────────────────────────


def _run_info(results: Results, esc: Escaper, full: bool) -> list[Block]:
    ds = results.dataset
    version = esc.code(ds.version, 60, table=False) if ds.version else "unversioned"
    lines = [
        "<details>",
        "<summary>Run information</summary>",
        "",
        f"- dataset: {esc.code(ds.path, 200, table=False)} {version}, "
        f"sha256 {esc.code(ds.sha256[:16], 16, table=False)}…, {ds.cases:,} cases",
        f"- samples per case: {results.samples}; seed: {results.seed}",
    ]
    if results.shard is not None:
        lines.append(f"- shard: {results.shard.index}/{results.shard.count}")
    if results.confirm is not None and results.confirm.extra_samples:
        c = results.confirm
        lines.append(
            f"- confirmation: {c.extra_samples} extra samples on {len(c.cases)} apparent flips "
            f"(at most {c.max_extra_samples})"
        )
    if results.advisor is not None:
        lines.append(f"- sensitivity: {esc.text(results.advisor.summary, 400)}")
    if results.agent:
        agent = json_compact(results.agent)
        lines.append(f"- agent: {esc.code(agent, 600 if full else 300, table=False)}")
    base_usage = results.comparison.base_usage if results.comparison else {}
    for key in sorted(set(results.usage) | set(base_usage)):
        head = results.usage.get(key)
        base = base_usage.get(key)
        label = esc.code(key, 60, table=False)
        if base_usage:
            lines.append(
                f"- {label}: {fmt.count(base)} → {fmt.count(head)}{fmt.pct_change(base, head)}"
            )
        else:
            lines.append(f"- {label}: {fmt.count(head)}")
    for key in sorted(results.timing):
        lines.append(
            f"- {esc.code(key, 60, table=False)}: {_timing_value(key, results.timing[key], esc)}"
        )
    if results.notices:
        lines += ["", "**Notices**", ""]
        lines += [f"- {esc.text(n, 400)}" for n in results.notices[: 200 if full else 20]]
        if len(results.notices) > (200 if full else 20):
            lines.append(f"- … {len(results.notices) - (200 if full else 20)} more")
    lines += [
        "",
        f"<sub>ToolGate {esc.text(results.toolgate_version, 40)}</sub>",
        "",
        "</details>",
        "",
    ]
    return [Block(lines)]


def _timing_value(key: str, value: Any, esc: Escaper) -> str:
    unit = " ms" if key.endswith("_ms") else " s" if key.endswith("_s") else ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{value:,.1f}{unit}" if isinstance(value, float) else f"{value:,}{unit}"
    if isinstance(value, Mapping):
        parts = []
        for k in sorted(value):
            v = value[k]
            if isinstance(v, int | float) and not isinstance(v, bool):
                parts.append(f"{esc.text(str(k), 40)} {v:,.1f}{unit}")
        if parts:
            return " · ".join(parts)
    return esc.code(json_compact(value) if not isinstance(value, str) else value, 120, table=False)
