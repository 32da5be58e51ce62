"""Decide the verdict: layer 3 of 3 (score → reduce → **decide**).

docs/policy.md (section 2, "The verdict") lists what fails the gate, in the order of the
reasons: hard failures, regressions, removed cases, new failing cases, a suite-level
drop, flakier than the base history, gates and variance guards
(:mod:`gate.policy.guards`). A bound holds within 1e-9; a gate whose metric has no value
**fails** with a "no data" reason. Judge metrics never gate. A run compared with nothing
carries :class:`~gate.model.NotCompared` in its verdict, and fails with
``require_baseline``.

:func:`decide` takes the run's :class:`~gate.model.SuiteStats` and the baseline
comparison made before it (``gate.baseline.diff.compare``; ``None`` without a baseline)
and returns a :class:`~gate.model.Verdict`; it reads no file and builds no results.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from gate.config import (
    Config,
    GateConfig,
    LikelyMode,
    MissingUsage,
    NewCasesMode,
    RegressionsConfig,
    UndecidedMode,
)
from gate.model import (
    CaseStats,
    Comparison,
    Flip,
    FlipKind,
    GateOp,
    GateOutcome,
    HardFailure,
    NotCompared,
    NotComparedWhy,
    RemovedCase,
    SuiteStats,
    VarianceOutcome,
    Verdict,
    gate_label,
    new_failing,
    undecided_drops,
)
from gate.policy.cost import samples_to_decide
from gate.policy.engine import Evaluation
from gate.policy.guards import EPS, check_variance, slice_stat
from gate.policy.reduce import case_ids, case_values, in_slice
from gate.scorers.registry import COST_METRICS
from gate.scorers.usage import USAGE_METRICS

SHOW_CASES = 3
"""Case ids named in one gate reason (the rest are counted)."""
SUITE = "suite-level drop"
SHOW_HARD = 10
"""Hard failures spelled out one per reason line (the rest are counted)."""
MAX_SAMPLES = 60
"""Most head samples per case that a cost gate's "what would decide it" asks for."""


def decide(
    stats: SuiteStats,
    comparison: Comparison | None,
    config: Config | None,
    evaluation: Evaluation | None = None,
    *,
    no_baseline: str | None = None,
    require_baseline: bool = False,
) -> Verdict:
    """The verdict on a run (module docstring), with the notices it adds. ``evaluation``:
    the tests against the base history (``None``: not run, e.g. results merged from
    shards); ``no_baseline``: why there is no baseline, in words (without a
    ``comparison``); ``require_baseline``: a run compared with nothing fails."""
    notices: list[str] = []
    regressions_cfg = config.regressions if config is not None else RegressionsConfig()

    comparable = comparison is not None and comparison.comparable
    reasons: list[str] = []
    reasons.extend(_hard_reasons(stats.hard_failures, stats.header.dataset.path))
    not_compared = _not_compared(comparison, no_baseline)
    if not_compared is not None and require_baseline:
        reasons.append(
            f"not compared: {not_compared.detail} — a baseline is required "
            "(require-baseline); a run on the base branch makes one"
        )
    removed = comparison.changes.unretired if comparison is not None and comparable else ()
    if removed:
        reasons.append(
            f"{removed_words(removed)}: {_shown_removed(removed)} — a removed case fails the "
            "gate unless dataset.retired retires it (its id and the reason)"
        )

    regressions_ok = True
    if comparison is None:
        notices.append("no baseline: flips and regressions were not checked")
    elif not comparison.comparable:
        notices.append(f"baseline not comparable: {comparison.note}; regressions were not checked")
    elif regressions_cfg.max_new_failures is not None:
        allowed = regressions_cfg.max_new_failures
        regs = [f for f in comparison.flips if f.kind is FlipKind.REGRESSION]
        likely = [f for f in comparison.flips if f.kind is FlipKind.LIKELY_REGRESSION]
        counted = [*regs, *likely] if regressions_cfg.likely is LikelyMode.FAIL else regs
        if len(counted) > allowed:
            regressions_ok = False
            what = (
                "regression(s)"
                if not likely or regressions_cfg.likely is not LikelyMode.FAIL
                else f"regression(s) ({len(likely)} likely: regressions.likely is fail)"
            )
            reasons.append(
                f"{len(counted)} {what} > {allowed} allowed (regressions.max_new_failures): "
                f"{_shown(counted)}"
            )
        if likely and regressions_cfg.likely is LikelyMode.WARN:
            what = f"{len(likely)} likely regression(s), not significant yet"
            notices.append(_warning(what, "likely", _shown(likely)))

    dropped = undecided_drops(comparison.flips) if comparison is not None and comparable else []
    undecided_ok = not (dropped and regressions_cfg.undecided is UndecidedMode.FAIL)
    fresh = new_failing(comparison.flips) if comparison is not None and comparable else []
    new_ok = not (fresh and regressions_cfg.new_cases is NewCasesMode.FAIL)
    for what, key, flips, ok, show in (
        (f"{len(dropped)} case(s) fell with too few samples to tell", "undecided", dropped,
         undecided_ok, _shown),
        (f"{len(fresh)} new case(s) fail", "new_cases", fresh, new_ok, _shown_new),
    ):  # fmt: skip
        if flips and ok:
            notices.append(_warning(what, key, show(flips)))
        elif flips:
            reasons.append(f"{what} (regressions.{key}: fail): {show(flips)}")

    policy_ok = True
    policy_reasons: list[str] = []
    if evaluation is not None and comparable:
        policy_reasons, policy_notices = history_reasons(evaluation)
        policy_ok = not policy_reasons
        reasons.extend(policy_reasons)
        notices.extend(policy_notices)

    missing_usage = config.cost.missing_usage if config is not None else MissingUsage.FAIL
    gates = [
        usage_checked(g, gate, stats, missing_usage)
        for gate in (config.gates if config else [])
        for g in (
            [relative_gate(gate, evaluation if comparable else None)]
            if gate.max_increase is not None
            else evaluate_gate(stats, gate)
        )
    ]
    reasons.extend(g.reason for g in gates if not g.passed)
    variance = check_variance(stats, config)
    reasons.extend(variance.reasons)

    hard = len(stats.hard_failures)
    passed = (
        hard == 0
        and not removed
        and not (not_compared is not None and require_baseline)
        and regressions_ok
        and undecided_ok
        and new_ok
        and policy_ok
        and all(g.passed for g in gates)
        and variance.passed
    )
    n_regs = comparison.regressions if comparison is not None and comparable else 0
    n_likely = comparison.likely_regressions if comparison is not None and comparable else 0
    drops = (
        tuple(t.name for t in evaluation.suite if t.blocked)
        if evaluation is not None and comparable
        else ()
    )
    return Verdict(
        passed=passed,
        summary=_summary(
            passed,
            reasons,
            gates,
            stats.hard_failures,
            n_regs,
            comparison,
            variance,
            policy_reasons,
            removed=removed,
            not_compared=not_compared,
            require_baseline=require_baseline,
            undecided=len(dropped),
        ),
        reasons=tuple(reasons),
        gates=tuple(gates),
        variance=variance,
        hard_failures=hard,
        regressions=n_regs,
        notices=tuple(notices),
        likely_regressions=n_likely,
        likely_fail=regressions_cfg.likely is LikelyMode.FAIL,
        suite_drops=drops,
        new_failing=len(fresh),
        new_fail=regressions_cfg.new_cases is NewCasesMode.FAIL,
        not_compared=not_compared,
        require_baseline=require_baseline,
        removed=len(removed),
        undecided=len(dropped),
        undecided_fail=regressions_cfg.undecided is UndecidedMode.FAIL,
    )


def _not_compared(comparison: Comparison | None, no_baseline: str | None) -> NotCompared | None:
    """Why nothing was compared (``None``: something was)."""
    if comparison is None:
        return NotCompared(NotComparedWhy.NO_BASELINE, no_baseline or "no baseline was given")
    if comparison.comparable:
        return None
    return comparison.not_compared or NotCompared(
        NotComparedWhy.NO_COMPARABLE_CASE, comparison.note or "no case is comparable"
    )


def _warning(what: str, key: str, shown: str) -> str:
    """A warning on ``what`` (the cases ``shown``) that ``regressions.<key>: fail`` blocks."""
    return f"{what}: {shown} — a warning, not a block (regressions.{key}: fail blocks on them)"


def _some(shown: Iterable[str], total: int) -> str:
    """The first :data:`SHOW_CASES` of ``total`` items, then how many more."""
    more = total - SHOW_CASES
    return ", ".join(shown) + (f", … (+{more} more)" if more > 0 else "")


def _ids(ids: Sequence[str]) -> str:
    """The first :data:`SHOW_CASES` ids, then ``…`` when there are more."""
    return ", ".join(ids[:SHOW_CASES]) + (", …" if len(ids) > SHOW_CASES else "")


def _shown_removed(removed: Sequence[RemovedCase]) -> str:
    shown = (f"{r.case_id} ({r.base_passes}/{r.base_samples})" for r in removed[:SHOW_CASES])
    return _some(shown, len(removed))


def history_reasons(evaluation: Evaluation) -> tuple[list[str], list[str]]:
    """The reasons (suite-level drop, flakier than the base history) and the notices
    (flakiness the base already had, undecided and not-comparable cases) of the tests
    against the base history; regressed cases are counted by the regressions check."""
    reasons: list[str] = []
    notices: list[str] = []
    for t in evaluation.suite:
        if not t.blocked:
            continue
        label = "pass rate" if t.name == "case_passed" else t.name
        change = "" if t.change is None else f" ({t.change * 100:+.1f} points)"
        base = "—" if t.base_mean is None else f"{t.base_mean:.3f}"
        head = "—" if t.head_mean is None else f"{t.head_mean:.3f}"
        reasons.append(
            f"{SUITE}: {label} {base} in the base history → {head} on head{change} "
            f"over {t.cases} case(s), p = {t.p_value:.2g} ≤ {t.alpha:.3g}"
        )
    fl = evaluation.flakiness
    if fl.flakier:
        bs = "—" if fl.base_spread is None else f"{fl.base_spread:.3f}"
        hs = "—" if fl.head_spread is None else f"{fl.head_spread:.3f}"
        reasons.append(
            f"flakier than the base history: mean spread {bs} → {hs} over {fl.cases} case(s), "
            f"p = {fl.p_value:.2g} ≤ {fl.alpha:.3g}"
            + (f"; newly flaky: {_ids(fl.newly_flaky)}" if fl.newly_flaky else "")
        )
    if fl.already_flaky:
        notices.append(
            f"{len(fl.already_flaky)} case(s) flaky on head were already flaky in the base "
            f"history ({_ids(fl.already_flaky)}): a warning, not a block "
            "(variance.max_flaky_share sets an absolute ceiling)"
        )
    return reasons, notices


def _shown(flips: Sequence[Flip]) -> str:
    shown = (
        f"{f.case_id} ({_frac(f.base_pass_rate, f.base_samples)} → "
        f"{_frac(f.head_pass_rate, f.head_samples)})"
        for f in flips[:SHOW_CASES]
    )
    return _some(shown, len(flips))


def _shown_new(flips: Sequence[Flip]) -> str:
    shown = (f"{f.case_id} ({_frac(f.head_pass_rate, f.head_samples)})" for f in flips[:SHOW_CASES])
    return _some(shown, len(flips))


def _frac(rate: float | None, n: int) -> str:
    return "—" if rate is None else f"{round(rate * n)}/{n}"


def _hard_reasons(hard: Sequence[HardFailure], path: str) -> list[str]:
    out = []
    for h in hard[:SHOW_HARD]:
        where = f"{path}:{h.line}" if h.line is not None else path
        name = h.call.name
        called = "" if name in h.message else f" called {name}"
        out.append(
            f"{h.kind.replace('_', '-')}: case {h.case_id} sample {h.sample}{called} — "
            f"{h.message} ({where})"
        )
    if len(hard) > SHOW_HARD:
        out.append(f"… and {len(hard) - SHOW_HARD} more hard failure(s)")
    return out


def evaluate_gate(results: SuiteStats, gate: GateConfig) -> list[GateOutcome]:
    """One GateResult per bound (``min`` and/or ``max``) of ``gate``."""
    label = gate_label(gate.metric, gate.slice)
    stat = slice_stat(results, gate.metric, gate.slice)
    missing = None
    if gate.slice is not None and gate.slice not in results.slices:
        missing = f"the slice {gate.slice} has no cases"
    value = None if stat is None else stat.mean
    out: list[GateOutcome] = []
    for op, threshold in ((GateOp.MIN, gate.min), (GateOp.MAX, gate.max)):
        if threshold is None:
            continue
        failing: list[str] = []
        if value is None:
            ok = False
            why = missing or (
                f"{gate.metric} was not produced by the scorers"
                if stat is None
                else f"{gate.metric} is n/a in every case"
            )
            reason = (
                f"{label}: no data ({why}) — a gate that cannot measure fails rather "
                f"than pass silently; fix the gate ({op} {threshold:.3f}) or the dataset"
            )
        else:
            ok = value >= threshold - EPS if op is GateOp.MIN else value <= threshold + EPS
            failing = _cases_beyond(results.cases, gate.metric, gate.slice, op, threshold)
            shown = _figure if gate.metric in COST_METRICS else (lambda v: f"{v:.3f}")
            sign = ("≥" if ok else "<") if op is GateOp.MIN else ("≤" if ok else ">")
            reason = f"{label} {shown(value)} {sign} {shown(threshold)} ({op})"
            if failing and not ok:
                side = "below" if op is GateOp.MIN else "above"
                reason += f" — {len(failing)} case(s) {side}: {_ids(failing)}"
        out.append(
            GateOutcome(
                metric=gate.metric,
                slice=gate.slice,
                op=op,
                threshold=threshold,
                value=value,
                passed=ok,
                no_data=value is None,
                reason=reason,
                failing_cases=tuple(failing),
            )
        )
    return out


def lacking_usage(gate: GateConfig, stats: SuiteStats) -> tuple[int, int] | None:
    """(N, M) when N of the M initial head samples that answered (in the gate's slice)
    have no value of the gate's token metric — none reported, or invalid; ``None`` when
    every one has one, or the metric is not taken from usage."""
    if gate.metric not in USAGE_METRICS:
        return None
    seen = stats.usage_reported.get(gate.slice or "")
    if seen is None or seen.answered == 0:
        return None
    lacking = seen.answered - seen.reported.get(gate.metric, 0)
    return (lacking, seen.answered) if lacking > 0 else None


def usage_checked(
    outcome: GateOutcome, gate: GateConfig, stats: SuiteStats, mode: MissingUsage
) -> GateOutcome:
    """``outcome``, unless the gate bounds a token metric some answered head samples lack
    (:func:`lacking_usage`): then it is not checked — whatever the samples that reported
    would show — and fails or passes with a warning as ``cost.missing_usage`` says. A
    gate that cannot see every sample's usage is never "met": the samples left out could
    be the expensive ones."""
    lacking = lacking_usage(gate, stats)
    if lacking is None:
        return outcome
    n, m = lacking
    label = gate_label(gate.metric, gate.slice)
    bound = (
        f"max_increase {gate.max_increase:.0%}"
        if gate.max_increase is not None
        else f"{outcome.op} {_figure(outcome.threshold)}"
    )
    what = (
        "no cost figure (no usage reported, or no price for its model)"
        if gate.metric == "cost"
        else "no usage"
    )
    why = f"the head reported {what} on {n:,} of {m:,} samples"
    if mode is MissingUsage.WARN:
        reason = f"{label}: {bound} not checked — {why} (cost.missing_usage: warn)"
    else:
        reason = (
            f"{label}: {bound} not checked — {why}; cost.missing_usage: fail fails a cost "
            "gate that cannot see every sample's usage (warn passes it with this warning)"
        )
    return dataclasses.replace(
        outcome,
        value=None,
        passed=mode is MissingUsage.WARN,
        reason=reason,
        failing_cases=(),
        no_data=False,
        not_checked=True,
        undecided=False,
    )


def relative_gate(
    gate: GateConfig, evaluation: Evaluation | None, *, max_samples: int = MAX_SAMPLES
) -> GateOutcome:
    """A ``max_increase`` gate on a cost metric, against the base history, by the cost
    test (:mod:`gate.policy.cost`: each case's head samples against its own recorded
    samples). Three outcomes:

    * **failed** — the typical case's rise per sample is above the bound and the test
      finds the rise beyond noise (one-sided, at the metric's alpha: the Cost group's
      criterion, so the table never calls within noise a rise that failed a gate);
    * **not decided** (passes, and says why and what would decide it) — the typical case's
      rise is above the bound but within the samples' noise, or the mean per sample rose
      above the bound while the typical case did not (a few cases drove it);
    * **passed** — neither figure is above the bound.

    Without a comparable base history, or with no case valued on both sides, it is not
    checked (it passes, and says so). ``max_samples``: the most head samples per case
    "what would decide it" may ask for."""
    assert gate.max_increase is not None
    bound = gate.max_increase
    label = gate_label(gate.metric, gate.slice)
    test = evaluation.cost_test(gate.metric, gate.slice) if evaluation is not None else None

    def outcome(
        value: float | None,
        passed: bool,
        reason: str,
        *,
        not_checked: bool = False,
        undecided: bool = False,
    ) -> GateOutcome:
        return GateOutcome(
            metric=gate.metric,
            slice=gate.slice,
            op=GateOp.MAX_INCREASE,
            threshold=bound,
            value=value,
            passed=passed,
            reason=reason,
            not_checked=not_checked,
            undecided=undecided,
        )

    ev = test.cost if test is not None else None
    if (
        test is None
        or test.cases == 0
        or test.base_mean is None
        or test.head_mean is None
        or ev is None
    ):
        why = (
            "no comparable base history (it compares with the base history)"
            if test is None
            else f"no comparable case has {gate.metric} on both sides (the base history "
            "records each sample's usage from this release on)"
        )
        return outcome(
            None, True, f"{label}: max_increase {bound:.0%} not checked — {why}", not_checked=True
        )
    typical = ev.typical if ev.typical is not None else 0.0
    mean = test.relative
    change = test.change or 0.0
    typical_over = typical > bound + EPS
    mean_over = change > 0 if mean is None else mean > bound + EPS
    rise = ev.typical_p_rise <= test.alpha
    shown = "from 0" if mean is None else f"{mean:+.1%}"
    reason = (
        f"{label} {_figure(test.base_mean)} → {_figure(test.head_mean)} per sample ({shown}), "
        f"the typical case {typical:+.1%}, over {test.cases} case(s) against the base history"
    )
    p = _p(ev.typical_p_rise)
    if typical_over and rise:
        return outcome(
            typical,
            False,
            f"{reason}: more than max_increase {bound:.0%}, beyond noise ({p} ≤ {test.alpha:.3g})",
        )
    if typical_over:
        need = samples_to_decide(ev, test.alpha, max_samples)
        decides = (
            f"{need} samples per case (samples: {need}) would decide it if the rise holds"
            if need is not None
            else "a longer base history would decide it (each base run adds to it)"
        )
        return outcome(
            typical,
            True,
            f"{reason}: above max_increase {bound:.0%} but within the samples' noise "
            f"({p} > {test.alpha:.3g}) — not decided; {decides}",
            undecided=True,
        )
    if mean_over:
        few = ", ".join(ev.drivers) or "a few cases"
        return outcome(
            typical,
            True,
            f"{reason}: the mean per sample is above max_increase {bound:.0%}, the typical "
            f"case is not — the rise comes from a few cases ({few}): not decided; more "
            "samples per case would show whether their rise is more than their own noise",
            undecided=True,
        )
    return outcome(typical, True, f"{reason}: within max_increase {bound:.0%}")


def _p(p: float) -> str:
    """``p = 0.0031``, in two significant digits; below 0.0001, ``p < 0.0001``."""
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.2g}"


def _figure(v: float) -> str:
    """A cost figure: a count with thousands separators, else four significant digits."""
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _cases_beyond(
    cases: Sequence[CaseStats], metric: str, slice_: str | None, op: str, threshold: float
) -> list[str]:
    """Ids of the cases (in the slice) whose own mean is beyond the bound, worst first."""
    vals = case_values(cases, metric)
    if slice_ is None:
        ids = case_ids(cases)
        return [ids[int(i)] for i in beyond_threshold(vals, op, threshold)]
    scope = [
        i
        for i, c in enumerate(cases)
        if in_slice(
            slice_,
            difficulty=c.difficulty,
            tags=c.tags,
            no_tool=c.expected_no_tool,
            must_not_call=bool(c.must_not_call),
        )
    ]
    picked = beyond_threshold(vals[scope], op, threshold)
    return [cases[scope[int(i)]].id for i in picked]


def beyond_threshold(values: np.ndarray, op: str, threshold: float) -> np.ndarray:
    """Indices of the values (NaN = n/a, never beyond) on the wrong side of the bound,
    worst first; ties keep their order (stable sort)."""
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        beyond = values < threshold - EPS if op == "min" else values > threshold + EPS
    idx = np.flatnonzero(beyond)
    key = values[idx] if op == "min" else -values[idx]
    return idx[np.argsort(key, kind="stable")]


def _summary(
    passed: bool,
    reasons: Sequence[str],
    gates: Sequence[GateOutcome],
    hard_failures: Sequence[HardFailure],
    regressions: int,
    comparison: Comparison | None,
    variance: VarianceOutcome,
    policy_reasons: Sequence[str] = (),
    *,
    removed: Sequence[RemovedCase] = (),
    not_compared: NotCompared | None = None,
    require_baseline: bool = False,
    undecided: int = 0,
) -> str:
    """Why, in one line (renderers put the verdict word, from ``passed``, before it).

    One reason is shown whole; several are counted by kind — hard failures (by kind, with
    the number of cases), regressions, missed gates (the first spelled out), the variance
    guard — so the line says everything that failed, not only the first thing.
    """
    if not passed:
        if len(reasons) <= 1:
            return reasons[0] if reasons else "the gate failed"
        parts: list[str] = []
        if not_compared is not None and require_baseline:
            parts.append(f"not compared ({not_compared.detail}; require-baseline)")
        if removed:
            parts.append(removed_words(removed))
        if hard_failures:
            kinds = Counter(h.kind for h in hard_failures)
            cases = len({h.case_id for h in hard_failures})
            by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            parts.append(f"{len(hard_failures)} hard failure(s) in {cases} case(s) ({by_kind})")
        if comparison is not None and comparison.comparable and regressions:
            parts.append(f"{regressions} regression(s) against {comparison.source}")
        if undecided:
            parts.append(f"{undecided} case(s) fell, too few samples to tell")
        drops = [
            r.split(": ", 1)[1].split(" in the base history")[0]
            for r in policy_reasons
            if r.startswith(SUITE)
        ]
        drops = [d.rsplit(" ", 1)[0] for d in drops]
        if drops:
            parts.append(f"{SUITE} ({', '.join(drops)})")
        parts.extend(r.split(":")[0] for r in policy_reasons if not r.startswith(SUITE))
        missed = [g for g in gates if not g.passed]
        if missed:
            parts.append(
                f"{len(missed)} gate(s) missed ({missed[0].reason.split(' — ')[0]}"
                f"{', …' if len(missed) > 1 else ''})"
            )
        if not variance.passed:
            parts.append(
                "variance guard: " + "; ".join(r.split(" — ")[0] for r in variance.reasons)
            )
        return "; ".join(parts) if parts else reasons[0]
    unchecked = [g for g in gates if g.not_checked]
    parts = [f"{len(gates) - len(unchecked)} gate(s) met" if gates else "no gates configured"]
    if unchecked:
        parts[0] += f", {len(unchecked)} not checked ({unchecked[0].reason.split(' — ')[-1]})"
    parts.append("no hard failures")
    if comparison is not None and comparison.comparable:
        parts.append(f"{regressions} regression(s) against {comparison.source}")
    if undecided:
        parts.append(f"{undecided} case(s) fell, too few samples to tell")
    if not_compared is not None:
        parts.insert(0, f"not compared ({not_compared.detail})")
    if variance.not_computed:
        parts.append("variance guard not computed (one sample per case)")
    return ", ".join(parts)


def removed_words(removed: Sequence[RemovedCase]) -> str:
    """``2 cases removed — both passed on base``: how many, and how they did on base."""
    n = len(removed)
    passed = sum(1 for r in removed if r.passed_on_base)
    if n == 1:
        how = "it passed on base" if passed else "it did not pass on base"
        return f"1 case removed — {how}"
    if passed == n:
        how = "both passed on base" if n == 2 else "all passed on base"
    elif passed == 0:
        how = "neither passed on base" if n == 2 else "none passed on base"
    else:
        how = f"{passed} passed on base"
    return f"{n} cases removed — {how}"
