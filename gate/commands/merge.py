"""``toolgate merge PART_DIR... --out DIR [--config FILE] [--baseline BASE_RESULTS]``.

Joins the results of the shards of one run (each ``PART_DIR`` holds a ``results.json``
written by ``toolgate run``/``check`` with ``--shard i/n``; a results.json file may be
given instead of its folder), then gates once: every statistic is recomputed from the
shards' sample records (:mod:`gate.policy.merge`; schema-1 results of the previous
release too), the policy of ``--config`` is applied
(without a config only hard failures and regressions against ``--baseline`` count), and
``DIR/results.json`` is written, with the reports when the reporting module is present.

Exit code 0 when the gate passes, 1 when it fails, 2 (naming the files) for parts that
are not one run's shards (docs/action.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gate.config import Config
from gate.errors import UsageError
from gate.pipeline.inputs import load_baseline, read_config
from gate.pipeline.merge import merge_and_decide
from gate.report.redact import redactor_for


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "parts",
        nargs="+",
        metavar="PART_DIR",
        help="folders holding one shard's results.json each (or the files themselves)",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where to write the merged results"
    )
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="the config file whose gates to apply (default: none)",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="BASE_RESULTS",
        help="a baseline results.json to compare with",
    )
    parser.add_argument(
        "--baseline-source",
        default=None,
        metavar="TEXT",
        help="where the baseline came from, for the reports (default: its path)",
    )


def _results_path(part: str) -> Path:
    path = Path(part)
    if path.is_dir():
        path = path / "results.json"
    if not path.exists():
        raise UsageError(
            f"{part}: no results.json there", hint="Pass the folder each shard wrote with --out."
        )
    return path


def run(args: argparse.Namespace) -> int:
    parts = [(part, _results_path(part)) for part in args.parts]
    config: Config | None = None
    if args.config is not None:
        config = read_config(Path(args.config), display=args.config)
    baseline = load_baseline(args.baseline, None) if args.baseline is not None else None
    done = merge_and_decide(
        [(str(path), path) for _, path in parts],
        config=config,
        baseline=baseline.results if baseline is not None else None,
        baseline_source=args.baseline_source or args.baseline,
        out=Path(args.out),
        redactor=redactor_for(config, os.environ),
        stream=sys.stdout,
    )
    return done.exit_code
