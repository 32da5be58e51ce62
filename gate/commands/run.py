"""``toolgate run``: run the agent on every case × sample and write ``runs.jsonl``.

Loads and validates the config, loads the dataset and checks its pin, then runs
:func:`gate.replay.runner.run_all`. A failed case-sample (crash, timeout, bad output) is recorded
in runs.jsonl as an error and scored later as a failure; it does not change the exit
code, which is 0 once every planned case-sample is recorded (2 for bad input).
The summary goes to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.commands import add_config_argument, require_config
from gate.dataset import default_display
from gate.errors import ExitCode, UsageError
from gate.model import Shard
from gate.outdir import locked, remove_stale
from gate.pipeline.inputs import load_inputs
from gate.replay.runner import RunSummary, run_all


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for runs.jsonl (default: the config's reporting.out)",
    )
    parser.add_argument(
        "--samples", type=int, default=None, metavar="N", help="samples per case (default: config)"
    )
    parser.add_argument(
        "--shard", default=None, metavar="i/n", help="run only shard i of n (by case id)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep DIR/runs.jsonl and run only the case-samples it lacks",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=None,
        metavar="ID",
        dest="cases",
        help="run only this case (repeatable)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="case-samples at once (default: config)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress line on stderr")


def run(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    require_config(config_path)
    inputs = load_inputs(config_path, default_display(config_path), agent=True)
    config, dataset = inputs.config, inputs.dataset
    if args.concurrency is not None:
        if not 1 <= args.concurrency <= 512:
            raise UsageError("--concurrency must be between 1 and 512")
        config = config.model_copy(update={"concurrency": args.concurrency})
    samples = config.initial_samples if args.samples is None else args.samples
    if not 1 <= samples <= 100:
        raise UsageError("--samples must be between 1 and 100")
    shard = Shard.parse(args.shard) if args.shard else None
    out = Path(args.out) if args.out else config.resolve(config.reporting.out)
    with locked(out):
        if not args.resume:  # what an earlier run scored is not this run's
            remove_stale(out)
        summary = run_all(
            config,
            dataset,
            out,
            samples=samples,
            shard=shard,
            resume=args.resume,
            case_ids=args.cases,
            progress=not args.no_progress,
        )
    print(describe(summary))
    sys.stdout.flush()
    return ExitCode.PASS


def describe(summary: RunSummary) -> str:
    """The summary printed after a run (one line, more lines for errors and misses)."""
    path = default_display(summary.runs_path)
    head = f"wrote {summary.written} run(s) to {path} in {summary.wall_s:.1f}s"
    if summary.skipped:
        head += f" ({summary.skipped} already recorded, skipped)"
    lines = [head]
    if summary.errors:
        kinds = ", ".join(f"{k} {v}" for k, v in summary.error_kinds.items())
        lines.append(f"  {summary.errors} case-sample(s) failed ({kinds}); they count as failures")
    if summary.not_started:
        lines.append(
            f"  {summary.not_started} case-sample(s) not started: the global deadline passed"
        )
    if summary.unrecorded_calls:
        lines.append(
            f"  {summary.unrecorded_calls} tool call(s) had no frozen response; for example:"
        )
        lines.extend(f"    {m}" for m in summary.misses[:5])
    return "\n".join(lines)
