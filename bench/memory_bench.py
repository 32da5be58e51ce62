"""Benchmark: the memory of ``toolgate score`` and the size of its results.json, at several
numbers of case-samples, so that "flat in size" shows.

For each N it generates (once, kept in ``--workdir``) the dataset and runs file of
``bench/score_bench.py`` — realistic tool schemas, 1–5 calls a sample with wrong, missing
and extra arguments, calls that do not parse, unknown tools, retries, parallel batches and
tool errors — with ``--samples`` samples a case, then runs the whole ``toolgate score``
process (or, with ``--command check``, ``toolgate check`` with a ``replay`` agent on that
runs file and no baseline: the CI job's path, reports included) under
``/usr/bin/time -v``. It prints, for each N:

- **max RSS** — ``/usr/bin/time -v``'s "Maximum resident set size": the largest resident
  set that any single process of the tree reached (the kernel reports the maximum over the
  process and its waited-for children, not their sum);
- **tree RSS** — the largest sum of the resident sets of ``toolgate`` and all its
  descendants at one moment, sampled every ``--interval`` seconds from ``/proc`` (forked
  workers share pages with the parent, so this sum counts shared pages more than once);
- **tree PSS** — the same sum of proportional set sizes (``/proc/PID/smaps_rollup``):
  each shared page divided among the processes sharing it, so the memory the tree really
  holds;
- wall time and the size of results.json.

Usage::

    python bench/memory_bench.py [--n 30000,100000,300000] [--samples 3] [--workdir DIR]
        [--command score|check] [--toolgate EXE]

``--toolgate`` takes a command (split on spaces), so another checkout can be measured on
the same files: ``--toolgate "env PYTHONPATH=/other/checkout python -m gate"``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score_bench import generate

MIB = 1024 * 1024


def _tree(root: int) -> list[int]:
    """``root`` and every descendant, from the parent links in ``/proc``."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(p for p, pp in parent.items() if pp == pid)
    return out


def _kib(path: str, field: str) -> int:
    try:
        text = Path(path).read_text()
    except OSError:
        return 0
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


class TreeSampler(threading.Thread):
    """Samples the summed RSS and PSS of a process tree until stopped."""

    def __init__(self, root: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peak_rss = self.peak_pss = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            pids = _tree(self.root)
            rss = sum(_kib(f"/proc/{p}/status", "VmRSS") for p in pids)
            pss = sum(_kib(f"/proc/{p}/smaps_rollup", "Pss") for p in pids)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.done.wait(self.interval)


def check_config(folder: Path) -> Path:
    """A toolgate.yml beside the generated files: the dataset pinned, a ``replay`` agent
    on the runs file. The dataset's hash is computed in a child process (importing
    ToolGate here would raise the high-water mark the measured children inherit)."""
    code = (
        "import sys; from pathlib import Path; from gate.dataset import load_dataset; "
        "print(load_dataset(Path(sys.argv[1])).sha256)"
    )
    sha = subprocess.run(
        [sys.executable, "-c", code, str(folder / "dataset.jsonl")],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.strip()
    path = folder / "toolgate.yml"
    path.write_text(
        f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\n"
    )
    return path


def measure(
    exe: list[str], folder: Path, out: Path, interval: float, command: str = "score"
) -> dict[str, float]:
    """One ``toolgate score`` (or ``check``) under ``/usr/bin/time -v``: its figures."""
    cmd = ["/usr/bin/time", "-v", *exe, command]
    if command == "check":
        cmd += ["--config", str(check_config(folder)), "--baseline", "none", "--no-progress"]
    else:
        cmd += ["--dataset", str(folder / "dataset.jsonl"), "--runs", str(folder / "runs.jsonl")]
    cmd += ["--out", str(out)]
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        sampler = TreeSampler(proc.pid, interval)
        sampler.start()
        code = proc.wait()
        wall = time.perf_counter() - t0
        sampler.done.set()
        sampler.join()
        err.seek(0)
        text = err.read().decode(errors="replace")
    if code not in (0, 1):  # 1: the gate failed (check), a verdict all the same
        raise SystemExit(f"toolgate {command} failed ({code}):\n{text[-3000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    assert m is not None, text[-2000:]
    size = (out / "results.json").stat().st_size
    return {
        "max_rss": int(m.group(1)) * 1024 / MIB,
        "tree_rss": sampler.peak_rss * 1024 / MIB,
        "tree_pss": sampler.peak_pss * 1024 / MIB,
        "wall": wall,
        "results": size / MIB,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="30000,100000,300000", help="case-samples, comma-separated")
    ap.add_argument("--samples", type=int, default=3, help="samples a case (default 3)")
    ap.add_argument("--repeat", type=int, default=1, help="runs at each N; the largest is shown")
    ap.add_argument("--interval", type=float, default=0.05, help="seconds between tree samples")
    ap.add_argument("--workdir", default=None, help="keep (and reuse) the generated files here")
    ap.add_argument("--command", choices=("score", "check"), default="score")
    ap.add_argument("--toolgate", default=None, help="the toolgate command (default: installed)")
    args = ap.parse_args(argv)
    script = Path(sys.executable).with_name("toolgate")
    exe = (
        shlex.split(args.toolgate)
        if args.toolgate
        else [str(script)]
        if script.exists()
        else [sys.executable, "-m", "gate"]
    )
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="toolgate-mem-"))
    print(f"{'case-samples':>12} {'max RSS':>9} {'tree RSS':>9} {'tree PSS':>9} "
          f"{'wall':>7} {'results.json':>13}")  # fmt: skip
    try:
        for n in (int(x) for x in args.n.split(",")):
            d = work / f"n{n}x{args.samples}"
            if not (d / "runs.jsonl").exists():
                d.mkdir(parents=True, exist_ok=True)
                generate(d, n, args.samples)
            runs = [
                measure(exe, d, d / "out", args.interval, args.command) for _ in range(args.repeat)
            ]
            shutil.rmtree(d / "out", ignore_errors=True)
            worst = {k: max(r[k] for r in runs) for k in runs[0]}
            print(
                f"{n:>12,} {worst['max_rss']:>5.0f} MiB {worst['tree_rss']:>5.0f} MiB "
                f"{worst['tree_pss']:>5.0f} MiB {worst['wall']:>6.1f}s "
                f"{worst['results']:>9.1f} MiB",
                flush=True,
            )
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
