"""The judge stage: the LLM judge's block under ``judge`` (reported, never gating)."""

from __future__ import annotations

from pathlib import Path

from gate.config import Config
from gate.dataset import Dataset
from gate.results import Results
from gate.runsfile import RunsIndex


def judge_stage(
    head: Results, *, config: Config, dataset: Dataset, runs: RunsIndex, out: Path
) -> Results:
    """The LLM judge's block under ``judge`` (reported, never gating; never raises for an
    outage). The runs come from the index the score stage filled (not read again)."""
    if config.judge is None:
        return head
    from gate.judge import run_judge

    judged = [run for _, run in runs.runs()]
    head.judge = run_judge(config, dataset, judged, out, results=head)
    return head
