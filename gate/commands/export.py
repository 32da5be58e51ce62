"""`toolgate export` (not yet available)."""

from __future__ import annotations

import argparse

from gate.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    raise UsageError("`toolgate export` is not yet available in this version")
