"""How long does ``toolgate --version`` (and ``--help``) take to start?

The command line imports only the module of the command it runs, so printing the version
or the list of commands loads almost nothing. This script runs each command ``--runs``
times in a fresh interpreter (``python -m gate``, the same entry point as ``toolgate``)
and prints the median and the best wall time; the first run is reported apart (cold file
cache on a fresh machine).

Usage::

    python bench/cli_startup.py [--runs 15] [--limit-ms 150]

Exit code 1 when the median of ``--version`` is over ``--limit-ms``. The figure depends on
the machine and on its load: read it on an idle one (a benchmark, not a timed test).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (["--version"], ["--help"], ["check", "--help"])


def wall_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gate", *argv], check=True, capture_output=True, timeout=60
    )
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--limit-ms", type=float, default=150.0)
    args = parser.parse_args()
    baseline = [wall_ms_python() for _ in range(args.runs)]
    print(f"python -c pass (the interpreter alone): median {statistics.median(baseline):.0f} ms")
    verdict = 0
    for argv in COMMANDS:
        first = wall_ms(argv)
        times = [wall_ms(argv) for _ in range(args.runs)]
        median = statistics.median(times)
        print(
            f"toolgate {' '.join(argv):<14} first {first:6.0f} ms · median {median:6.0f} ms · "
            f"best {min(times):6.0f} ms ({args.runs} runs)"
        )
        if argv == ["--version"] and median > args.limit_ms:
            print(f"  over the {args.limit_ms:.0f} ms limit")
            verdict = 1
    return verdict


def wall_ms_python() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True, timeout=60)
    return (time.perf_counter() - start) * 1000


if __name__ == "__main__":
    raise SystemExit(main())
