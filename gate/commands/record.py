"""``toolgate record``: run the real tools once and freeze their responses (local only).

Refuses when ``CI=true``. See :mod:`gate.replay.record` for what is recorded. The pin is
not checked (recording is how a dataset changes); after review, point ``dataset.path``
at the new file (or replace the old one) and re-pin with ``toolgate pin``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gate.commands import add_config_argument
from gate.dataset import default_display
from gate.errors import ExitCode, UsageError
from gate.pipeline.inputs import load_inputs
from gate.replay.record import load_registry, record, refuse_in_ci
from gate.replay.runner import select_cases


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--tools",
        metavar="MODULE:ATTR",
        help="your real tools: a dict name -> function, or a function (name, arguments); "
        "leave out with agent.kind: mcp to call the real MCP servers of agent.servers",
    )
    parser.add_argument(
        "--out", required=True, metavar="FILE", help="where to write the dataset copy (JSONL)"
    )
    parser.add_argument(
        "--case", action="append", default=None, metavar="ID", dest="cases",
        help="record only this case (repeatable)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    refuse_in_ci(os.environ)  # before importing anything of the user's
    config_path = Path(args.config)
    if not config_path.exists():
        raise UsageError(f"no config file {default_display(config_path)}")
    # The pin is not checked: recording writes a new dataset to pin afterwards.
    inputs = load_inputs(config_path, default_display(config_path), pin=False, agent=True)
    config, dataset = inputs.config, inputs.dataset
    dataset_path = dataset.path
    registry = load_registry(args.tools, [str(config.root), os.getcwd()]) if args.tools else None
    cases = select_cases(dataset.cases, case_ids=args.cases)
    out = Path(args.out)
    summary = record(
        config, cases, dataset_path, out, registry,
        log=lambda line: print(line, file=sys.stderr),
    )  # fmt: skip
    print(
        f"recorded {summary.recorded} response(s) ({summary.tool_errors} error(s)) "
        f"for {summary.cases} case(s) into {default_display(out)}"
    )
    for failure in summary.agent_errors:
        print(f"  agent failed on {failure}")
    if out.resolve().parent != dataset_path.resolve().parent:
        print("  note: @file references in the copy are relative to its own folder")
    print(f"  review it, then use it as dataset.path and run `toolgate pin --config {args.config}`")
    return ExitCode.PASS
