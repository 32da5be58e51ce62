"""Orchestration: the stages of a gate run, wired from the pure layers and the I/O layers.

``score_stage`` (runs file → :class:`~gate.results.Results` without a verdict): read the
runs file, check that it covers exactly the dataset's cases (of the shard), score every
case-sample with the deterministic scorers, and reduce the scores
(:func:`gate.policy.reduce.build_results`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.config import Config, NormalizeConfig, ScoringConfig
from gate.errors import Problem, RunsFileError
from gate.model import Case, Run, SampleScore
from gate.policy.reduce import DatasetLike, build_results, in_shard
from gate.results import Results
from gate.runsfile import iter_runs
from gate.scorers import ScoringContext, score_sample

MAX_PROBLEMS = 50
"""Coverage problems listed before giving up (one pass reports many, not all)."""


def score_stage(
    *,
    dataset: DatasetLike,
    runs_path: Path,
    config: Config | None = None,
    runs_display: str | None = None,
    shard: tuple[int, int] | None = None,
    agent: Mapping[str, Any] | None = None,
) -> Results:
    """Score a runs file against the dataset; the results carry no verdict yet.

    Coverage is checked before anything is scored, each problem naming the runs file's
    line: a run of a case the dataset does not have, of a case of another shard, a
    (case, sample) recorded twice, and — naming the case's dataset line — a case of the
    dataset (of the shard) with no run at all: a case that silently vanished would raise
    the pass rate. A malformed line stops the read at that line
    (:class:`~gate.errors.RunsFileError`).
    """
    t0 = time.perf_counter()
    display = runs_display or str(runs_path)
    runs = _read_covering(dataset, runs_path, display, shard)
    t1 = time.perf_counter()

    scoring = config.scoring if config is not None else ScoringConfig()
    normalize = config.dataset.normalize if config is not None else NormalizeConfig()
    budget = config.agent.step_budget if config is not None else None
    ctx = ScoringContext.build(scoring, normalize, dataset.tools, step_budget=budget)
    cases = {c.id: c for c in dataset.cases}
    scores: list[SampleScore] = [score_sample(cases[run.case_id], run, ctx) for run in runs]
    t2 = time.perf_counter()

    agent_info = dict(agent) if agent is not None else _agent_info(config, display)
    results = build_results(
        dataset=dataset,
        scores=scores,
        config=config,
        agent=agent_info,
        shard=shard,
        timing={
            "read_s": round(t1 - t0, 3),
            "score_s": round(t2 - t1, 3),
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


def _read_covering(
    dataset: DatasetLike, runs_path: Path, display: str, shard: tuple[int, int] | None
) -> list[Run]:
    """Every run of the file, checked to cover exactly the dataset's cases (of the shard)."""
    cases: dict[str, Case] = {c.id: c for c in dataset.cases}
    wanted = {cid for cid in cases if in_shard(cid, shard)} if shard else set(cases)
    seen: dict[tuple[str, int], int] = {}
    runs: list[Run] = []
    problems: list[Problem] = []
    for lineno, run in iter_runs(runs_path, display=display):
        cid = run.case_id
        if cid not in cases:
            problems.append(
                Problem(display, lineno, "case_id", f"{cid!r} is not a case of {dataset.display}")
            )
        elif cid not in wanted:
            assert shard is not None
            problems.append(
                Problem(
                    display,
                    lineno,
                    "case_id",
                    f"case {cid!r} is not in shard {shard[0]}/{shard[1]} "
                    "(score each shard's runs with its own --shard)",
                )
            )
        else:
            key = (cid, run.sample)
            first = seen.get(key)
            if first is not None:
                problems.append(
                    Problem(
                        display,
                        lineno,
                        "sample",
                        f"case {cid!r} sample {run.sample} is recorded twice "
                        f"(first on line {first})",
                    )
                )
            else:
                seen[key] = lineno
                runs.append(run)
        if len(problems) >= MAX_PROBLEMS:
            break
    covered = {cid for cid, _ in seen}
    for cid in cases:
        if cid in wanted and cid not in covered and len(problems) < MAX_PROBLEMS:
            c = cases[cid]
            where = f" (line {c.source.line} of {dataset.display})"
            problems.append(
                Problem(display, None, "case_id", f"case {cid!r}{where} has no run in this file")
            )
    if problems:
        raise RunsFileError(
            problems,
            hint="Every case of the dataset must have its runs, each (case, sample) once: "
            "re-run `toolgate run` (with --resume to fill the gaps).",
        )
    return runs
