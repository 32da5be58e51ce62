"""The score stage: a runs file → the scores of its runs, then their reduction.

The runs file is read through its :class:`~gate.runsfile.RunsIndex` (opened once, shared
with the later stages); an executor — serial, or a pool of forked workers — reads and
scores the lines, passed in the way a transport is passed to an HTTP client
(:mod:`gate.pipeline._scorepool`, private, holds both; :func:`default_executor` picks one
for the file's size). Coverage is checked once, as the lines are read
(:class:`~gate.runsfile.Coverage`): a run of a case the dataset does not have, of a case
of another shard, a (case, sample) recorded twice, a case with no run, cases with unequal
sample counts — each problem naming the runs file's line. A malformed line stops the read
at that line.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.gcpause import no_gc
from gate.model import DatasetLike, SampleScore, Shard
from gate.pipeline._scorepool import ScoredRuns, ScoreExecutor, ScoreJob, default_executor
from gate.pipeline.inputs import scoring_context
from gate.policy.reduce import build_results
from gate.results import Results
from gate.runsfile import Coverage, RunsIndex

__all__ = ["ScoreExecutor", "Scored", "default_executor", "score_runs", "score_stage"]


@dataclass(slots=True)
class Scored:
    """What the score stage hands on: the results without a verdict, the sample scores
    (the confirmation stage rebuilds the results with extra samples from them) and where
    each scored run is in the runs file."""

    results: Results
    scores: list[SampleScore]
    runs: ScoredRuns
    timing: dict[str, Any] = field(default_factory=dict)


def score_runs(
    *,
    dataset: DatasetLike,
    runs: RunsIndex,
    config: Config | None,
    shard: Shard | None,
    executor: ScoreExecutor | None = None,
) -> ScoredRuns:
    """Read and score every run of ``runs``, checking that they cover exactly the dataset's
    cases (of the shard); the index learns where each scored run is."""
    coverage = Coverage(
        dataset.cases, runs_display=runs.display, dataset_display=dataset.display, shard=shard
    )
    # The cyclic collector finds nothing in these acyclic records but rescans the growing
    # heap again and again (a fifth of the time): pause it while reading and scoring.
    with no_gc():
        ctx = scoring_context(config, dataset)
        job = ScoreJob(index=runs, coverage=coverage, cases=dataset.cases, ctx=ctx)
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
) -> Scored:
    """Score a runs file against the dataset and reduce the scores; no verdict yet."""
    t0 = time.perf_counter()
    scored = score_runs(dataset=dataset, runs=runs, config=config, shard=shard, executor=executor)
    t2 = time.perf_counter()
    agent_info = dict(agent) if agent is not None else _agent_info(config, runs.display)
    with no_gc():  # the heap now holds every sample score: a collection would scan it all
        results = build_results(
            dataset=dataset,
            scores=scored.scores,
            config=config,
            agent=agent_info,
            shard=shard,
            timing={
                "read_score_s": round(t2 - t0, 3),
                "score_workers": scored.workers,
                "case_samples": len(scored.scores),
            },
        )
    t3 = time.perf_counter()
    results.timing["reduce_s"] = round(t3 - t2, 3)
    return Scored(results=results, scores=scored.scores, runs=scored)


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


def _agent_info(config: Config | None, runs_display: str) -> dict[str, Any]:
    info: dict[str, Any] = {"kind": config.agent.kind if config is not None else "replay"}
    info["runs"] = runs_display
    return info
