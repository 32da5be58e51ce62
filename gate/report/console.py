"""A plain-text summary for a terminal (``toolgate report --format console``).

No colour codes (the output is deterministic and safe to pipe). Data strings are made
visible (``gate.report.escape.console_text``): a model's output cannot move the cursor,
clear the screen or print a line that looks like ours. Long lists stop at
:data:`MAX_ROWS` with a count of the rest (everything is in report.md).
"""

from __future__ import annotations

from gate.model import JUDGE_METRIC_PREFIX, new_failing
from gate.report import fmt
from gate.report.compared import case_changes_sentence
from gate.report.escape import Escaper, calls_repr
from gate.report.markdown import (
    HEADLINE_METRICS,
    _drop,
    _first_failing,
    _flips,
    _hard_kinds,
    _numbers,
    hard_samples,
    headline,
    samples_of,
    setup_sentence,
    short_history_warning,
    status,
)
from gate.report.redact import Redactor
from gate.report.sentences import Code, Sentence, check_sentences, turn_label
from gate.results import (
    GateResult,
    HardFailureResult,
    Results,
    SampleResult,
    failed_by_agent,
    not_sampled,
    pass_hat_k,
    sampled,
)
from gate.scorers.registry import COST_METRICS

MAX_ROWS = 20


def render_console(results: Results, *, redactor: Redactor | None = None) -> str:
    esc = Escaper(redactor or Redactor(), limit=100)
    _, word = status(results)
    out: list[str] = []
    summary = "".join(str(p) for p in headline(results))
    out.append(
        f"ToolGate {esc.console(results.gate_name, 64)}: {word.upper()} — "
        f"{esc.console(summary, 400)}"
    )
    if results.run_error is not None:
        err = results.run_error
        if err.hint:
            out.append(f"what to do: {esc.console(err.hint, 400)}")
        out.append("the run is not valid: it says nothing about the agent; first errors:")
        out.extend(f"  {esc.console(e, 300)}" for e in err.first_errors)
    if results.missing is not None:
        gone = results.missing
        why = ", ".join(f"{k} {n}" for k, n in gone.by_reason.items())
        out.append(f"missing case-samples: {gone.count} of {gone.planned} ({why})")
        unsampled = not_sampled(results)
        if unsampled:
            shown = ", ".join(esc.console(cid, 80) for cid in unsampled[:20])
            out.append(f"not sampled (every sample missing): {shown}")
    cmp = results.comparison
    if cmp is not None:
        note = "" if cmp.comparable else f" (NOT comparable: {esc.console(cmp.note or '', 200)})"
        hist = results.policy.history if results.policy is not None else None
        depth = (
            f" (base history: {hist.median_samples} sample"
            f"{'' if hist.median_samples == 1 else 's'} per case)"
            if cmp.comparable and hist is not None and hist.median_samples is not None
            else ""
        )
        out.append(f"baseline: {esc.console(cmp.source, 200)}{depth}{note}")
        if cmp.comparable and cmp.note:
            out.append(f"note: {esc.console(cmp.note, 400)}")
        changes = case_changes_sentence(results)
        if changes:
            out.append(_plain(changes, esc))
        changed = setup_sentence(results) if cmp.comparable else []
        if changed:
            out.append(_plain(changed, esc))
        warning = short_history_warning(results)
        if warning:
            out.append("warning: " + _plain(warning, esc))
    if results.run_error is not None:  # nothing was measured: no gate, metric or case to show
        out.append("")
        out.append(_cases_line(results, esc))
        return (redactor or Redactor()).redact("\n".join(out)) + "\n"

    def section(title: str, rows: list[str], count: str | None = None) -> None:
        if not rows:
            return
        out.append("")
        out.append(f"{title} ({count or len(rows)})")
        out.extend(f"  {r}" for r in rows[:MAX_ROWS])
        if len(rows) > MAX_ROWS:
            out.append(f"  … {len(rows) - MAX_ROWS} more in report.md")

    n_hard = len({h.case_id for h in results.hard_failures})
    section(
        "hard failures",
        _hard_rows(results, esc),
        samples_of(n_hard, hard_samples(results)),
    )
    if results.verdict is not None:
        section(
            "gates",
            [_gate_line(g, esc) for g in results.verdict.gates],
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
    section("cost per sample" + (" (base history → head)" if deltas else ""), _cost_rows(results))
    section(
        "invalid token usage: left out of the token figures",
        [
            f"{esc.console(c.id, 80)} sample {s.sample}: {esc.console(s.usage_error, 200)}"
            for c in results.cases
            for s in c.samples
            if s.usage_error
        ],
    )
    cases = {c.id: c for c in results.cases}
    hard = {h.case_id for h in results.hard_failures}
    regressions = []
    flips = sorted(
        _flips(results, "regression", "likely_regression"),
        key=lambda f: (f.kind != "regression", -_drop(f), f.case_id),
    )
    for f in flips:
        if f.case_id in hard:
            continue
        sample = _first_failing(cases.get(f.case_id))
        likely = f"  likely: {esc.console(f.because or '', 120)}" if f.kind != "regression" else ""
        regressions.append(
            f"{esc.console(f.case_id, 80)}  "
            f"{fmt.rate_fraction(f.base_pass_rate, f.base_samples)} → "
            f"{fmt.rate_fraction(f.head_pass_rate, f.head_samples)}  {_why(sample, esc)}{likely}"
        )
    if len(regressions) < len(flips):
        regressions.append(f"(+ {len(flips) - len(regressions)} listed under hard failures)")
    n_sig = sum(1 for f in flips if f.kind == "regression")
    count = f"{n_sig}" + (f", {len(flips) - n_sig} likely" if len(flips) > n_sig else "")
    section("regressions", regressions, count if flips else None)
    fresh = new_failing(cmp.flips) if cmp is not None else []
    section(
        "new cases that fail (no history to compare with)",
        [
            f"{esc.console(f.case_id, 80)}{f' (line {f.line})' if f.line else ''}  "
            f"{fmt.rate_fraction(f.head_pass_rate, f.head_samples)}  "
            f"{_why(_first_failing(cases.get(f.case_id)), esc)}"
            for f in fresh
        ],
    )
    apart = set(failed_by_agent(results))
    section(
        "no answer: the agent failed every sample before answering",
        [
            f"{esc.console(c.id, 80)}{f' (line {c.line})' if c.line else ''}  "
            f"{esc.console((c.samples[0].error or '').strip().splitlines()[0], 200)}"
            for c in results.cases
            if c.id in apart
        ],
    )
    if cmp is None or not cmp.comparable:
        section(
            "failing cases",
            [
                f"{esc.console(c.id, 80)}{f' (line {c.line})' if c.line else ''}  "
                f"{fmt.rate_fraction(c.pass_rate, sampled(results, c))}  "
                f"{_why(_first_failing(c), esc)}"
                for c in results.cases
                if not c.passed and not c.flaky and c.id not in hard and c.id not in apart
            ],
        )
    section(
        "fixed",
        [
            f"{esc.console(f.case_id, 80)}  {fmt.rate_fraction(f.base_pass_rate, f.base_samples)}"
            f" → {fmt.rate_fraction(f.head_pass_rate, f.head_samples)}"
            + ("  (likely)" if f.kind == "likely_fix" else "")
            for f in sorted(_flips(results, "fix", "likely_fix"), key=lambda f: f.case_id)
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
        "MCP tool drift (pinned → advertised)",
        [
            f"{esc.console(d.tool, 80)} {d.change} on "
            f"{esc.console(d.server, 60) if d.server else 'no server'}"
            for d in results.mcp_tool_drift
        ],
    )
    noise = {f.case_id: f for f in _flips(results, "noise")}
    section(
        "flaky or within noise",
        [
            f"{esc.console(c.id, 80)}  "
            + (
                f"{fmt.rate_fraction(noise[c.id].base_pass_rate, noise[c.id].base_samples)} → "
                if c.id in noise
                else ""
            )
            + fmt.rate_fraction(c.pass_rate, sampled(results, c))
            for c in results.cases
            if (c.flaky or c.id in noise) and c.id not in hard
        ],
    )
    out.append("")
    out.append(_cases_line(results, esc))
    return (redactor or Redactor()).redact("\n".join(out)) + "\n"


def _gate_line(g: GateResult, esc: Escaper) -> str:
    mark = "⚪" if g.not_checked else "?" if g.undecided else ("✓" if g.passed else "✗")
    where = f" [{esc.console(g.slice, 40)}]" if g.slice else ""
    why = esc.console(g.reason.split(" — ", 1)[-1], 300)
    note = f", not checked: {why}" if g.not_checked else ""
    if g.op == "max_increase":
        value = "n/a" if g.value is None else fmt.percent(g.value)
        if g.undecided:
            note = f", not decided: {why}"
        return (
            f"{mark} {esc.console(g.metric, 80)}{where} typical case {value} per sample "
            f"({fmt.bound(g.op, g.threshold, g.metric)} against the base history{note})"
        )
    shown = fmt.cost(g.metric, g.value) if g.metric in COST_METRICS else fmt.num(g.value)
    return (
        f"{mark} {esc.console(g.metric, 80)}{where} = {shown} "
        f"({fmt.bound(g.op, g.threshold, g.metric)}{note})"
    )


def _cost_rows(results: Results) -> list[str]:
    """What a sample cost: against the base history when compared, else this run's."""
    cmp = results.comparison
    deltas = {d.metric: d for d in cmp.cost} if cmp is not None and cmp.comparable else {}
    names = [m for m in COST_METRICS if (s := results.metrics.get(m)) and s.mean is not None]
    width = max((len(m) for m in names), default=0)
    rows = []
    for m in names:
        d = deltas.get(m)
        if d is not None:
            rows.append(
                f"{m:<{width}}  {fmt.cost(m, d.base)} → {fmt.cost(m, d.head)}  "
                f"{fmt.cost_change(m, d.change, d.relative, d.beyond_noise, plain=True)}"
            )
        else:
            rows.append(f"{m:<{width}}  {fmt.cost(m, results.metrics[m].mean)}")
    return rows


def _cases_line(results: Results, esc: Escaper) -> str:
    n_pass = sum(1 for c in results.cases if c.passed)
    ds = results.dataset
    return (
        f"cases: {len(results.cases)} ({n_pass} pass, {len(results.cases) - n_pass} fail) · "
        f"samples {results.samples} · pass^{results.samples} "
        f"{fmt.num(pass_hat_k(results).dataset)} · dataset {esc.console(ds.path, 120)}"
        f"{'@' + esc.console(ds.version, 40) if ds.version else ''} sha256 {ds.sha256[:12]}"
    )


def _hard_rows(results: Results, esc: Escaper) -> list[str]:
    """One line per case and rule, must-not-call first, with the samples it broke on."""
    rows = []
    for kind in _hard_kinds(results):
        by_case: dict[str, list[int]] = {}
        first: dict[str, HardFailureResult] = {}
        for h in results.hard_failures:
            if h.kind == kind:
                by_case.setdefault(h.case_id, []).append(h.sample)
                first.setdefault(h.case_id, h)
        for case_id in sorted(by_case):
            h = first[case_id]
            nums = sorted(set(by_case[case_id]))
            label = "sample" if len(nums) == 1 else "samples"
            turn = turn_label(h.message)
            rows.append(
                f"✗ {kind} {esc.console(case_id, 80)}{f' (line {h.line})' if h.line else ''} "
                f"{label} {_numbers(nums, results.samples)}: "
                f"{esc.console(calls_repr(h.call), 120)}"
                + (f" in {esc.console(turn, 160)}" if turn else "")
            )
    return rows


def _why(sample: SampleResult | None, esc: Escaper) -> str:
    """The strongest reason a sample failed, in one line (an agent error's first line)."""
    if sample is None:
        return ""
    found = check_sentences(sample)
    if not found:
        return ""
    check, sentence = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return f"[{esc.console(check, 40)}] {_plain(sentence, esc)}{more}"


def _plain(sentence: Sentence, esc: Escaper) -> str:
    return "".join(
        esc.console(p, 200) if isinstance(p, Code) else esc.console(p, 300) for p in sentence
    )
