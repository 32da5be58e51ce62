"""``toolgate check``: run the agent (or replay), score, gate, compare, report — the CI job.

Exit code 0 when the gate passes, 1 when it fails, 2 for bad input. Every report is written
(and, in GitHub Actions, published) before the exit. The stages are in
:func:`gate.pipeline.check`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gate.commands import add_config_argument, require_config
from gate.model import Shard
from gate.pipeline import CheckOptions, check


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="results folder (default: the config's reporting.out)",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="BASE_RESULTS",
        help="the base branch's results.json to compare with, or 'none' "
        "(default: the config's baseline.path, if set)",
    )
    parser.add_argument(
        "--baseline-source",
        default=None,
        metavar="TEXT",
        help="where the baseline came from, shown in the reports",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        metavar="N",
        help="samples per case (default: the config's samples)",
    )
    parser.add_argument(
        "--shard",
        default=None,
        metavar="i/n",
        help="run only shard i of n (deterministic by case id)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep case-samples already in OUT/runs.jsonl"
    )
    parser.add_argument(
        "--base-run",
        action="store_true",
        help="a run of the base branch: also bring every case's base history up to "
        "policy.min_history samples (the results are the next pull request's baseline)",
    )
    parser.add_argument(
        "--require-baseline",
        action="store_true",
        help="fail the gate when nothing could be compared (no baseline, one of another "
        "dataset or gate); a --base-run never fails for it",
    )
    parser.add_argument(
        "--no-comment",
        action="store_true",
        help="do not post the PR comment (reports are still written)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")


def run(args: argparse.Namespace) -> int:
    from gate.errors import UsageError

    require_config(Path(args.config))
    if args.samples is not None and not 1 <= args.samples <= 100:
        raise UsageError(f"--samples must be between 1 and 100, not {args.samples}")
    opts = CheckOptions(
        config_path=Path(args.config),
        config_display=args.config,
        out=Path(args.out) if args.out else None,
        baseline=args.baseline,
        baseline_source=args.baseline_source,
        samples=args.samples,
        shard=Shard.parse(args.shard) if args.shard else None,
        resume=args.resume,
        base_run=args.base_run,
        require_baseline=args.require_baseline,
        comment=not args.no_comment,
        progress=not args.no_progress,
    )
    outcome = check(opts, os.environ, sys.stdout)
    return outcome.exit_code
