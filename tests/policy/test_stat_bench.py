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
            "--real-cold",
            "1",
            "--min-histories",
        ],
        capture_output=True,
        text=True,
        timeout=600,
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
    # the cold start: one seeded base run and a refresh, then the PRs, configuration PRs
    # (another model and endpoint) included, through the engine and the real gate
    assert "cold start: one seeded base run (`--base-run`)" in out
    assert "cold start, engine vs the fast rules: 22 checks (2 projects" in out
    assert "cold start, real `toolgate check` (an openai agent on a local endpoint)" in out
    assert "8 checks (1 projects × (2 base runs + 6 PRs)), 0 disagreement(s)" in out
    assert "target config: " in out and "target seeding: " in out


def test_stat_bench__depth_table__one_row_per_depth_runs_per_case_equal_the_depth():
    got = subprocess.run(
        [sys.executable, str(BENCH), "--depth-only", "--prs", "60", "--depths", "2", "6"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    rows = [
        line
        for line in got.stdout.splitlines()
        if line.startswith("| 2 |") or line.startswith("| 6 |")
    ]
    assert len(rows) == 2
    # a base run that seeded to depth d made d agent runs per case (no extra samples:
    # nothing was comparable yet), 100 × d for 100 cases
    assert rows[0].endswith("| 2.0 | 200 |") and rows[1].endswith("| 6.0 | 600 |")
    assert "| history depth | a case that breaks fully" in got.stdout
