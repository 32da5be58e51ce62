"""Typed values to and from results files, between policy and the format (neither imports
the other): parts of the fields policy's tests add to a run's results
(:meth:`gate.pipeline.sequential.Tests.fields`), and what is read back from a results
file — the statistics a baseline is compared on (:func:`stats_of`), the base history it
carries (:func:`history_of`), and shard parts joined and reduced as one run
(:func:`merge_run`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gate import model as m
from gate.model import CASE_HASH_VERSION
from gate.model.usage import usage_of
from gate.pipeline.records import kept_reasons
from gate.policy.engine import Evaluation
from gate.policy.history import (
    HISTORY_WINDOW,
    BaseHistory,
    CaseHistory,
    HistoryEntry,
    MetricSums,
)
from gate.policy.merge import MergePart, merge
from gate.policy.power import Detectability
from gate.policy.reduce import reduce, sample_metric_names
from gate.policy.table import CaseMeta, RowsBuilder
from gate.policy.validity import is_missing
from gate.results import (
    CaseResult,
    HistoryInfo,
    HistoryRun,
    ListRecords,
    Results,
    SampleRecords,
    SuiteTestResult,
    hard_failure_of,
    result_record,
    tallies_of,
)
from gate.scorers.registry import COST_METRICS


def history_entry(run: HistoryRun) -> HistoryEntry:
    """The history entry a results file's history record describes."""
    return HistoryEntry(
        run.passes,
        run.samples,
        {k: MetricSums(int(v[0]), v[1], v[2]) for k, v in run.metrics.items()},
        {k: tuple(v) for k, v in run.values.items()},
    )


def _history_json(h: CaseHistory | None) -> list[HistoryRun]:
    if h is None:
        return []
    return [
        HistoryRun(
            passes=e.passes,
            samples=e.samples,
            metrics={k: [v.n, v.total, v.total_sq] for k, v in sorted(e.metrics.items())},
            values={k: list(v) for k, v in sorted(e.values.items())},
        )
        for e in h.entries
    ]


ENGINE_PARAMS = ("alpha", "min_effect", "suite_min_effect", "flaky_ceiling")
"""The engine's parameters results.json's ``policy.params`` holds by the same name."""
ALPHAS = ("alpha_case", "alpha_suite", "alpha_flaky")


SUITE_FIELDS = tuple(k for k in SuiteTestResult.model_fields if not k.startswith("typical"))
"""What a suite test writes as it is, by the same name (its cost evidence written as the
typical case's change and p-value; its slice and bound are the config's)."""


class CaseFields(Mapping[str, Mapping[str, Any]]):
    """Per case id, its ``hash``, ``setup``, ``history`` and ``test`` as results.json
    holds them: made as the writer asks for a case, never all at once."""

    def __init__(
        self, evaluation: Evaluation, hashes: Mapping[str, str], history: BaseHistory
    ) -> None:
        self._verdicts = evaluation.cases
        self._hashes = hashes
        self._history = history

    def __getitem__(self, case_id: str) -> Mapping[str, Any]:
        h = self._history.cases.get(case_id)
        return {
            "hash": self._hashes.get(case_id),
            "setup": None if h is None else h.setup,
            "history": _history_json(h),
            "test": self._verdicts[case_id],
        }

    def __iter__(self) -> Iterator[str]:
        return iter(self._verdicts)

    def __len__(self) -> int:
        return len(self._verdicts)


def history_info(
    evaluation: Evaluation, min_history: int, detection: Detectability | None
) -> HistoryInfo:
    depths = sorted(v.base.samples for v in evaluation.cases.values() if v.base is not None)
    return HistoryInfo(
        min_history=min_history,
        comparable=len(depths),
        short=sum(1 for d in depths if d < min_history),
        median_samples=depths[len(depths) // 2] if depths else None,
        caught_broken=None if detection is None else detection.stable_broken,
        caught_half=None if detection is None else detection.stable_half,
    )


def history_of(
    results: Results,
    hashes: Mapping[str, str],
    *,
    dataset_sha256: str,
    legacy: Mapping[str, str] | None = None,
) -> BaseHistory:
    """The base history a results file carries. A case written with a hash and a history
    keeps them — a file of the previous release (``case_hash_version`` 1) hashed the
    case with its tools and agent: where that hash equals ``legacy`` (the case as the
    base run saw it, hashed that way) the history takes the current hash, and otherwise
    keeps the stale one (not comparable). A case of an earlier release's file (no hash)
    starts its history from its counts in that file, with the hash the case has now
    (``hashes``) when the file was made from the same dataset (sha256) — and no hash, so
    not comparable, when not."""
    same = results.dataset.sha256 == dataset_sha256
    window = results.policy.params.history_window if results.policy else HISTORY_WINDOW
    out: dict[str, CaseHistory] = {}
    names = results.metric_names
    for c in results.cases:
        if c.hash is not None and c.history:
            hash_, setup = c.hash, c.setup
            if results.case_hash_version < CASE_HASH_VERSION:
                matched = legacy is not None and legacy.get(c.id) == c.hash
                hash_ = hashes.get(c.id, c.hash) if matched else c.hash
                setup = None
            out[c.id] = CaseHistory(hash_, tuple(history_entry(e) for e in c.history), setup)
            continue
        hash_ = c.hash if c.hash is not None else (hashes.get(c.id, "") if same else "")
        per_metric = {n: [s.scores[j] for s in c.samples] for j, n in enumerate(names)}
        sums = {n: MetricSums.of(vals) for n, vals in per_metric.items()}
        entry = HistoryEntry(
            sum(1 for s in c.samples if s.passed),
            len(c.samples),
            {n: v for n, v in sums.items() if v.n},
            {
                n: kept
                for n, vals in per_metric.items()
                if n in COST_METRICS and (kept := tuple(v for v in vals if v is not None))
            },
        )
        out[c.id] = CaseHistory(hash_, (entry,))
    return BaseHistory(out, window)


def stats_of(results: Results) -> m.SuiteStats:
    """The typed statistics of a results file (a baseline to compare with, results to
    report on): what :func:`gate.baseline.diff.compare` and the confirmation stage read."""
    return m.SuiteStats(
        **{k: getattr(results, k) for k in _STATS_AS_IS},
        header=header_of(results),
        metric_names=tuple(results.metric_names),
        cases=tuple(_case_of(results, c) for c in results.cases),
        hard_failures=tuple(hard_failure_of(h) for h in results.hard_failures),
        usage=dict(results.usage),
        pass_hat=tuple(results.pass_hat),
        advisor=None,
        notices=tuple(results.notices),
        timing=dict(results.timing),
    )


_STATS_AS_IS = ("samples", "metrics", "slices", "per_tool", "confusion", "malformed", "confirm")
"""The statistics results.json holds at its top level as they are, by the same names."""


def header_of(results: Results) -> m.RunHeader:
    """The header of the run a results file holds."""
    return m.RunHeader(**{f.name: getattr(results, f.name) for f in _HEADER})


_HEADER = dataclasses.fields(m.RunHeader)
"""A run header's fields: results.json holds each at its top level, by the same name."""


_AS_IS = ("id", "line", "difficulty", "expected_no_tool")
"""A case's labels as results.json, :class:`CaseMeta` and :class:`~gate.model.CaseStats`
hold them, by the same names."""


def _case_of(results: Results, c: CaseResult) -> m.CaseStats:
    tally = Counter(check for s in c.samples for check in s.failed_checks)
    hard = {h.sample for h in results.hard_failures if h.case_id == c.id}
    initial = [
        s.passed
        for s in c.samples
        if not s.extra and not is_missing(s.error, (True,) if s.sample in hard else ())
    ]
    return m.CaseStats(
        **{k: getattr(c, k) for k in (*_AS_IS, "passed", "pass_rate", "flaky", "extra_samples")},
        tags=tuple(c.tags),
        must_not_call=tuple(c.must_not_call),
        tools=tuple(c.tools),
        samples=len(c.samples),
        scores=results.case_scores(c),
        std=results.case_std(c),
        failed_checks=tuple(n for n, _ in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))),
        initial_pass_rate=sum(initial) / len(initial) if initial else 0.0,
        initial_samples=len(initial),
    )


# ─── merging shard results ────────────────────────────────────────────────────


def merge_part(name: str, results: Results, names: Sequence[str]) -> MergePart:
    """One shard's results, typed for :func:`gate.policy.merge.merge`; its sample records
    are written over ``names`` (every part's metric names, together)."""
    metas = tuple(
        CaseMeta(
            **{k: getattr(c, k) for k in _AS_IS},
            tags=tuple(c.tags),
            must_not_call=tuple(c.must_not_call),
            expect_tools=tuple(c.tools),
        )
        for c in results.cases
    )
    hard: dict[tuple[str, int], list[m.HardFailure]] = {}
    for h in results.hard_failures:
        hard.setdefault((h.case_id, h.sample), []).append(hard_failure_of(h))
    builder = RowsBuilder(names, metas)
    records: list[list[bytes]] = []
    own = results.metric_names
    for i, c in enumerate(results.cases):
        for s in c.samples:
            builder.add(
                i,
                s.sample,
                passed=s.passed,
                scores=dict(zip(own, s.scores, strict=True)),
                failed_checks=s.failed_checks,
                tallies=tallies_of(s.tallies),
                usage=usage_of(s.usage, s.usage_error),
                hard=hard.get((c.id, s.sample), ()),
                extra=s.extra,
                error=s.error,
            )
        ordered = sorted(c.samples, key=lambda s: (s.extra, s.sample))
        records.append(
            [result_record(s, names=own, write=names, keep=kept_reasons) for s in ordered]
        )
    flags = [[s.extra for s in c.samples] for c in results.cases]
    return MergePart(
        name=name,
        header=header_of(results),
        samples=results.samples,
        metas=metas,
        regular=tuple(len(f) - sum(f) for f in flags),
        extras_last=tuple(f == sorted(f) for f in flags),
        rows=builder.build(),
        records=records,
        max_extra=results.confirm.max_extra_samples if results.confirm else 0,
        judge=results.judge,
        notices=tuple(results.notices),
        timing=results.timing,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class MergedRun:
    """Shard parts joined and reduced: the whole dataset's statistics and records, and
    the judge block and timing the parts bring (:func:`merge_run`)."""

    stats: m.SuiteStats
    records: SampleRecords
    judge: Mapping[str, Any] | None
    timing: Mapping[str, Any]


def merge_run(parts: Sequence[tuple[str, Results]]) -> MergedRun:
    """Merge ``(display name, results)`` shard parts (:mod:`gate.policy.merge` says what
    is refused) and reduce them as one run."""
    names = sample_metric_names({n for _, r in parts for n in r.metric_names})
    merged = merge([merge_part(name, r, names) for name, r in parts])
    suite = reduce(merged.table, merged.header, seed=merged.seed, max_extra=merged.max_extra)
    suite = dataclasses.replace(suite, notices=(*merged.notices, *suite.notices))
    return MergedRun(suite, ListRecords(merged.records), merged.judge, merged.timing)
