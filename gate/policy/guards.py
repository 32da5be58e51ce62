"""Variance guards (``variance:`` in the config; docs/policy.md, section 3): ``max_std``
over the watched metrics (each gated quality metric on its slice, and always
``case_passed``; never a cost metric, whose spread is not on the [0, 1] scale) and
``max_flaky_share`` (flaky over the case's initial samples).

With fewer than 2 samples per case neither figure exists: a configured guard is then
**not computed** — it neither fails nor passes, and every report names it (a guard that
cannot look must not look green). Comparisons allow 1e-9 for floating-point rounding.
"""

from __future__ import annotations

from gate.config import Config
from gate.model import CaseStats, MetricStats, SuiteStats, VarianceOutcome, gate_label
from gate.scorers.registry import COST_METRICS

EPS = 1e-9
CASE_PASSED = "case_passed"


def _initial_counts(c: CaseStats) -> str:
    """``1/3``: passed of the case's initial samples."""
    if c.initial_pass_rate is None or c.initial_samples is None:
        return f"{round(c.pass_rate * c.samples)}/{c.samples}"
    return f"{round(c.initial_pass_rate * c.initial_samples)}/{c.initial_samples}"


def slice_stat(results: SuiteStats, metric: str, slice_: str | None) -> MetricStats | None:
    """The run's figures of ``metric`` on the slice (``None``: every case)."""
    if slice_ is None:
        return results.metrics.get(metric)
    sl = results.slices.get(slice_)
    return None if sl is None else sl.metrics.get(metric)


def watched_stds(results: SuiteStats, config: Config | None) -> dict[str, float | None]:
    """label → std over samples, for ``case_passed`` and every gated (metric, slice)."""
    pairs: list[tuple[str, str | None]] = [(CASE_PASSED, None)]
    if config is not None:
        for g in config.gates:
            # a cost metric's spread is in tokens or money, not on the [0, 1] scale
            if (g.metric, g.slice) not in pairs and g.metric not in COST_METRICS:
                pairs.append((g.metric, g.slice))
    out: dict[str, float | None] = {}
    for metric, slice_ in pairs:
        stat = slice_stat(results, metric, slice_)
        out[gate_label(metric, slice_)] = None if stat is None else stat.std
    return out


def check_variance(results: SuiteStats, config: Config | None) -> VarianceOutcome:
    """Apply both guards; every failure gets a reason with the figures."""
    max_std = config.variance.max_std if config is not None else None
    max_flaky = config.variance.max_flaky_share if config is not None else None
    cases = len(results.cases)
    flaky = [c for c in results.cases if c.initially_flaky]
    share = len(flaky) / cases if cases else 0.0
    stds = watched_stds(results, config)
    known = {k: v for k, v in stds.items() if v is not None}
    worst = max(known, key=lambda k: (known[k], k)) if known else None
    reasons: list[str] = []
    passed = True
    few = results.samples < 2

    not_computed: list[str] = []
    if max_std is not None:
        if few or worst is None:
            not_computed.append(
                f"variance.max_std {max_std:.3f}: not computed — the std over samples needs "
                f"at least 2 samples per case (this run has {results.samples})"
            )
        elif known[worst] > max_std + EPS:
            passed = False
            over = sorted(
                (k for k, v in known.items() if v > max_std + EPS), key=lambda k: -known[k]
            )
            reasons.append(
                f"std over samples of {worst} {known[worst]:.3f} > {max_std:.3f} (max_std)"
                + (f"; also over: {', '.join(over[1:4])}" if len(over) > 1 else "")
            )

    if max_flaky is not None:
        if few:
            not_computed.append(
                f"variance.max_flaky_share {max_flaky:.3f}: not computed — a case can only be "
                f"seen to be flaky with at least 2 samples (this run has {results.samples})"
            )
        elif share > max_flaky + EPS:
            passed = False
            shown = ", ".join(f"{c.id} ({_initial_counts(c)})" for c in flaky[:5])
            more = f", … (+{len(flaky) - 5} more)" if len(flaky) > 5 else ""
            reasons.append(
                f"flaky share {share:.3f} > {max_flaky:.3f} (max_flaky_share) — "
                f"{len(flaky)} of {cases} cases flaky: {shown}{more}"
            )

    return VarianceOutcome(
        max_std=max_std,
        observed_max_std=None if worst is None else known[worst],
        worst_metric=worst,
        stds=stds,
        max_flaky_share=max_flaky,
        flaky_share=round(share, 12),
        flaky_cases=tuple(c.id for c in flaky),
        passed=passed,
        reasons=tuple(reasons),
        not_computed=tuple(not_computed),
    )
