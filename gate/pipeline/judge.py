"""The judge stage: the LLM judge's block under ``judge`` (reported, never gating)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gate.config import Config
from gate.dataset import Dataset
from gate.model import Run


def judge_stage(
    *, config: Config, dataset: Dataset, runs: Sequence[Run], out: Path, timing: dict[str, Any]
) -> dict[str, Any] | None:
    """The LLM judge's block (reported, never gating; never raises for an outage), or
    ``None`` without a judge. The runs are the ones the score stage converted as it read
    the file (:attr:`gate.pipeline._scorepool.ScoredRuns.kept`: no line parsed again);
    ``timing`` receives the judge's run-dependent figures."""
    if config.judge is None:
        return None
    from gate.judge import run_judge

    return run_judge(config, dataset, runs, out, timing=timing)
