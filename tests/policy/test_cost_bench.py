"""Smoke test of bench/cost_bench.py: a small run prints every scenario for every rule,
as a user runs it (a real subprocess), and its figures say what the gate is for: a head
that ran twice the samples is blocked by the totals rule on every pull request and by
ToolGate on none, and every case +30 % is blocked by ToolGate on most."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cost_bench.py"


def test_cost_bench__small_run__every_scenario_and_rule():
    got = subprocess.run(
        [sys.executable, str(BENCH), "--prs", "30", "--cases", "30", "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = {}
    for line in got.stdout.splitlines():
        cells = re.findall(r"(\d+\.\d) % \[", line)
        if len(cells) == 4:
            rows[line.split()[0]] = [float(c) for c in cells]
    assert list(rows) == [
        "null",
        "null-6",
        "up5-all",
        "up30-one",
        "up30-ten",
        "up20-all",
        "up30-all",
    ]
    toolgate, totals = 0, 1
    assert rows["null"][toolgate] == 0.0 and rows["null-6"][toolgate] == 0.0
    assert rows["null-6"][totals] == 100.0
    assert rows["up30-all"][toolgate] >= 80.0
    assert rows["up30-one"][toolgate] == 0.0
