"""Reduce sample scores over samples and cases: per-case statistics, dataset-level metrics,
slices, per-tool rollup, confusion matrix, hard failures. No verdict (see ``decide``).

Layer 2 of 3 (score one sample → **reduce over samples** → decide). Definitions:

* **per case**: pass rate = passed samples ÷ samples run (confirmation samples included);
  flaky = 0 < pass rate < 1; ``passed`` = every sample passed. For each metric, the mean
  over the samples where it applied (``None`` = n/a in all of them) and the sample
  standard deviation (ddof=1; only with ≥ 2 values).
* **dataset level** (and per slice): a metric's value is the mean over cases of per-case
  means, leaving out cases where it is n/a (``n`` = cases with a value; ``None`` when
  none). ``std`` is the sample standard deviation over sample indices 0…N−1 of the
  dataset-level value computed from that sample alone (regular samples only; ``None``
  with N < 2). ``ci_low``/``ci_high``: a percentile bootstrap 95% interval over cases,
  seeded by the config's ``seed`` (dataset level only; ``None`` with < 2 cases).
* **pooled** ``unnecessary_call_rate`` = Σ calls made on no-tool cases ÷ Σ calls made
  (tallies ``calls_on_no_tool`` and ``calls``), over every sample of every case in scope:
  a ratio of sums, never a mean of cases. With no call made at all it is 0.0 (no call was
  unnecessary); its ``n`` is the number of calls. Per case the same ratio over the case's
  samples.
* ``case_passed`` is always taken from each sample's ``passed`` flag (1.0 / 0.0).
* **slices**: ``difficulty=<d>``, ``tag=<t>``, ``no_tool=true|false`` (``expected_no_tool``),
  ``must_not_call=true|false`` (the case lists must-not-call tools); empty slices are left out.
* **per tool** (tallies ``per_tool``: ``{name: [expected, matched, called]}``), summed over
  every sample: recall = matched ÷ expected (``None`` when never expected).
* **confusion** (tallies ``confusion``: ``[[expected_name, actual_name], …]``) counted over
  every sample; a missing actual name (``None``) is counted under ``"(none)"``.
* **malformed** (tallies ``malformed``: ``{class: count}`` or a list of classes) summed.

All statistics are numpy over a rows × metrics array (one row per case-sample): no Python
loop runs per sample in the statistics. The Python work left is reading each sample's
scores into that array and building the per-sample records of results.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gate import __version__
from gate.config import Config
from gate.gcpause import no_gc
from gate.model import Case, DatasetLike, HardFailure, SampleScore, Shard
from gate.policy import stats
from gate.policy.advisor import advise
from gate.results import (
    CaseResult,
    ConfirmInfo,
    DatasetInfo,
    HardFailureResult,
    MetricStat,
    Results,
    SampleResult,
    ShardInfo,
    SliceResult,
    ToolInfo,
    ToolRollup,
    construct,
    evidence_json,
    tallies_json,
)
from gate.scorers.registry import METRICS, POOLED_METRICS

POOLED = "unnecessary_call_rate"
CASE_PASSED = "case_passed"
NO_ACTUAL = "(none)"
_ROUND = 12
"""Dataset- and slice-level figures are rounded to 12 decimals: they come from matrix
products whose last bits depend on the BLAS summation order."""


@dataclass(frozen=True, slots=True)
class CaseMeta:
    """What the reduction needs to know of a case besides its samples."""

    id: str
    line: int | None
    difficulty: str | None
    tags: tuple[str, ...]
    expected_no_tool: bool
    must_not_call: tuple[str, ...]
    expect_tools: tuple[str, ...]
    """Tools named by the expectations, the alternatives and must-not-call."""

    @classmethod
    def of(cls, case: Case) -> CaseMeta:
        names: dict[str, None] = {}
        for calls in case.expectation_lists():
            for call in calls:
                names[call.name] = None
        for name in case.must_not_call:
            names[name] = None
        return cls(
            id=case.id,
            line=case.source.line,
            difficulty=None if case.difficulty is None else str(case.difficulty),
            tags=tuple(case.tags),
            expected_no_tool=case.expected_no_tool,
            must_not_call=tuple(case.must_not_call),
            expect_tools=tuple(names),
        )


def build_results(
    *,
    dataset: DatasetLike,
    scores: Sequence[SampleScore],
    config: Config | None,
    agent: Mapping[str, Any],
    shard: Shard | None,
    timing: Mapping[str, Any],
    extra_scores: Sequence[SampleScore] = (),
) -> Results:
    """Reduce every sample score of a run into a :class:`Results` (no verdict yet).

    ``scores`` hold the same number of samples N for every case of the dataset (of the
    shard, with ``shard``), each (case, sample) once — the runs file's coverage check
    (:class:`gate.runsfile.Coverage`) saw to that; ``extra_scores`` are confirmation
    samples (``confirm:``), recorded with ``extra: true``, counted in their case's pass
    rate and means but not in the dataset-level std over samples.
    """
    in_scope = [c for c in dataset.cases if shard is None or shard.holds(c.id)]
    metas = [CaseMeta.of(c) for c in in_scope]
    with no_gc():
        samples, hard = _sample_records(metas, scores, extra_scores)
    seed = config.seed if config is not None else 0
    cases_sha = getattr(dataset, "cases_sha256", None)
    header: dict[str, Any] = {
        "toolgate_version": __version__,
        "gate_name": config.name if config is not None else "toolgate",
        "dataset": DatasetInfo(
            path=dataset.display,
            version=config.dataset.version if config is not None else None,
            sha256=dataset.sha256,
            cases=len(in_scope),
            total_cases=len(dataset.cases),
            cases_sha256=cases_sha,
        ),
        "agent": dict(agent),
        "seed": seed,
        "shard": ShardInfo(index=shard.index, count=shard.count) if shard else None,
        "tools": {
            name: ToolInfo(
                hash=spec.definition_hash(),
                description=spec.description,
                parameters=dict(spec.parameters),
            )
            for name, spec in sorted(dataset.tools.items())
        },
        "timing": {**_latency(scores, extra_scores), **timing},
    }
    max_extra = config.confirm.max_extra_samples if config is not None else 0
    with no_gc():
        return assemble(metas, samples, hard, header=header, seed=seed, max_extra=max_extra)


def _latency(*groups: Sequence[SampleScore]) -> dict[str, Any]:
    """Agent latency over every case-sample (timing: it differs between identical runs)."""
    ms = np.fromiter(
        (s.latency_ms for g in groups for s in g if s.latency_ms is not None), dtype=np.float64
    )
    if ms.size == 0:
        return {}
    p50, p95 = np.percentile(ms, [50, 95])
    return {
        "latency_ms": {
            "total": round(float(ms.sum()), 1),
            "mean": round(float(ms.mean()), 1),
            "p50": round(float(p50), 1),
            "p95": round(float(p95), 1),
            "max": round(float(ms.max()), 1),
        }
    }


# ─── per-sample records ──────────────────────────────────────────────────────


def _sample_records(
    metas: Sequence[CaseMeta],
    scores: Sequence[SampleScore],
    extra_scores: Sequence[SampleScore],
) -> tuple[list[list[SampleResult]], list[HardFailureResult]]:
    index = {m.id: i for i, m in enumerate(metas)}
    regular: list[list[SampleScore]] = [[] for _ in metas]
    extra: list[list[SampleScore]] = [[] for _ in metas]
    for group, bucket in ((scores, regular), (extra_scores, extra)):
        for s in group:
            bucket[index[s.case_id]].append(s)
    records: list[list[SampleResult]] = []
    hard: list[HardFailureResult] = []
    for i, meta in enumerate(metas):
        got = regular[i]
        got.sort(key=_by_sample)
        rows = [_record(x, False) for x in got]
        if extra[i]:
            extra[i].sort(key=_by_sample)
            rows.extend(_record(x, True) for x in extra[i])
            got = sorted((*got, *extra[i]), key=_by_sample)
        records.append(rows)
        for x in got:
            if x.hard_failures:
                hard.extend(_hard(meta, x.sample, h) for h in x.hard_failures)
    return records, hard


def _hard(meta: CaseMeta, sample: int, h: HardFailure) -> HardFailureResult:
    return construct(
        HardFailureResult,
        {
            "kind": str(h.kind),
            "case_id": meta.id,
            "sample": sample,
            "call": h.call.to_json(),
            "message": h.message,
            "line": meta.line,
        },
    )


def _by_sample(s: SampleScore) -> int:
    return s.sample


_PASS = {True: 1.0, False: 0.0}


def _record(s: SampleScore, extra: bool) -> SampleResult:
    scores = s.scores if type(s.scores) is dict else dict(s.scores)
    passed = bool(s.passed)
    if scores.get(CASE_PASSED) != _PASS[passed]:
        scores = {**scores, CASE_PASSED: _PASS[passed]}
    usage = s.usage
    return construct(
        SampleResult,
        {
            "sample": s.sample,
            "passed": passed,
            "scores": scores,
            "failed_checks": list(s.failed_checks),
            "reasons": s.reasons if type(s.reasons) is dict else dict(s.reasons),
            "evidence": {} if s.evidence is None else evidence_json(s.evidence),
            "tallies": tallies_json(s.tallies),
            "error": s.error,
            "usage": usage if usage is None or type(usage) is dict else dict(usage),
            "extra": extra,
        },
    )


# ─── the reduction ───────────────────────────────────────────────────────────


def assemble(
    metas: Sequence[CaseMeta],
    samples: Sequence[Sequence[SampleResult]],
    hard_failures: Sequence[HardFailureResult],
    *,
    header: Mapping[str, Any],
    seed: int,
    max_extra: int,
) -> Results:
    """Compute every statistic from per-case sample records and build the Results.

    Shared by ``build_results`` and ``toolgate merge`` (which passes the records of the
    shards), so a merged run equals the unsharded one. Each case's regular samples come
    first in its list, then its confirmation samples (``extra``).
    """
    flat = [s for case in samples for s in case]
    names = _metric_names(flat)
    arrays = _arrays(flat, names)
    sizes = np.fromiter((len(c) for c in samples), dtype=np.int64, count=len(samples))
    n_extra = np.fromiter(
        (sum(s.extra for s in c) for c in samples), dtype=np.int64, count=len(samples)
    )
    reg_n = int((sizes - n_extra)[0]) if len(samples) else 0
    reduced = reduce_arrays(
        values=arrays.values,
        passed=arrays.passed,
        calls=arrays.calls,
        calls_no_tool=arrays.calls_no_tool,
        sizes=sizes,
        regular=reg_n,
        slices=_slices(metas),
        seed=seed,
    )
    tallies = _pool_tallies(samples)
    cases = _case_results(metas, samples, names, reduced, tallies.called_by_case, n_extra)
    notices: list[str] = []
    if reg_n == 1:
        notices.append(
            "samples: 1 — the std over samples and the flaky share need at least 2 samples "
            "per case (shown as n/a), and every case counts as stable: one failing run flips it"
        )
    extra_total = int(n_extra.sum())
    confirm = None
    if max_extra or extra_total:
        confirm = ConfirmInfo(
            max_extra_samples=max_extra,
            extra_samples=extra_total,
            cases={metas[i].id: int(k) for i, k in enumerate(n_extra) if k},
        )
    regular_pass = reduced.regular_pass_rate
    advisor = advise(samples=reg_n, case_pass_rates=regular_pass)
    return Results(
        **header,
        samples=reg_n,
        metrics=_metric_stats(names, reduced, 0, with_ci=True),
        slices={
            name: SliceResult(
                cases=int(reduced.slice_cases[li]),
                pass_rate=stats.clean(round(float(reduced.slice_pass_rate[li]), _ROUND)),
                metrics=_metric_stats(names, reduced, li, with_ci=False),
            )
            for li, name in enumerate(reduced.slice_names)
            if li > 0
        },
        per_tool=tallies.per_tool,
        confusion=tallies.confusion,
        malformed=tallies.malformed,
        hard_failures=list(hard_failures),
        cases=cases,
        usage=tallies.usage(len(metas)),
        advisor=advisor,
        confirm=confirm,
        notices=notices,
    )


def _metric_names(flat: Sequence[SampleResult]) -> list[str]:
    seen: set[str] = set()
    for s in flat:
        seen.update(s.scores)
    seen.add(CASE_PASSED)
    seen -= POOLED_METRICS
    known = [m for m in METRICS if m in seen]
    return known + sorted(seen.difference(METRICS))


@dataclass(frozen=True, slots=True)
class _Arrays:
    values: stats.Floats
    passed: stats.Bools
    calls: stats.Floats
    calls_no_tool: stats.Floats


def _arrays(flat: Sequence[SampleResult], names: Sequence[str]) -> _Arrays:
    r = len(flat)
    if r == 0:
        return _Arrays(np.zeros((0, len(names))), np.zeros(0, bool), np.zeros(0), np.zeros(0))
    # The one Python pass over samples: read each sample's scores into a row.
    values = np.array([list(map(s.scores.get, names)) for s in flat], dtype=np.float64)
    if np.isinf(values).any():
        bad = np.argwhere(np.isinf(values))[0]
        s = flat[int(bad[0])]
        raise ValueError(f"scorer bug: {names[int(bad[1])]} is infinite in sample {s.sample}")
    passed = np.fromiter((s.passed for s in flat), dtype=np.bool_, count=r)
    values[:, names.index(CASE_PASSED)] = passed
    calls = np.fromiter((s.tallies.get("calls", 0) for s in flat), dtype=np.float64, count=r)
    calls_nt = np.fromiter(
        (s.tallies.get("calls_on_no_tool", 0) for s in flat), dtype=np.float64, count=r
    )
    return _Arrays(values, passed, calls, calls_nt)


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
) -> Reduced:
    """The vectorised statistics (what ``bench/policy_bench.py`` times).

    ``values`` is rows × metrics (NaN = n/a), one row per case-sample, the rows of a case
    contiguous: its ``regular`` regular samples first, then its confirmation samples;
    ``sizes[c]`` rows belong to case ``c``. ``slices`` maps a name to a case mask.

    The regular samples form a cases × samples × metrics cube (a reshape, no copy when
    there are no confirmation samples); the few confirmation rows are added into the
    per-case sums with ``np.add.at``. Slice sums index the cube by the slice's case mask
    (no matrix products: the figures do not depend on BLAS threading).
    """
    c = int(sizes.shape[0])
    k = int(values.shape[1])
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

    cube, x_vals = split(values)
    p_cube, x_pass = split(passed)
    calls_cube, x_calls = split(calls)
    nt_cube, x_nt = split(calls_no_tool)

    # Per case: mean and sample std over every sample (regular + confirmation).
    valid = ~np.isnan(cube)
    work = np.where(valid, cube, 0.0)  # the one cube-sized buffer: values, then deviations
    x_valid = ~np.isnan(x_vals)
    x_zero = np.where(x_valid, x_vals, 0.0)
    sums = work.sum(axis=1)
    counts = valid.sum(axis=1, dtype=np.int64)
    if extra_case.size:
        np.add.at(sums, extra_case, x_zero)
        np.add.at(counts, extra_case, x_valid.astype(np.int64))
    mean = stats.safe_divide(sums, counts)
    mean0 = np.nan_to_num(mean)

    # Slice indicators (slice 0 = every case) and, per slice and sample index, the sums
    # and counts the dataset-level value of that sample alone is made of. One matrix
    # product each: counts are summed in float32, exact below 2**24 cases.
    names = ["", *slices]
    ind = np.ones((len(names), c))
    for li, mask in enumerate(slices.values(), start=1):
        ind[li] = mask
    per_s_sum = (ind @ work.reshape(c, n * k)).reshape(len(names), n, k)
    per_s_n = (
        (ind.astype(np.float32) @ valid.reshape(c, n * k).astype(np.float32))
        .astype(np.float64)
        .reshape(len(names), n, k)
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
    case = stats.GroupStats(mean=mean, std=std, n=counts)

    passes = p_cube.sum(axis=1, dtype=np.float64)
    case_calls = calls_cube.sum(axis=1)
    case_nt = nt_cube.sum(axis=1)
    if extra_case.size:
        np.add.at(passes, extra_case, x_pass.astype(np.float64))
        np.add.at(case_calls, extra_case, x_calls)
        np.add.at(case_nt, extra_case, x_nt)
    pass_rate = passes / np.maximum(sizes, 1)
    case_pooled = stats.pooled_ratio(case_nt, case_calls)
    regular_pass_rate = p_cube.mean(axis=1) if n else np.zeros(c)

    # Whole dataset (slice 0) and every slice (figures rounded to 12 decimals on output,
    # so the BLAS summation order cannot show).
    has = counts > 0
    slice_cases = ind.sum(axis=1).astype(np.int64)
    slice_n = ind @ has.astype(np.float64)
    slice_mean = stats.safe_divide(ind @ mean0, slice_n)
    slice_pass_rate = stats.safe_divide(ind @ pass_rate, slice_cases)
    slice_std = _std_over_samples(stats.safe_divide(per_s_sum, per_s_n))
    pooled_n = ind @ case_calls
    pooled_mean = stats.pooled_ratio(ind @ case_nt, pooled_n)
    per_s_pooled = stats.pooled_ratio(ind @ nt_cube, ind @ calls_cube)
    pooled_std = _std_over_samples(per_s_pooled[:, :, None])[:, 0]

    low, high = stats.bootstrap_ratio_ci(
        np.concatenate([mean0, case_nt[:, None]], axis=1),
        np.concatenate([has.astype(np.float64), case_calls[:, None]], axis=1),
        seed=seed,
    )
    return Reduced(
        case=case,
        case_pass_rate=pass_rate,
        case_pooled=case_pooled,
        case_calls=case_calls,
        regular_pass_rate=regular_pass_rate,
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
    )


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
) -> dict[str, MetricStat]:
    out: dict[str, MetricStat] = {}
    for j, name in enumerate(names):
        out[name] = MetricStat(
            mean=_r(red.slice_mean[li, j]),
            std=_r(red.slice_std[li, j]),
            n=int(red.slice_n[li, j]),
            ci_low=_r(red.ci_low[j]) if with_ci else None,
            ci_high=_r(red.ci_high[j]) if with_ci else None,
        )
    k = len(names)
    out[POOLED] = MetricStat(
        mean=_r(red.pooled_mean[li]),
        std=_r(red.pooled_std[li]),
        n=int(red.pooled_n[li]),
        ci_low=_r(red.ci_low[k]) if with_ci else None,
        ci_high=_r(red.ci_high[k]) if with_ci else None,
    )
    return out


def _none_grid(a: stats.Floats) -> list[list[float | None]]:
    obj = a.astype(object)
    obj[np.isnan(a)] = None
    rows: list[list[float | None]] = obj.tolist()
    return rows


def _case_results(
    metas: Sequence[CaseMeta],
    samples: Sequence[Sequence[SampleResult]],
    names: Sequence[str],
    red: Reduced,
    called_by_case: Sequence[Iterable[str]],
    n_extra: stats.Ints,
) -> list[CaseResult]:
    means = _none_grid(red.case.mean)
    stds = _none_grid(red.case.std)
    pass_rates = red.case_pass_rate.tolist()
    pooled = red.case_pooled.tolist()
    extras = n_extra.tolist()
    out: list[CaseResult] = []
    for i, meta in enumerate(metas):
        scores = dict(zip(names, means[i], strict=True))
        scores[POOLED] = pooled[i]
        rate = pass_rates[i]
        tools = dict.fromkeys(meta.expect_tools)
        for name in called_by_case[i]:
            tools.setdefault(name)
        out.append(
            construct(
                CaseResult,
                {
                    "id": meta.id,
                    "line": meta.line,
                    "difficulty": meta.difficulty,
                    "tags": list(meta.tags),
                    "expected_no_tool": meta.expected_no_tool,
                    "must_not_call": list(meta.must_not_call),
                    "tools": list(tools),
                    "passed": rate == 1.0,
                    "pass_rate": rate,
                    "flaky": 0.0 < rate < 1.0,
                    "scores": scores,
                    "std": {n: v for n, v in zip(names, stds[i], strict=True) if v is not None},
                    "extra_samples": extras[i],
                    "samples": list(samples[i]),
                },
            )
        )
    return out


# ─── tallies pooled over every sample ────────────────────────────────────────


@dataclass(slots=True)
class _Tallies:
    per_tool: dict[str, ToolRollup]
    confusion: dict[str, dict[str, int]]
    malformed: dict[str, int]
    usage_totals: dict[str, float]
    called_by_case: list[list[str]]

    def usage(self, cases: int) -> dict[str, float]:
        """Totals, and per-case means (``<key>_per_case``)."""
        out: dict[str, float] = {}
        for key, total in sorted(self.usage_totals.items()):
            out[key] = total
            if cases:
                out[f"{key}_per_case"] = round(total / cases, 6)
        return out


def _pool_tallies(samples: Sequence[Sequence[SampleResult]]) -> _Tallies:
    per_tool: dict[str, list[int]] = {}
    confusion: dict[str, dict[str, int]] = {}
    malformed: dict[str, int] = {}
    usage: dict[str, float] = {}
    called_by_case: list[list[str]] = []
    for case in samples:
        called: dict[str, None] = {}
        for s in case:
            t = s.tallies
            if t:
                pt = t.get("per_tool")
                if pt:
                    for name, triple in pt.items():
                        acc = per_tool.get(name)
                        if acc is None:
                            acc = per_tool[name] = [0, 0, 0]
                        e, m, c = triple
                        acc[0] += e
                        acc[1] += m
                        acc[2] += c
                        if c:
                            called[name] = None
                cf = t.get("confusion")
                if cf:
                    for expected, actual in cf:
                        row = confusion.setdefault(str(expected), {})
                        key = NO_ACTUAL if actual is None else str(actual)
                        row[key] = row.get(key, 0) + 1
                mf = t.get("malformed")
                if mf:
                    items = mf.items() if isinstance(mf, Mapping) else ((kind, 1) for kind in mf)
                    for kind, count in items:
                        malformed[str(kind)] = malformed.get(str(kind), 0) + int(count)
            if s.usage:
                for key, val in s.usage.items():
                    if isinstance(val, int | float) and not isinstance(val, bool):
                        usage[key] = usage.get(key, 0) + val
        called_by_case.append(list(called))
    rollup = {
        name: ToolRollup(
            expected=e,
            matched=m,
            recall=round(m / e, _ROUND) if e else None,
            called=c,
        )
        for name, (e, m, c) in sorted(per_tool.items())
    }
    return _Tallies(rollup, confusion, malformed, usage, called_by_case)
