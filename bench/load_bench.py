"""Dataset loading benchmark: 100,000 cases, load + validate, cases/second and memory.

Generates a dataset by cycling the example's cases (new ids, the example's
``@tools.json``), writes it as JSONL and as CSV, then measures each mode in a fresh
subprocess so that one mode's memory does not colour the next:

* ``load jsonl`` / ``load csv`` — :func:`gate.dataset.load_dataset` (all cases kept);
* ``stream jsonl`` — :func:`gate.dataset.iter_cases` (one case at a time, ids kept for
  the duplicate check);
* ``stream jsonl, no dup check`` — ``iter_cases(..., check_duplicates=False)``.

For each mode: the median wall time over ``--repeat`` runs → cases/second, the median
CPU time of the load (the steadier figure on a machine other work shares), and the peak
of Python allocations (tracemalloc, a separate run, since tracing slows the loader) and
the process's peak RSS (which includes the interpreter and imports, about 30 MB). Run
it with::

    python bench/load_bench.py            # 100,000 cases, 3 repeats
    python bench/load_bench.py --cases 20000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support-agent"
MODES = ("load-jsonl", "load-csv", "stream-jsonl", "stream-jsonl-nodup")


def generate(folder: Path, n: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(ROOT))
    from tests.dataset.helpers import to_csv

    base = [
        json.loads(line)
        for line in (EXAMPLE / "dataset.jsonl").read_text().splitlines()
        if line.strip()
    ]
    shutil.copy(EXAMPLE / "tools.json", folder / "tools.json")
    rows = []
    for i in range(n):
        item = dict(base[i % len(base)])
        item["id"] = f"{item['id']}-{i:06d}"
        rows.append(item)
    jsonl = folder / "dataset.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for item in rows:
            fh.write(json.dumps(item) + "\n")
    csv_path = folder / "dataset.csv"
    csv_path.write_text(to_csv(rows), encoding="utf-8")
    return jsonl, csv_path


def child(mode: str, path: Path, trace: bool) -> None:
    """Run one mode once; print a JSON line with seconds, cases, peak bytes."""
    from gate.dataset import iter_cases, load_dataset

    if trace:
        tracemalloc.start()
    start, cpu_start = time.perf_counter(), time.process_time()
    if mode.startswith("load"):
        count = len(load_dataset(path))
    else:
        count = sum(1 for _ in iter_cases(path, check_duplicates=mode != "stream-jsonl-nodup"))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "cases": count,
                "traced_peak": peak,
                "rss_kib": rss_kib,
            }
        )
    )


def measure(mode: str, path: Path, trace: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), *(["--trace"] if trace else [])],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--generate", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.trace)
        return
    if args.generate:
        generate(Path(args.generate), args.cases)
        return
    with tempfile.TemporaryDirectory() as tmp:
        # Generate in a child: a child's peak RSS starts from its parent's at fork, so
        # the parent must stay small for the per-mode RSS figures to mean anything.
        gen = [sys.executable, __file__, "--generate", tmp, "--cases", str(args.cases)]
        subprocess.run(gen, check=True)
        jsonl, csv_path = Path(tmp) / "dataset.jsonl", Path(tmp) / "dataset.csv"
        size = jsonl.stat().st_size
        print(
            f"dataset: {args.cases:,} cases, JSONL {size / 1e6:.1f} MB, "
            f"CSV {csv_path.stat().st_size / 1e6:.1f} MB"
        )
        print(
            f"{'mode':<28}{'median s':>10}{'cases/s':>12}{'CPU s':>8}"
            f"{'traced peak MB':>16}{'peak RSS MB':>13}"
        )
        results: dict[str, tuple[float, float]] = {}
        for mode in MODES:
            path = csv_path if mode == "load-csv" else jsonl
            times = [measure(mode, path, trace=False) for _ in range(args.repeat)]
            assert all(t["cases"] == args.cases for t in times)
            median = statistics.median(t["seconds"] for t in times)
            cpu = statistics.median(t["cpu"] for t in times)
            rss = max(t["rss_kib"] for t in times) / 1024
            traced = measure(mode, path, trace=True)["traced_peak"] / 1e6
            results[mode] = (median, traced)
            print(
                f"{mode:<28}{median:>10.2f}{args.cases / median:>12,.0f}{cpu:>8.2f}"
                f"{traced:>16.1f}{rss:>13.1f}"
            )
        full, stream = results["load-jsonl"][1], results["stream-jsonl-nodup"][1]
        print(
            f"streaming (no dup check) / full load traced peak: {stream / full:.4f} "
            f"({stream * 1e3:.0f} KB vs {full:.0f} MB)"
        )


if __name__ == "__main__":
    main()
