"""The judge stage: the LLM judge's block under ``judge`` (reported, never gating)."""

from __future__ import annotations

from pathlib import Path

from gate.config import Config
from gate.dataset import Dataset
from gate.results import Results
from gate.runsfile import iter_runs


def judge_stage(
    head: Results, *, config: Config, dataset: Dataset, runs_path: Path, out: Path
) -> Results:
    """The LLM judge's block under ``judge`` (reported, never gating; never raises for an
    outage)."""
    if config.judge is None:
        return head
    from gate.judge import run_judge

    runs = [run for _, run in iter_runs(runs_path)]
    head.judge = run_judge(config, dataset, runs, out, results=head)
    return head
