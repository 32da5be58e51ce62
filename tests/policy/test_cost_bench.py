"""Smoke test of bench/cost_bench.py: a small run prints every scenario for every rule
and suite, as a user runs it (a real subprocess), and its figures say what the gate is
for: a head that ran twice the samples is blocked by the totals rule on every pull
request and by ToolGate on none, and every case +30 % is blocked by ToolGate on most —
on six cases of two samples too."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cost_bench.py"


def test_cost_bench__small_run__every_suite_scenario_and_rule():
    got = subprocess.run(
        [sys.executable, str(BENCH), "--prs", "20", "--suites", "30x3,6x2", "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    suites: dict[str, dict[str, list[float]]] = {}
    rows: dict[str, list[float]] = {}
    for line in got.stdout.splitlines():
        if "head samples" in line:
            rows = suites.setdefault(line.split(" (")[0], {})
        cells = re.findall(r"(\d+\.\d) % \[", line)
        if len(cells) == 7:
            rows[line.split()[0]] = [float(c) for c in cells]
    assert list(suites) == ["30 cases x 3 head samples", "6 cases x 2 head samples"]
    for rows in suites.values():
        assert list(rows) == [
            "null",
            "null-2x",
            "up5-all",
            "up30-one",
            "up30-sixth",
            "up20-all",
            "up30-all",
        ]
    toolgate, totals = 0, 3
    big, small = suites.values()
    assert big["null"][toolgate] == 0.0 and big["null-2x"][toolgate] == 0.0
    assert big["null-2x"][totals] == 100.0
    assert big["up30-all"][toolgate] == 100.0 and big["up30-one"][toolgate] == 0.0
    assert small["up30-all"][toolgate] >= 80.0
