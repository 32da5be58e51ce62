"""``toolgate score``: score a runs file against the dataset and write results.json.

With ``--config`` the config's dataset (its pin checked), normalisation and scoring rules
are used; with ``--dataset`` the defaults. Every case-sample of the runs file is scored
with every deterministic scorer; ``DIR/results.json`` gets the dataset-level metrics,
slices, the per-tool rollup, the confusion matrix and every sample with its scores,
reasons and evidence. No verdict is taken (that is ``toolgate check``): the exit code is 0
once results.json is written, 2 for bad input — a runs line for an unknown case, a
duplicated (case, sample), a case without runs, or a malformed line, each named by its line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gate.config import Config
from gate.dataset import default_display
from gate.errors import ExitCode, UsageError
from gate.model import Shard
from gate.outdir import locked, remove_stale
from gate.pipeline.inputs import Inputs, load_inputs, read_dataset
from gate.pipeline.score import (
    agent_info,
    reduce_runs,
    run_header,
    score_runs,
    unrecorded_calls,
    unrecorded_notice,
)
from gate.policy.reduce import passed_cases
from gate.results import Decisions, write_scored
from gate.runsfile import RunsIndex


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--config", metavar="FILE", help="the config file (default: toolgate.yml)")
    src.add_argument("--dataset", metavar="FILE", help="score against this dataset, default rules")
    parser.add_argument("--runs", required=True, metavar="FILE", help="the runs.jsonl to score")
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for results.json (default: the config's reporting.out, else toolgate-out)",
    )
    parser.add_argument(
        "--shard", default=None, metavar="i/n", help="score only shard i of n (by case id)"
    )


def run(args: argparse.Namespace) -> int:
    shard = Shard.parse(args.shard) if args.shard else None
    config: Config | None = None
    inputs: Inputs | None = None
    if args.dataset:
        dataset_path = Path(args.dataset)
        if not dataset_path.exists():
            raise UsageError(f"no dataset file {default_display(dataset_path)}")
        dataset = read_dataset(dataset_path, display=default_display(dataset_path))
    else:
        config_path = Path(args.config or "toolgate.yml")
        if not config_path.exists():
            raise UsageError(
                f"no config file {default_display(config_path)}",
                hint="Pass --config FILE or --dataset FILE.",
            )
        inputs = load_inputs(config_path, default_display(config_path))
        config, dataset = inputs.config, inputs.dataset
    runs_path = Path(args.runs)
    if not runs_path.exists():
        raise UsageError(f"no runs file {default_display(runs_path)}")
    if args.out:
        out = Path(args.out)
    elif config is not None:
        out = config.resolve(config.reporting.out)
    else:
        out = Path("toolgate-out")
    path = out / "results.json"
    with locked(out):
        remove_stale(out)  # the reports of earlier results would not be of these
        with RunsIndex(runs_path, display=default_display(runs_path)) as runs:
            t0 = time.perf_counter()
            scored_runs = score_runs(dataset=dataset, runs=runs, config=config, shard=shard)
            header = run_header(dataset, config, agent_info(config, runs.display), shard)
            # Nothing below reads the dataset's cases (the reduction reads their metadata):
            # let them go before it, so a large dataset and the table are not in memory
            # together.
            del dataset, inputs
            scored = reduce_runs(
                scored_runs, header, config=config, read_score_s=time.perf_counter() - t0
            )
            del scored_runs
            misses = unrecorded_calls(scored, runs)
            notices = [unrecorded_notice(misses)] if misses else []
        # Written from the statistics and the sample records as they are (no Results
        # object: a large run would build hundreds of thousands of sample models for
        # nothing).
        try:
            write_scored(
                path, scored.stats, scored.records, Decisions(notices=notices, timing=scored.timing)
            )
        finally:
            scored.records.close()
    cases = scored.stats.cases
    print(
        f"scored {len(scored.table.rows)} case-sample(s) of {len(cases)} case(s): "
        f"{passed_cases(cases)} case(s) passed every sample; wrote {default_display(path)}"
    )
    sys.stdout.flush()
    return ExitCode.PASS
