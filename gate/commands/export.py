"""``toolgate export RESULTS --format cases-csv|tools-csv --out FILE``.

Turns a results.json into a CSV for spreadsheets: one row per case (pass rate, failing
checks, key metrics, expected vs actual calls) or one row per tool (recall rollup). JUnit
XML is ``toolgate report --format junit``. ``--out -`` writes to standard output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gate.interop.export import ExportFormat, export
from gate.results import read_results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, metavar="RESULTS", help="a results.json")
    parser.add_argument(
        "--format",
        required=True,
        choices=[f.value for f in ExportFormat],
        help="cases-csv: one row per case; tools-csv: the per-tool recall rollup",
    )
    parser.add_argument("--out", required=True, help="the CSV file to write ('-': stdout)")


def run(args: argparse.Namespace) -> int:
    results = read_results(args.results)
    text = export(results, ExportFormat(args.format))
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8", newline="")
    print(f"wrote {out} ({text.count(chr(10)) - 1} rows)")
    return 0
