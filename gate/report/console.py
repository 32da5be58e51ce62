"""A plain-text summary for a terminal (``toolgate report --format console``).

No colour codes (the output is deterministic and safe to pipe). Data strings are made
visible (``gate.report.escape.console_text``): a model's output cannot move the cursor,
clear the screen or print a line that looks like ours. Long lists stop at
:data:`MAX_ROWS` with a count of the rest (everything is in report.md).
"""

from __future__ import annotations

from gate.model import JUDGE_METRIC_PREFIX
from gate.report import fmt
from gate.report.escape import Escaper, calls_repr
from gate.report.markdown import HEADLINE_METRICS, _drop, _first_failing, _flips, status
from gate.report.redact import Redactor
from gate.results import Results

MAX_ROWS = 20


def render_console(results: Results, *, redactor: Redactor | None = None) -> str:
    esc = Escaper(redactor or Redactor(), limit=100)
    _, word = status(results)
    out: list[str] = []
    summary = results.verdict.summary if results.verdict else "scored only; no thresholds evaluated"
    out.append(
        f"ToolGate {esc.console(results.gate_name, 64)}: {word.upper()} — "
        f"{esc.console(summary, 300)}"
    )
    if results.run_error is not None:
        out.append("the run is not valid: it says nothing about the agent; first errors:")
        out.extend(f"  {esc.console(e, 300)}" for e in results.run_error.first_errors)
    if results.missing is not None:
        gone = results.missing
        why = ", ".join(f"{k} {n}" for k, n in gone.by_reason.items())
        out.append(f"missing case-samples: {gone.count} of {gone.planned} ({why})")
    cmp = results.comparison
    if cmp is not None:
        note = "" if cmp.comparable else f" (NOT comparable: {esc.console(cmp.note or '', 200)})"
        out.append(f"baseline: {esc.console(cmp.source, 200)}{note}")

    def section(title: str, rows: list[str]) -> None:
        if not rows:
            return
        out.append("")
        out.append(f"{title} ({len(rows)})")
        out.extend(f"  {r}" for r in rows[:MAX_ROWS])
        if len(rows) > MAX_ROWS:
            out.append(f"  … {len(rows) - MAX_ROWS} more in report.md")

    section(
        "hard failures",
        [
            f"✗ {h.kind} {esc.console(h.case_id, 80)}"
            f"{f' (line {h.line})' if h.line else ''} sample {h.sample}: "
            f"{esc.console(calls_repr(h.call), 100)}"
            for h in results.hard_failures
        ],
    )
    if results.verdict is not None:
        section(
            "gates",
            [
                f"{'✓' if g.passed else '✗'} {esc.console(g.metric, 80)}"
                f"{f' [{esc.console(g.slice, 40)}]' if g.slice else ''} = {fmt.num(g.value)} "
                f"({'≥' if g.op == 'min' else '≤'} {fmt.num(g.threshold)})"
                for g in results.verdict.gates
            ],
        )
    deltas = cmp.metrics if cmp is not None and cmp.comparable else {}
    names = [m for m in HEADLINE_METRICS if m in results.metrics]
    names += sorted(m for m in results.metrics if m.startswith(JUDGE_METRIC_PREFIX))
    width = max((len(m) for m in names), default=0)
    rows = []
    for m in names:
        head = results.metrics[m].mean
        d = deltas.get(m)
        judge = "  (judge, not gating)" if m.startswith(JUDGE_METRIC_PREFIX) else ""
        if d is not None:
            rows.append(
                f"{m:<{width}}  {fmt.num(d.base)} → {fmt.num(head)}  "
                f"{fmt.delta(m, d.delta, plain=True)}{judge}"
            )
        else:
            rows.append(f"{m:<{width}}  {fmt.num(head)}{judge}")
    section("metrics" + (" (base → head)" if deltas else ""), rows)
    cases = {c.id: c for c in results.cases}
    regressions = []
    for f in sorted(_flips(results, "regression"), key=lambda f: (-_drop(f), f.case_id)):
        sample = _first_failing(cases.get(f.case_id))
        checks = f.failed_checks or (sample.failed_checks if sample else [])
        ev = sample.evidence if sample else {}
        detail = ""
        if "expected" in ev or "actual" in ev:
            detail = (
                f" expected {esc.console(calls_repr(ev.get('expected')), 80)};"
                f" actual {esc.console(calls_repr(ev.get('actual')), 80)}"
            )
        regressions.append(
            f"{esc.console(f.case_id, 80)}  "
            f"{fmt.rate_fraction(f.base_pass_rate, f.base_samples)} → "
            f"{fmt.rate_fraction(f.head_pass_rate, f.head_samples)}  "
            f"[{', '.join(esc.console(c, 40) for c in checks)}]{detail}"
        )
    section("regressions", regressions)
    section(
        "fixed",
        [
            f"{esc.console(f.case_id, 80)}  {fmt.rate_fraction(f.base_pass_rate, f.base_samples)}"
            f" → {fmt.rate_fraction(f.head_pass_rate, f.head_samples)}"
            for f in sorted(_flips(results, "fix"), key=lambda f: f.case_id)
        ],
    )
    if cmp is not None:
        section(
            "tool-definition drift",
            [
                f"{esc.console(d.tool, 80)} {d.change}; flipped: "
                f"{', '.join(esc.console(c, 60) for c in d.flipped_cases) or 'none'}"
                for d in cmp.tool_drift
            ],
        )
    section(
        "flaky",
        [
            f"{esc.console(c.id, 80)}  {fmt.rate_fraction(c.pass_rate, len(c.samples))}"
            for c in results.cases
            if c.flaky
        ],
    )
    n_pass = sum(1 for c in results.cases if c.passed)
    ds = results.dataset
    out.append("")
    out.append(
        f"cases: {len(results.cases)} ({n_pass} pass, {len(results.cases) - n_pass} fail) · "
        f"samples {results.samples} · dataset {esc.console(ds.path, 120)}"
        f"{'@' + esc.console(ds.version, 40) if ds.version else ''} sha256 {ds.sha256[:12]}"
    )
    return (redactor or Redactor()).redact("\n".join(out)) + "\n"
