"""How long does ``toolgate --version`` (and ``--help``) take to start?

The command line imports only the module of the command it runs, so printing the version
or the list of commands loads almost nothing. This script runs each command ``--runs``
times in a fresh interpreter (``python -m gate``, the same entry point as ``toolgate``)
and prints the median and the best wall time; the first run is reported apart (cold file
cache on a fresh machine).

Usage::

    python bench/cli_startup.py [--runs 15] [--limit-ms 150]
    python bench/cli_startup.py --compare OTHER [--runs 31]

Exit code 1 when the median of ``--version`` is over ``--limit-ms``. The figure depends on
the machine and on its load: read it on an idle one (a benchmark, not a timed test).

``--compare OTHER`` times another checkout against this one in the same session: OTHER is
a folder holding its ``gate`` package (``git worktree add /tmp/before main``, or
``git archive main gate | tar -x -C /tmp/before``). Each command runs alternately from
either tree (both from source folders, byte-compiled first) and the medians of wall time
and of CPU time (user + system, which a busy host disturbs less) are printed side by side.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

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
    parser.add_argument("--compare", type=Path, metavar="OTHER", help="another checkout's folder")
    args = parser.parse_args()
    if args.compare is not None:
        return compare(args.compare, args.runs)
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


def compare(other: Path, runs: int) -> int:
    """Median wall and CPU milliseconds of each command, from ``other`` and from this
    checkout, runs interleaved (the order flips every round)."""
    here = Path(__file__).resolve().parent.parent
    trees = {"other": other.resolve(), "this": here}
    for root in trees.values():
        if not (root / "gate" / "__init__.py").is_file():
            print(f"{root} holds no gate package", file=sys.stderr)
            return 2
        compileall.compile_dir(root / "gate", quiet=1)  # neither pays for compiling
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for i in range(runs):
        for argv in COMMANDS:
            for name in sorted(trees, reverse=bool(i % 2)):
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                times.setdefault((" ".join(argv), name), []).append(_timed(argv, env))
    for argv in COMMANDS:
        key = " ".join(argv)
        row = []
        for name in ("other", "this"):
            wall = statistics.median(w for w, _ in times[key, name])
            cpu = statistics.median(c for _, c in times[key, name])
            row.append(f"{name} {wall:5.0f} ms wall, {cpu:5.0f} ms CPU")
        print(f"toolgate {key:<14} " + " · ".join(row) + f" (medians of {runs})")
    return 0


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gate", *argv],
        check=True,
        capture_output=True,
        timeout=60,
        env=env,
        cwd=Path(__file__).resolve().parent,
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def wall_ms_python() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True, timeout=60)
    return (time.perf_counter() - start) * 1000


if __name__ == "__main__":
    raise SystemExit(main())
