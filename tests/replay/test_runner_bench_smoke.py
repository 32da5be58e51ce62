"""``bench/runner_bench.py`` stays runnable on a tiny schedule, with both servers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("server", ["lean", "tests"])
def test_runner_bench__tiny_schedule__prints_every_row(server: str) -> None:
    argv = [sys.executable, str(ROOT / "bench" / "runner_bench.py"), "--cases", "4"]
    argv += ["--samples", "2", "--concurrency", "2", "--latency-ms", "5", "--repeat", "1"]
    p = subprocess.run([*argv, "--server", server], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for row in ("openai: bare http.client", "openai: run_all", "command: run_all, warm",
                "command: run_all, cold"):  # fmt: skip
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith(row))
        ratio = float(
            line.split()[-3] if row.endswith("(no I/O)") else line.split("s ", 1)[1].split()[0]
        )
        assert ratio >= 1.0, line  # never faster than the ideal
