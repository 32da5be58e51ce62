"""Reduce sample scores over samples and cases: per-case statistics, dataset-level metrics,
slices, per-tool rollup, confusion matrix, hard failures. No verdict (see ``decide``).

Layer 2 of 3 (score one sample → **reduce over samples** → decide). docs/policy.md
(section 1) defines every figure. What the code also holds to: *missing* samples
(:attr:`gate.policy.table.SampleRows.missing`) count in no pass rate; dataset-level
figures are over each case's initial samples only (extra samples serve the case's own
test); pass^k is C(c, k) / C(n, k) over every sampled sample
(:func:`gate.policy.stats.pass_hat_curve`); a missing actual tool name counts under
``"(none)"`` in the confusion matrix.

The input is a :class:`~gate.policy.table.SampleTable` (one numpy row per case-sample, in
dataset order); the output a :class:`~gate.model.SuiteStats`. Every statistic is numpy
over the rows × metrics array: no Python loop runs per sample. No file is read or
written here, and nothing here knows the results.json format (``gate.results`` does).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from gate.model import (
    CaseStats,
    ConfirmStats,
    MetricStats,
    RunHeader,
    SliceStats,
    SuiteStats,
    ToolRecall,
    UsageReported,
)
from gate.policy import stats
from gate.policy.advisor import advise
from gate.policy.table import CaseMeta, SampleTable
from gate.scorers.registry import METRICS, POOLED_METRICS
from gate.scorers.usage import USAGE_METRICS

POOLED = "unnecessary_call_rate"
CASE_PASSED = "case_passed"
_ROUND = 12
"""Dataset- and slice-level figures are rounded to 12 decimals: they come from matrix
products whose last bits depend on the BLAS summation order."""


def reduce(table: SampleTable, header: RunHeader, *, seed: int, max_extra: int) -> SuiteStats:
    """Every statistic of a run from its sample table (module docstring). Each case's
    regular samples come first in its rows, then its confirmation samples (``extra``):
    those count in the case's pass rate and means, not in the std over samples."""
    metas = table.metas
    rows = table.rows
    # The metrics averaged: those of the samples' order, the pooled one apart.
    names = [n for n in sample_metric_names(rows.names) if n not in POOLED_METRICS]
    col = {n: j for j, n in enumerate(rows.names)}
    sizes = table.sizes
    n_extra = table.extras
    reg_n = int((sizes - n_extra)[0]) if len(metas) else 0
    present = rows.present if rows.missing else None
    case_passed: stats.Floats | stats.Bools = rows.passed
    slices = _slices(metas)
    if present is not None:  # a missing sample is neither a pass nor a failure: n/a
        case_passed = np.where(present, rows.passed.astype(np.float64), np.nan)
    reduced = reduce_arrays(
        values=rows.values,
        columns=[col[n] for n in names],
        replace={names.index(CASE_PASSED): case_passed},
        passed=rows.passed,
        present=present,
        calls=rows.calls,
        calls_no_tool=rows.calls_no_tool,
        sizes=sizes,
        regular=reg_n,
        slices=slices,
        seed=seed,
    )
    notices: list[str] = []
    if reg_n == 1:
        notices.append(
            "samples: 1 — the std over samples and the flaky share need at least 2 samples "
            "per case (shown as n/a)"
        )
    extra_total = int(n_extra.sum())
    confirm = None
    if max_extra or extra_total:
        confirm = ConfirmStats(
            max_extra_samples=max_extra,
            extra_samples=extra_total,
            cases={metas[i].id: int(k) for i, k in enumerate(n_extra) if k},
        )
    advisor = advise(samples=reg_n, case_pass_rates=reduced.regular_pass_rate)
    if rows.invalid_usage:
        notices.append(invalid_usage_notice(table))
    case_names = (*names, POOLED)
    sampled = sizes if reduced.case_sampled is None else reduced.case_sampled
    return SuiteStats(
        header=header,
        samples=reg_n,
        metric_names=sample_metric_names(rows.names),
        metrics=_metric_stats(names, reduced, 0, with_ci=True),
        slices={
            name: SliceStats(
                cases=int(reduced.slice_cases[li]),
                pass_rate=stats.clean(round(float(reduced.slice_pass_rate[li]), _ROUND)),
                metrics=_metric_stats(names, reduced, li, with_ci=False),
            )
            for li, name in enumerate(reduced.slice_names)
            if li > 0
        },
        cases=CaseTable(
            metas=metas,
            names=case_names,
            mean=np.concatenate([reduced.case.mean, reduced.case_pooled[:, None]], axis=1),
            std=reduced.case.std,
            pass_rate=reduced.case_pass_rate,
            initial_pass_rate=reduced.regular_pass_rate,
            initial_samples=reduced.regular_sampled,
            sizes=sampled,
            extras=n_extra,
            tools=table.called_by_case(),
            failed_checks=table.failed_checks_by_case(),
        ),
        per_tool={
            name: ToolRecall(
                expected=e, matched=m, recall=round(m / e, _ROUND) if e else None, called=c
            )
            for name, (e, m, c) in sorted(rows.per_tool.items())
        },
        confusion=rows.confusion,
        malformed=rows.malformed,
        hard_failures=tuple(table.hard),
        usage=_usage(table, len(metas)),
        advisor=advisor,
        confirm=confirm,
        notices=tuple(notices),
        timing=_latency(rows.latency),
        usage_reported=_usage_reported(table, slices),
        pass_hat=stats.pass_hat_curve(reduced.case_pass_rate, sampled, reg_n),
    )


def _usage_reported(
    table: SampleTable, slices: Mapping[str, stats.Bools]
) -> dict[str, UsageReported]:
    """Per slice (``""``: the whole dataset), which initial samples that answered — those
    with a ``steps`` figure: a sample the agent failed has no cost figures at all —
    reported each usage metric (:class:`~gate.model.UsageReported`)."""
    rows = table.rows
    col = {n: j for j, n in enumerate(rows.names)}
    if "steps" not in col or not len(rows):
        return {}
    initial = ~rows.extra & rows.present
    answered = initial & ~np.isnan(rows.values[:, col["steps"]])
    has = {m: answered & ~np.isnan(rows.values[:, col[m]]) for m in USAGE_METRICS if m in col}
    out: dict[str, UsageReported] = {}
    for name, mask in {"": None, **slices}.items():
        where = answered if mask is None else answered & mask[rows.case]
        out[name] = UsageReported(
            answered=int(where.sum()),
            reported={
                m: int((v if mask is None else v & mask[rows.case]).sum()) for m, v in has.items()
            },
        )
    return out


def invalid_usage_notice(table: SampleTable) -> str:
    """How many samples reported usage that could not be used (``gate.model.usage``), and the
    first of them with why."""
    rows = table.rows
    bad = rows.invalid_usage
    row = min(bad)
    case = table.metas[int(rows.case[row])].id
    first = f"case {case} sample {int(rows.sample[row])}: {bad[row]}"
    return (
        f"the agent reported invalid token usage on {len(bad):,} sample(s), left out of the "
        f"token figures (a cost gate counts them as samples without usage); first: {first}"
    )


def sample_metric_names(present: Iterable[str]) -> tuple[str, ...]:
    """The order of the per-sample and per-case scores of results.json: the registry's
    metrics among ``present`` (``case_passed`` and the pooled metric always), then the
    others, sorted. Sample records are written over these names, and the table's columns
    are these names, so the two always agree."""
    seen = set(present) | {CASE_PASSED, POOLED}
    return tuple([m for m in METRICS if m in seen] + sorted(seen.difference(METRICS)))


def _usage(table: SampleTable, cases: int) -> dict[str, float]:
    """Totals over every sample, per-case means (``<key>_per_case``) and means per sample
    that reported the key (``<key>_per_sample``: what two runs of different sample
    counts compare by)."""
    out: dict[str, float] = {}
    present = table.rows.present
    for key, col in sorted(table.rows.usage.items()):
        total: float = float(np.nansum(col))
        if key not in table.rows.usage_floats and abs(total) <= 2**53:
            total = int(total)  # (beyond 2**53 a float: exact no more, and never past 64 bits)
        out[key] = total
        if cases:
            out[f"{key}_per_case"] = round(total / cases, 6)
        reported = int(np.count_nonzero(~np.isnan(col) & present))
        if reported:
            out[f"{key}_per_sample"] = round(total / reported, 6)
    return out


def _latency(ms: stats.Floats) -> dict[str, Any]:
    """The agent's wall time per case-sample, in seconds (timing: it differs between
    identical runs, and measures the machine as much as the agent — reported, never
    gated)."""
    ms = ms[~np.isnan(ms)]
    if ms.size == 0:
        return {}
    s = ms / 1000.0
    p50, p95 = np.percentile(s, [50, 95])
    return {
        "latency_s": {
            "samples": int(s.size),
            "mean": round(float(s.mean()), 4),
            "p50": round(float(p50), 4),
            "p95": round(float(p95), 4),
            "max": round(float(s.max()), 4),
            "total": round(float(s.sum()), 3),
        }
    }


class CaseTable(Sequence[CaseStats]):
    """The per-case statistics as arrays, read as :class:`~gate.model.CaseStats` one case
    at a time (a large run has hundreds of thousands of cases: they are not all built)."""

    def __init__(
        self,
        *,
        metas: Sequence[CaseMeta],
        names: Sequence[str],
        mean: stats.Floats,
        std: stats.Floats,
        pass_rate: stats.Floats,
        initial_pass_rate: stats.Floats,
        initial_samples: stats.Ints,
        sizes: stats.Ints,
        extras: stats.Ints,
        tools: Sequence[Sequence[str]],
        failed_checks: Sequence[tuple[str, ...]],
    ) -> None:
        self.metas = metas
        self.names = tuple(names)
        self._mean = mean
        self._std = std
        self._rate = pass_rate
        self._initial_rate = initial_pass_rate
        self._initial_n = initial_samples
        self._sizes = sizes
        self._extras = extras
        self._tools = tools
        self._failed = failed_checks

    def __len__(self) -> int:
        return len(self.metas)

    @overload
    def __getitem__(self, i: int) -> CaseStats: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[CaseStats]: ...
    def __getitem__(self, i: int | slice) -> CaseStats | Sequence[CaseStats]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        means = self._mean[i].tolist()
        stds = self._std[i].tolist()
        return self._stats(
            i,
            float(self._rate[i]),
            int(self._sizes[i]),
            int(self._extras[i]),
            {n: None if v != v else v for n, v in zip(self.names, means, strict=True)},
            {n: v for n, v in zip(self.names, stds, strict=False) if v == v},
        )

    def _stats(
        self,
        i: int,
        rate: float,
        samples: int,
        extra_samples: int,
        scores: Mapping[str, float | None],
        std: Mapping[str, float],
    ) -> CaseStats:
        m = self.metas[i]
        return CaseStats(
            id=m.id,
            line=m.line,
            difficulty=m.difficulty,
            tags=m.tags,
            expected_no_tool=m.expected_no_tool,
            must_not_call=m.must_not_call,
            tools=tuple(self._tools[i]),
            passed=rate == 1.0,
            pass_rate=rate,
            flaky=0.0 < rate < 1.0,
            samples=samples,
            extra_samples=extra_samples,
            scores=scores,
            std=std,
            failed_checks=self._failed[i],
            initial_pass_rate=float(self._initial_rate[i]),
            initial_samples=int(self._initial_n[i]),
        )

    def __iter__(self) -> Iterator[CaseStats]:
        for i in range(len(self)):
            yield self[i]

    def score_rows(
        self, names: Sequence[str]
    ) -> Iterator[tuple[CaseStats, list[float | None], list[float | None]]]:
        """Every case in order without its ``scores`` and ``std`` mappings, and those as
        rows over ``names`` (``None`` = n/a, and for a name the table lacks): what
        results.json's writer reads of every case. The arrays are read a block of cases
        at a time (one conversion per block, not a few numpy calls per case)."""
        where = {n: j for j, n in enumerate(self.names)}
        # Position of each name among the columns, -1 for none: -1 picks the NaN column
        # appended below. ``std`` has no column for the pooled metric (the last name).
        cols = [where.get(n, -1) for n in names]
        k_std = int(self._std.shape[1])
        std_cols = [j if j < k_std else -1 for j in cols]
        for a in range(0, len(self), _ROWS_BLOCK):
            b = min(a + _ROWS_BLOCK, len(self))
            means = _with_nan_column(self._mean[a:b])[:, cols].tolist()
            stds = _with_nan_column(self._std[a:b])[:, std_cols].tolist()
            rates = self._rate[a:b].tolist()
            sizes = self._sizes[a:b].tolist()
            extras = self._extras[a:b].tolist()
            for r in range(b - a):
                light = self._stats(a + r, float(rates[r]), int(sizes[r]), int(extras[r]), {}, {})
                yield (
                    light,
                    [None if v != v else v for v in means[r]],
                    [None if v != v else v for v in stds[r]],
                )


_ROWS_BLOCK = 1024
"""Cases a block of :meth:`CaseTable.score_rows` (its lists are a block's, never all)."""


def _with_nan_column(a: stats.Floats) -> stats.Floats:
    return np.pad(a, ((0, 0), (0, 1)), constant_values=np.nan)


def in_slice(
    name: str,
    *,
    difficulty: str | None,
    tags: Iterable[str],
    no_tool: bool,
    must_not_call: bool,
) -> bool:
    """Whether a case with these labels is in the slice ``name`` (the names of
    :func:`_slices`: ``difficulty=<d>``, ``tag=<t>``, ``no_tool=…``, ``must_not_call=…``)."""
    key, _, value = name.partition("=")
    if key == "difficulty":
        return difficulty == value
    if key == "tag":
        return value in tags
    flag = {"no_tool": no_tool, "must_not_call": must_not_call}.get(key)
    return flag is not None and value in {"true", "false"} and flag == (value == "true")


def _slices(metas: Sequence[CaseMeta]) -> dict[str, stats.Bools]:
    """Slice name → case mask; empty slices are left out."""
    c = len(metas)
    out: dict[str, stats.Bools] = {}

    def add(name: str, mask: stats.Bools) -> None:
        if mask.any():
            out[name] = mask

    diffs = sorted({m.difficulty for m in metas if m.difficulty})
    for d in diffs:
        add(f"difficulty={d}", np.fromiter((m.difficulty == d for m in metas), bool, c))
    tags = sorted({t for m in metas for t in m.tags})
    if tags:
        tag_index = {t: j for j, t in enumerate(tags)}
        grid = np.zeros((len(tags), c), dtype=bool)
        for i, m in enumerate(metas):
            for t in m.tags:
                grid[tag_index[t], i] = True
        for t, j in tag_index.items():
            add(f"tag={t}", grid[j])
    no_tool = np.fromiter((m.expected_no_tool for m in metas), bool, c)
    add("no_tool=true", no_tool)
    add("no_tool=false", ~no_tool)
    mnc = np.fromiter((bool(m.must_not_call) for m in metas), bool, c)
    add("must_not_call=true", mnc)
    add("must_not_call=false", ~mnc)
    return out


@dataclass(frozen=True, slots=True)
class Reduced:
    """The numeric core's output. Slice 0 is the whole dataset (all cases in scope)."""

    case: stats.GroupStats
    case_pass_rate: stats.Floats
    case_pooled: stats.Floats
    case_calls: stats.Floats
    regular_pass_rate: stats.Floats
    regular_sampled: stats.Ints
    """Per case, its initial samples that were sampled (not missing)."""
    slice_names: list[str]
    slice_cases: stats.Ints
    slice_mean: stats.Floats
    slice_n: stats.Floats
    slice_std: stats.Floats
    slice_pass_rate: stats.Floats
    pooled_mean: stats.Floats
    pooled_n: stats.Floats
    pooled_std: stats.Floats
    ci_low: stats.Floats
    ci_high: stats.Floats
    case_sampled: stats.Ints | None = None
    """Per case, its samples that were sampled (not missing); None: all of them."""


def reduce_arrays(
    *,
    values: stats.Floats,
    passed: stats.Bools,
    calls: stats.Floats,
    calls_no_tool: stats.Floats,
    sizes: stats.Ints,
    regular: int,
    slices: Mapping[str, stats.Bools],
    seed: int,
    columns: Sequence[int] | None = None,
    replace: Mapping[int, stats.Floats | stats.Bools] | None = None,
    present: stats.Bools | None = None,
) -> Reduced:
    """The vectorised statistics (what ``bench/policy_bench.py`` times).

    ``present`` (default: every row) marks the rows that were sampled: a missing row
    (every metric NaN, not passed, no call) counts in no pass rate, and a case with no
    present row is in no slice's pass rate.

    ``columns`` picks and orders the metric columns of ``values`` (all by default);
    ``replace`` gives, by position among those, a column to use instead (the pass flag
    for ``case_passed``) — so the caller never copies the whole matrix.

    ``values`` is rows × metrics (NaN = n/a), one row per case-sample, the rows of a case
    contiguous: its ``regular`` regular samples first, then its confirmation samples;
    ``sizes[c]`` rows belong to case ``c``. ``slices`` maps a name to a case mask.

    The regular samples form a cases × samples × metrics cube (a reshape, no copy when
    there are no confirmation samples); the few confirmation rows are added into the
    per-case sums with ``np.add.at``. Slice sums index the cube by the slice's case mask
    (no matrix products: the figures do not depend on BLAS threading).
    """
    c = int(sizes.shape[0])
    k = int(values.shape[1]) if columns is None else len(columns)
    n = regular
    n_extra = sizes - n
    if c and int(n_extra.max()) > 0:
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        reg_rows = (np.arange(values.shape[0]) - np.repeat(starts, sizes)) < n
        extra_case = np.repeat(np.arange(c), n_extra)
    else:
        reg_rows = None
        extra_case = np.zeros(0, dtype=np.int64)

    def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if reg_rows is None:
            return a.reshape(c, n, *a.shape[1:]), a[:0]
        return a[reg_rows].reshape(c, n, *a.shape[1:]), a[~reg_rows]

    p_cube, x_pass = split(passed)
    calls_cube, x_calls = split(calls)
    nt_cube, x_nt = split(calls_no_tool)

    # Slice indicators (slice 0 = every case).
    names = ["", *slices]
    ind = np.ones((len(names), c))
    for li, mask in enumerate(slices.values(), start=1):
        ind[li] = mask

    # The per-metric figures, a block of metric columns at a time: the cube-sized
    # buffers are a block wide, never the whole matrix (a million case-samples of 27
    # metrics are 216 MB; a block of 4 is 32 MB).
    cols = list(range(k)) if columns is None else list(columns)
    # Each block's figures go straight into their columns of the cases × metrics arrays
    # (blocks joined afterwards would hold every figure twice at the peak).
    slices_n = len(names)
    mean, std, initial = np.empty((c, k)), np.empty((c, k)), np.empty((c, k))
    counts = np.empty((c, k), dtype=np.int64)
    per_s_sum, per_s_n = np.empty((slices_n, n, k)), np.empty((slices_n, n, k))
    for j0 in range(0, len(cols), _BLOCK):
        block = cols[j0 : j0 + _BLOCK]
        vals = values[:, block]
        for pos, column in (replace or {}).items():
            if j0 <= pos < j0 + len(block):
                vals[:, pos - j0] = column
        at = slice(j0, j0 + len(block))
        figures = _metric_block(split(vals), extra_case, n, ind)
        del vals
        for out, part in zip(
            (mean, std, counts, per_s_sum, per_s_n, initial), figures, strict=True
        ):
            out[..., at] = part
        del figures
    case = stats.GroupStats(mean=mean, std=std, n=counts)
    # The dataset's and the slices' figures: each case's initial samples (module doc).
    initial0 = np.nan_to_num(initial)
    has = ~np.isnan(initial)

    passes = p_cube.sum(axis=1, dtype=np.float64)
    case_calls = calls_cube.sum(axis=1)
    case_nt = nt_cube.sum(axis=1)
    initial_calls, initial_nt = case_calls.copy(), case_nt.copy()
    if extra_case.size:
        np.add.at(passes, extra_case, x_pass.astype(np.float64))
        np.add.at(case_calls, extra_case, x_calls)
        np.add.at(case_nt, extra_case, x_nt)
    if present is None:
        sampled = sizes
        reg_sampled = np.full(c, n, dtype=np.int64)
    else:
        reg_present, x_present = split(present)
        reg_sampled = reg_present.sum(axis=1).astype(np.int64)
        sampled = reg_sampled.copy()
        if extra_case.size:
            np.add.at(sampled, extra_case, x_present.astype(np.int64))
    pass_rate = passes / np.maximum(sampled, 1)
    case_pooled = stats.pooled_ratio(case_nt, case_calls)
    regular_pass_rate = (
        p_cube.sum(axis=1, dtype=np.float64) / np.maximum(reg_sampled, 1) if n else np.zeros(c)
    )

    # Whole dataset (slice 0) and every slice, from the initial samples (figures rounded
    # to 12 decimals on output, so the BLAS summation order cannot show).
    slice_cases = ind.sum(axis=1).astype(np.int64)
    slice_n = ind @ has.astype(np.float64)
    slice_mean = stats.safe_divide(ind @ initial0, slice_n)
    if present is None:
        slice_pass_rate = stats.safe_divide(ind @ regular_pass_rate, slice_cases)
    else:  # a case that was not sampled at all has no pass rate
        was = (reg_sampled > 0).astype(np.float64)
        slice_pass_rate = stats.safe_divide(ind @ (regular_pass_rate * was), ind @ was)
    slice_std = _std_over_samples(stats.safe_divide(per_s_sum, per_s_n))
    pooled_n = ind @ initial_calls
    pooled_mean = stats.pooled_ratio(ind @ initial_nt, pooled_n)
    per_s_pooled = stats.pooled_ratio(ind @ nt_cube, ind @ calls_cube)
    pooled_std = _std_over_samples(per_s_pooled[:, :, None])[:, 0]

    # The bootstrap's inputs, cases × (metrics + the pooled one), each written once in
    # place (the per-case means without n/a are not needed after them).
    num = np.empty((c, k + 1))
    num[:, :k] = initial0
    num[:, k] = initial_nt
    del initial0
    den = np.empty((c, k + 1))
    den[:, :k] = has
    den[:, k] = initial_calls
    del initial, has  # (cases × metrics each: not held through the bootstrap)
    low, high = stats.bootstrap_ratio_ci(num, den, seed=seed)
    del num, den
    return Reduced(
        case=case,
        case_pass_rate=pass_rate,
        case_pooled=case_pooled,
        case_calls=case_calls,
        regular_pass_rate=regular_pass_rate,
        regular_sampled=reg_sampled,
        slice_names=names,
        slice_cases=slice_cases,
        slice_mean=slice_mean,
        slice_n=slice_n,
        slice_std=slice_std,
        slice_pass_rate=slice_pass_rate,
        pooled_mean=pooled_mean,
        pooled_n=pooled_n,
        pooled_std=pooled_std,
        ci_low=low,
        ci_high=high,
        case_sampled=None if present is None else sampled,
    )


_BLOCK = 4
"""Metric columns reduced together (see ``reduce_arrays``)."""


def _metric_block(
    split_vals: tuple[stats.Floats, stats.Floats],
    extra_case: stats.Ints,
    n: int,
    ind: stats.Floats,
) -> tuple[stats.Floats, stats.Floats, stats.Ints, stats.Floats, stats.Floats, stats.Floats]:
    """For a block of metric columns: per case the mean, the sample std and the count of
    values over every sample (regular + confirmation), per slice and regular sample
    index the sums and counts the dataset-level value of that sample alone is made of,
    and per case the mean over its regular samples alone."""
    cube, x_vals = split_vals
    c = int(cube.shape[0])
    k = int(cube.shape[2])
    valid = ~np.isnan(cube)
    work = np.where(valid, cube, 0.0)  # the one cube-sized buffer: values, then deviations
    x_valid = ~np.isnan(x_vals)
    x_zero = np.where(x_valid, x_vals, 0.0)
    sums = work.sum(axis=1)
    counts = valid.sum(axis=1, dtype=np.int64)
    initial = stats.safe_divide(sums, counts)  # before the extra samples join
    if extra_case.size:
        np.add.at(sums, extra_case, x_zero)
        np.add.at(counts, extra_case, x_valid.astype(np.int64))
    mean = stats.safe_divide(sums, counts)
    mean0 = np.nan_to_num(mean)
    # One matrix product each: counts are summed in float32, exact below 2**24 cases.
    slices = int(ind.shape[0])
    per_s_sum = (ind @ work.reshape(c, n * k)).reshape(slices, n, k)
    per_s_n = (
        (ind.astype(np.float32) @ valid.reshape(c, n * k).astype(np.float32))
        .astype(np.float64)
        .reshape(slices, n, k)
    )
    # Per-case sample std, two-pass (exact 0 for a case whose samples agree).
    np.subtract(work, mean0[:, None, :], out=work)
    np.copyto(work, 0.0, where=~valid)
    ss = np.einsum("csk,csk->ck", work, work)
    del work
    if extra_case.size:
        x_dev = np.where(x_valid, x_vals - mean0[extra_case], 0.0)
        np.add.at(ss, extra_case, x_dev * x_dev)
    std = np.sqrt(stats.safe_divide(ss, counts - 1))
    return mean, std, counts, per_s_sum, per_s_n, initial


def _std_over_samples(x: stats.Floats) -> stats.Floats:
    """Sample std (ddof=1) over axis 1 (sample index) of the non-NaN values."""
    valid = ~np.isnan(x)
    n = valid.sum(axis=1)
    mean = stats.safe_divide(np.where(valid, x, 0.0).sum(axis=1), n)
    dev = np.where(valid, x - np.nan_to_num(mean)[:, None, :], 0.0)
    return np.sqrt(stats.safe_divide((dev * dev).sum(axis=1), n - 1))


def _r(x: float) -> float | None:
    return None if x != x else round(float(x), _ROUND)


def _metric_stats(
    names: Sequence[str], red: Reduced, li: int, *, with_ci: bool
) -> dict[str, MetricStats]:
    # The pooled metric is the last column (its figures apart, its interval last).
    mean = [*red.slice_mean[li], red.pooled_mean[li]]
    std = [*red.slice_std[li], red.pooled_std[li]]
    n = [*red.slice_n[li], red.pooled_n[li]]
    return {
        name: MetricStats(
            mean=_r(mean[j]),
            std=_r(std[j]),
            n=int(n[j]),
            ci_low=_r(red.ci_low[j]) if with_ci else None,
            ci_high=_r(red.ci_high[j]) if with_ci else None,
        )
        for j, name in enumerate((*names, POOLED))
    }


def passed_cases(cases: Sequence[CaseStats]) -> int:
    """How many cases passed every sample."""
    if isinstance(cases, CaseTable):
        return int((cases._rate == 1.0).sum())
    return sum(1 for c in cases if c.passed)


def case_ids(cases: Sequence[CaseStats]) -> list[str]:
    """The case ids, in order."""
    if isinstance(cases, CaseTable):
        return [m.id for m in cases.metas]
    return [c.id for c in cases]


def case_values(cases: Sequence[CaseStats], metric: str) -> stats.Floats:
    """One metric's per-case means as an array (NaN = n/a)."""
    if isinstance(cases, CaseTable) and metric in cases.names:
        return cases._mean[:, cases.names.index(metric)].copy()
    return np.array([c.scores.get(metric) for c in cases], dtype=np.float64)
