"""Each input file is opened once per ``toolgate check``: a real check of the shipped example
runs in a subprocess whose audit hook (``sys.addaudithook``, the ``open`` event) logs every
file opened — by the process and by the scoring workers it forks — and the config, the
dataset, its tools file, the baseline and runs.jsonl must each be opened for reading once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support-agent"

HOOK = r"""
import os, sys
log = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
def hook(event, args):
    if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    mode, flags = args[1], args[2] if len(args) > 2 else 0
    reading = (mode is not None and "r" in mode and "+" not in mode) or (
        mode is None and isinstance(flags, int) and flags & 3 == os.O_RDONLY
    )
    if reading:
        path = os.path.realpath(os.fsdecode(args[0]))
        os.write(log, f"{os.getpid()}\t{path}\n".encode())
sys.addaudithook(hook)
from gate.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _opens(tmp_path: Path, *argv: str, workers: str | None = None) -> Counter[str]:
    log = tmp_path / "opens.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    if workers is not None:
        env["TOOLGATE_SCORE_WORKERS"] = workers
    proc = subprocess.run(
        [sys.executable, "-c", HOOK, str(log), *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    counts: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        _, path = line.split("\t", 1)
        counts[path] += 1
    return counts


INPUTS = ["toolgate.yml", "dataset.jsonl", "tools.json"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_check__every_input_file__opened_once_for_reading(tmp_path: Path, workers: str) -> None:
    out = tmp_path / "out"
    counts = _opens(
        tmp_path,
        "check", "--config", str(EXAMPLE / "toolgate.yml"), "--out", str(out),
        "--baseline", "none", "--no-progress",
        workers=workers,
    )  # fmt: skip
    for name in INPUTS:
        assert counts[os.path.realpath(EXAMPLE / name)] == 1, name
    assert counts[os.path.realpath(out / "runs.jsonl")] == 1


def test_check_with_a_baseline__it_is_read_once_too(tmp_path: Path) -> None:
    base = tmp_path / "base"
    subprocess.run(
        [sys.executable, "-m", "gate", "check", "--config", str(EXAMPLE / "toolgate.yml"),
         "--out", str(base), "--baseline", "none", "--no-progress"],
        cwd=ROOT, capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    out = tmp_path / "out"
    counts = _opens(
        tmp_path,
        "check", "--config", str(EXAMPLE / "toolgate.regressed.yml"), "--out", str(out),
        "--baseline", str(base / "results.json"), "--no-progress",
    )  # fmt: skip
    for name in ["toolgate.regressed.yml", "dataset.jsonl", "tools.json"]:
        assert counts[os.path.realpath(EXAMPLE / name)] == 1, name
    assert counts[os.path.realpath(base / "results.json")] == 1
    assert counts[os.path.realpath(out / "runs.jsonl")] == 1
