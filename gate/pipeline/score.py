"""The score stage: runs file → :class:`~gate.results.Results` without a verdict.

Read the runs file, check that it covers exactly the dataset's cases (of the shard), score
every case-sample with the deterministic scorers, and reduce the scores
(:func:`gate.policy.reduce.build_results`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.gcpause import no_gc
from gate.model import SampleScore
from gate.pipeline._scorepool import read_and_score
from gate.pipeline.inputs import scoring_context
from gate.policy.reduce import DatasetLike, build_results
from gate.results import Results


def score_stage(
    *,
    dataset: DatasetLike,
    runs_path: Path,
    config: Config | None = None,
    runs_display: str | None = None,
    shard: tuple[int, int] | None = None,
    agent: Mapping[str, Any] | None = None,
    keep_scores: list[SampleScore] | None = None,
) -> Results:
    """Score a runs file against the dataset; the results carry no verdict yet.

    ``keep_scores``, when given, receives the sample scores (the confirmation stage
    rebuilds the results with extra samples from them).

    Coverage is checked before anything is scored, each problem naming the runs file's
    line: a run of a case the dataset does not have, of a case of another shard, a
    (case, sample) recorded twice, and — naming the case's dataset line — a case of the
    dataset (of the shard) with no run at all: a case that silently vanished would raise
    the pass rate. A malformed line stops the read at that line
    (:class:`~gate.errors.RunsFileError`).
    """
    t0 = time.perf_counter()
    display = runs_display or str(runs_path)
    # The cyclic collector finds nothing in these acyclic records but rescans the growing
    # heap again and again (a fifth of the time): pause it while reading and scoring.
    with no_gc():
        ctx = scoring_context(config, dataset)
        # Reading and scoring, in parallel worker processes for large files (same scores).
        scores, notes = read_and_score(dataset, runs_path, display, shard, ctx)
    if keep_scores is not None:
        keep_scores.extend(scores)
    t2 = time.perf_counter()

    agent_info = dict(agent) if agent is not None else _agent_info(config, display)
    with no_gc():  # the heap now holds every sample score: a collection would scan it all
        results = build_results(
            dataset=dataset,
            scores=scores,
            config=config,
            agent=agent_info,
            shard=shard,
            timing={
                "read_score_s": round(t2 - t0, 3),
                "score_workers": notes["workers"],
                "case_samples": len(scores),
            },
        )
    t3 = time.perf_counter()
    results.timing["reduce_s"] = round(t3 - t2, 3)
    return results


def _agent_info(config: Config | None, runs_display: str) -> dict[str, Any]:
    info: dict[str, Any] = {"kind": config.agent.kind if config is not None else "replay"}
    info["runs"] = runs_display
    return info


def score_with_scores(
    dataset: DatasetLike,
    runs_path: Path,
    config: Config,
    shard: tuple[int, int] | None,
    agent: Mapping[str, Any],
) -> tuple[Results, list[SampleScore]]:
    captured: list[SampleScore] = []
    results = score_stage(
        dataset=dataset,
        runs_path=runs_path,
        config=config,
        shard=shard,
        agent=agent,
        keep_scores=captured,
    )
    return results, captured
