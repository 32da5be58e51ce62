"""Smoke test of bench/stat_bench.py: a tiny run prints the table, and the engine, the fast
re-implementation and the real `toolgate check` (one project, one base run and the four
PRs) agree verdict for verdict (a real subprocess, as a user runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "stat_bench.py"


def test_stat_bench__tiny_run__table_and_zero_disagreements():
    got = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--prs",
            "80",
            "--chain",
            "6",
            "--check",
            "2",
            "--seed",
            "3",
            "--real",
            "1",
            "--real-chain",
            "1",
            "--young",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    out = got.stdout
    assert "| policy | PRs that changed nothing but failed the gate |" in out
    assert "| the defaults (`samples: 1`) |" in out
    assert "| **new:" in out
    assert "0 disagreement(s)" in out
    assert "checks (2 projects × (6 chained base runs + the PRs))" in out
    assert "real `toolgate check` vs the engine vs the fast rules: 5 checks" in out
    assert "disagreement:" not in out
