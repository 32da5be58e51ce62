"""The judge stage: the LLM judge's block under ``judge`` (reported, never gating)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gate.config import Config
from gate.dataset import Dataset
from gate.runsfile import RunsIndex


def judge_stage(
    *, config: Config, dataset: Dataset, runs: RunsIndex, out: Path, timing: dict[str, Any]
) -> dict[str, Any] | None:
    """The LLM judge's block (reported, never gating; never raises for an outage), or
    ``None`` without a judge. The runs come from the index the score stage filled (not
    read again); ``timing`` receives the judge's run-dependent figures."""
    if config.judge is None:
        return None
    from gate.judge import run_judge

    judged = [run for _, run in runs.runs()]
    return run_judge(config, dataset, judged, out, timing=timing)
