"""``toolgate merge PART_DIR... --out DIR [--config FILE] [--baseline BASE_RESULTS]``.

Joins the results of the shards of one run (each ``PART_DIR`` holds a ``results.json``
written by ``toolgate run``/``check`` with ``--shard i/n``; a results.json file may be
given instead of its folder), then gates once: every statistic is recomputed from the
shards' sample records (:mod:`gate.policy.merge`; schema-1 results of the previous
release too), the policy of ``--config`` is applied
(without a config only hard failures and regressions against ``--baseline`` count), and
``DIR/results.json`` is written, with the reports when the reporting module is present.

Refused with exit code 2, naming the files: parts from different datasets, overlapping
cases, shards of different splits, a missing shard or missing cases.
Exit code 0 when the gate passes, 1 when it fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.baseline.diff import compare
from gate.config import Config
from gate.errors import ExitCode, UsageError
from gate.pipeline.inputs import load_baseline, read_config
from gate.policy.decide import decide
from gate.results import Results, assemble, merge_run, read_results, write_results


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
        "--config", default=None, metavar="FILE", help="toolgate.yml whose gates to apply"
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
    paths = [(part, _results_path(part)) for part in args.parts]
    parts = [(str(p), read_results(p, display=str(p))) for _, p in paths]
    config: Config | None = None
    if args.config is not None:
        config = read_config(Path(args.config), display=args.config)
    baseline = load_baseline(args.baseline, None) if args.baseline is not None else None
    merged = merge_run(parts)
    comparison = (
        compare(baseline.stats, merged.stats, source=args.baseline_source or args.baseline)
        if baseline is not None
        else None
    )
    verdict = decide(merged.stats, comparison, config)
    decided = assemble(
        merged.stats,
        merged.records,
        verdict=verdict,
        comparison=comparison,
        judge=merged.judge,
        timing=merged.timing,
    )
    out = Path(args.out)
    write_results(out / "results.json", decided)
    _write_reports(decided, out)
    from gate.report import render_console

    sys.stdout.write(render_console(decided))
    print(f"merged {len(parts)} part(s), {len(decided.cases)} cases → {out / 'results.json'}")
    return ExitCode.PASS if verdict.passed else ExitCode.GATE_FAILED


def _write_reports(results: Results, out: Path) -> None:
    try:
        from gate.report import write_reports
    except ImportError:  # the reporting module is optional for this command
        return
    try:
        write_reports(results, out)
    except Exception as exc:  # a report that fails to render never loses the verdict
        sys.stderr.write(f"toolgate merge: warning: reports not written: {exc}\n")
