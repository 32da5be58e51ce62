"""One shard of a sharded run (the Action's ``mode: run``): run the agent on the shard's
cases and score them, without a verdict — ``mode: merge`` joins the shards and gates once.

The same stages as :func:`gate.pipeline.check` up to the score (inputs → runner → score),
so a shard's results are what ``check`` would have computed for those cases; nothing is
confirmed, judged or decided here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gate.config import Config
from gate.model import Shard
from gate.pipeline.inputs import load_inputs, normalizers
from gate.pipeline.publish import RESULTS_FILE
from gate.pipeline.records import kept_reasons
from gate.pipeline.score import score_stage
from gate.replay.runner import run_all
from gate.results import Results, write_results
from gate.runsfile import RunsIndex


@dataclass(frozen=True, slots=True)
class ShardOutcome:
    config: Config
    """The config the shard ran with (read once, here)."""
    results: Results
    """The shard's results (``results.shard`` says which); no verdict."""
    results_path: Path
    runs_path: Path


def run_shard(
    config_path: Path,
    *,
    config_display: str | None = None,
    out: Path | None = None,
    samples: int | None = None,
    shard: Shard | None = None,
    progress: bool = True,
    stream: TextIO,
    agent_python: str | None = None,
) -> ShardOutcome:
    """Run and score ``shard`` (every case when ``None``); write ``out/results.json``
    (``out`` defaults to the config's ``reporting.out``; ``agent_python`` as for
    :func:`~gate.pipeline.inputs.load_inputs`). Bad input raises
    :class:`~gate.errors.InputError` naming file, line and field."""
    inputs = load_inputs(config_path, config_display, agent=True, agent_python=agent_python)
    config, dataset = inputs.config, inputs.dataset
    norms = normalizers(config)
    folder = out if out is not None else config.resolve(config.reporting.out)
    summary = run_all(
        config,
        dataset,
        folder,
        samples=samples if samples is not None else config.initial_samples,
        shard=shard,
        resume=False,
        progress=progress,
        norms=norms,
    )
    with RunsIndex(summary.runs_path) as runs:
        scored = score_stage(
            dataset=dataset,
            runs=runs,
            config=config,
            shard=shard,
            agent=summary.agent,
            norms=norms,
        )
    results = scored.results
    results_path = folder / RESULTS_FILE
    write_results(results_path, results, keep=kept_reasons)
    part = f"shard {shard}" if shard is not None else "every case"
    stream.write(
        f"ran and scored {part}: {summary.written} case-sample(s) of {len(results.cases)} "
        f"case(s), {summary.errors} failed; wrote {results_path}\n"
    )
    stream.flush()
    return ShardOutcome(
        config=config, results=results, results_path=results_path, runs_path=summary.runs_path
    )
