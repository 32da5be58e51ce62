"""The score stage: a runs file → the scores of its runs → their reduction.

The runs file is read through its :class:`~gate.runsfile.RunsIndex` (opened once, shared
with the later stages); an executor — serial, or a pool of forked workers — reads and
scores the lines, passed in the way a transport is passed to an HTTP client
(:mod:`gate.pipeline._scorepool`, private, holds both; :func:`default_executor` picks one
for the file's size). Coverage is checked once, as the lines are read
(:class:`~gate.runsfile.Coverage`): a run of a case the dataset does not have, of a case
of another shard, a (case, sample) recorded twice, a case with no run, cases with unequal
sample counts — each problem naming the runs file's line. A malformed line stops the read
at that line.

The stage returns a :class:`Scored`: the samples as a table for the reduction, their
results.json records, and the :class:`~gate.model.SuiteStats` the reduction made of them —
the value the comparison and the decision take next.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import __version__
from gate.agents import RUNS_FILE_KIND
from gate.config import Config
from gate.jsonio import no_gc
from gate.model import DatasetLike, DatasetRef, RunHeader, SampleScore, Shard, SuiteStats, ToolRef
from gate.pipeline._scorepool import (
    RowRecords,
    ScoredRuns,
    ScoreExecutor,
    ScoreJob,
    default_executor,
    workers_setting,
)
from gate.pipeline.inputs import scoring_context
from gate.pipeline.records import sample_record
from gate.policy.reduce import reduce, sample_metric_names
from gate.policy.table import (
    CaseMeta,
    RowsBuilder,
    SampleRows,
    SampleTable,
    assemble,
    metas_of,
)
from gate.results import Decisions, Results
from gate.results import assemble as assemble_results
from gate.runsfile import Coverage, RunsIndex
from gate.scorers.context import NormalizerTable

__all__ = [
    "ScoreExecutor",
    "Scored",
    "agent_info",
    "default_executor",
    "reduce_runs",
    "run_header",
    "score_file",
    "score_runs",
    "score_stage",
    "scores_to_scored",
    "unrecorded_calls",
    "unrecorded_notice",
    "workers_setting",
]


@dataclass(slots=True)
class Scored:
    """What the score stage hands on (module docstring). ``batches`` are the rows the
    table was assembled from (the confirmation stage adds its own and reduces again);
    ``runs`` says where each scored run is in the runs file."""

    stats: SuiteStats
    table: SampleTable
    batches: list[SampleRows]
    records: RowRecords
    """The sample records, read in the table's order (:class:`gate.results.SampleRecords`)."""
    runs: ScoredRuns
    seed: int
    max_extra: int
    timing: dict[str, Any] = field(default_factory=dict)
    _results: Results | None = None

    @property
    def results(self) -> Results:
        """The results of the run without a verdict (assembled on first use)."""
        if self._results is None:
            self._results = assemble_results(
                self.stats, self.records, Decisions(timing=self.timing)
            )
        return self._results


def run_header(
    dataset: DatasetLike,
    config: Config | None,
    agent: Mapping[str, Any],
    shard: Shard | None,
) -> RunHeader:
    """The header of a run on ``dataset`` (the one place it is built for a scored run)."""
    scope = sum(1 for c in dataset.cases if shard is None or shard.holds(c.id))
    return RunHeader(
        toolgate_version=__version__,
        gate_name=config.name if config is not None else "toolgate",
        dataset=DatasetRef(
            path=dataset.display,
            version=config.dataset.version if config is not None else None,
            sha256=dataset.sha256,
            cases=scope,
            total_cases=len(dataset.cases),
            cases_sha256=dataset.cases_sha256,
        ),
        agent=dict(agent),
        seed=config.seed if config is not None else 0,
        shard=shard,
        scoring_sha256=config.scoring_sha256() if config is not None else None,
        tools={
            name: ToolRef(
                hash=spec.definition_hash(),
                description=spec.description,
                parameters=dict(spec.parameters),
            )
            for name, spec in sorted(dataset.tools.items())
        },
    )


def score_runs(
    *,
    dataset: DatasetLike,
    runs: RunsIndex,
    config: Config | None,
    shard: Shard | None,
    executor: ScoreExecutor | None = None,
    norms: NormalizerTable | None = None,
) -> ScoredRuns:
    """Read and score every run of ``runs``, checking that they cover exactly the dataset's
    cases (of the shard); the index learns where each scored run is."""
    coverage = Coverage(
        dataset.cases, runs_display=runs.display, dataset_display=dataset.display, shard=shard
    )
    metas = metas_of(c for c in dataset.cases if shard is None or shard.holds(c.id))
    # The cyclic collector finds nothing in these acyclic records but rescans the growing
    # heap again and again (a fifth of the time): pause it while reading and scoring.
    with no_gc():
        ctx = scoring_context(config, dataset, norms=norms)
        job = ScoreJob(
            index=runs,
            coverage=coverage,
            cases=dataset.cases,
            ctx=ctx,
            metas=metas,
            keep_runs=config is not None and config.judge is not None,
        )
        scored = (executor or default_executor(runs)).score(job)
    runs.rows = scored.rows
    return scored


def score_stage(
    *,
    dataset: DatasetLike,
    runs: RunsIndex,
    config: Config | None = None,
    shard: Shard | None = None,
    agent: Mapping[str, Any] | None = None,
    executor: ScoreExecutor | None = None,
    norms: NormalizerTable | None = None,
) -> Scored:
    """Score a runs file against the dataset and reduce the scores; no verdict yet
    (:func:`score_runs`, then :func:`reduce_runs`)."""
    t0 = time.perf_counter()
    scored = score_runs(
        dataset=dataset, runs=runs, config=config, shard=shard, executor=executor, norms=norms
    )
    info = dict(agent) if agent is not None else agent_info(config, runs.display)
    header = run_header(dataset, config, info, shard)
    return reduce_runs(scored, header, config=config, read_score_s=time.perf_counter() - t0)


def reduce_runs(
    scored: ScoredRuns, header: RunHeader, *, config: Config | None, read_score_s: float
) -> Scored:
    """The reduction of what :func:`score_runs` scored (``header``: :func:`run_header`).
    It reads the cases' metadata only (``scored.metas``), never the dataset's cases: a
    caller that has no further use for them can let them go first (``toolgate score``
    does, so a large dataset and the table are not in memory together). The rows' batches
    are let go as they are assembled into the table."""
    t1 = time.perf_counter()
    seed = config.seed if config is not None else 0
    max_extra = 0
    with no_gc():  # the heap holds every record: a collection would scan it all
        # Each chunk's rows are let go as soon as they are in the table (a large run's
        # matrix is the one big thing in memory, and it is held once).
        table = assemble(scored.metas, scored.batches, consume=True)
        stats = reduce(table, header, seed=seed, max_extra=max_extra)
    timing = {
        "read_score_s": round(read_score_s, 3),
        "score_workers": scored.workers,
        "case_samples": len(table.rows),
        "reduce_s": round(time.perf_counter() - t1, 3),
    }
    return Scored(
        stats=stats,
        table=table,
        batches=[table.rows],
        records=scored.records.bind(table),
        runs=scored,
        seed=seed,
        max_extra=max_extra,
        timing=timing,
    )


def scores_to_scored(
    *,
    dataset: DatasetLike,
    scores: Sequence[SampleScore],
    config: Config | None = None,
    agent: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
    extra_scores: Sequence[SampleScore] = (),
    timing: Mapping[str, Any] | None = None,
) -> Scored:
    """The score stage's reduction of sample scores already in memory (``extra_scores``:
    confirmation samples); every case of the dataset (of the shard) must have its scores,
    each (case, sample) once. The metric columns are the metrics the scores carry
    (:func:`gate.policy.reduce.sample_metric_names`)."""
    metas = [CaseMeta.of(c) for c in dataset.cases if shard is None or shard.holds(c.id)]
    index = {m.id: i for i, m in enumerate(metas)}
    seen: set[str] = set()
    for s in (*scores, *extra_scores):
        seen.update(s.scores)
    names = sample_metric_names(seen)
    builder = RowsBuilder(names, metas)
    rendered: list[bytes] = []
    for extra, group in ((False, scores), (True, extra_scores)):
        for s in group:
            i = index[s.case_id]
            builder.add(
                i,
                s.sample,
                passed=s.passed,
                scores=s.scores,
                failed_checks=s.failed_checks,
                tallies=s.tallies,
                usage=s.usage,
                latency_ms=s.latency_ms,
                hard=s.hard_failures,
                extra=extra,
                error=s.error,
            )
            rendered.append(sample_record(s, names=names, extra=extra))
    batches = [builder.build()]
    header = run_header(dataset, config, agent or {}, shard)
    seed = config.seed if config is not None else 0
    max_extra = 0
    table = assemble(metas, batches)
    stats = reduce(table, header, seed=seed, max_extra=max_extra)
    records = RowRecords()
    records.add_memory(rendered)
    return Scored(
        stats=stats,
        table=table,
        batches=batches,
        records=records.bind(table),
        runs=ScoredRuns(metas),
        seed=seed,
        max_extra=max_extra,
        timing=dict(timing or {}),
    )


def score_file(
    *,
    dataset: DatasetLike,
    runs_path: Path,
    config: Config | None = None,
    shard: Shard | None = None,
    runs_display: str | None = None,
    executor: ScoreExecutor | None = None,
) -> Scored:
    """:func:`score_stage` on a runs file this call opens (and closes)."""
    with RunsIndex(runs_path, display=runs_display) as runs:
        return score_stage(
            dataset=dataset, runs=runs, config=config, shard=shard, executor=executor
        )


def agent_info(config: Config | None, runs_display: str) -> dict[str, Any]:
    """The header's ``agent`` of a scored runs file: the config's agent kind (without a
    config, the kind that reads a runs file: :data:`gate.agents.RUNS_FILE_KIND`) and the
    runs file."""
    info: dict[str, Any] = {"kind": config.agent.kind if config is not None else RUNS_FILE_KIND}
    info["runs"] = runs_display
    return info


def unrecorded_calls(scored: Scored, runs: RunsIndex) -> list[tuple[str, str]]:
    """(case id, call) of every call the frozen responses could not answer, in dataset
    order then sample order (never in the order concurrent workers happened to finish) —
    from the scored runs that had one, whatever ran them (this run, an earlier resumed
    one, a replay), as the score stage read them. A call of a tool the case must never
    call is left out: it is a hard failure, and no response should be recorded for it."""
    rows = runs.rows
    assert rows is not None
    found = [
        (rows.case[k], rows.sample[k], cid, shown)
        for k, cid, calls in scored.runs.unrecorded
        for shown in calls
    ]
    return [(case, call) for *_, case, call in sorted(found)]


def unrecorded_notice(misses: list[tuple[str, str]]) -> str:
    """One sentence: how many calls had no recorded response, in how many cases, and the
    first few (each case and call once)."""
    distinct = list(dict.fromkeys(misses))  # samples repeat the same call
    cases = len({case for case, _ in misses})
    first = "; ".join(
        f"case {case} called {call if len(call) <= 80 else call.split('(', 1)[0] + '(…)'}"
        for case, call in distinct[:3]
    )
    n = len(misses)
    calls = "1 tool call" if n == 1 else f"{n:,} tool calls"
    where = "1 case" if cases == 1 else f"{cases:,} cases"
    return (
        f"{calls} in {where} had no recorded response, so the agent was answered with an "
        f"error; add their responses to the dataset (toolgate record) to score these cases on "
        f"real answers. First: {first}."
    )
