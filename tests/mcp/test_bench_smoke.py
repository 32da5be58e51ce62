"""``bench/mcp_bench.py`` stays runnable: the batch-window measurement on a few trials."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mcp_bench__window_on_few_trials__prints_both_clients_with_gaps() -> None:
    argv = [sys.executable, str(ROOT / "bench" / "mcp_bench.py"), "--only", "window"]
    p = subprocess.run([*argv, "--trials", "5"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for client in ("mcp.Client", "ClientSession"):
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith(client))
        p50, p90, p99, worst = (float(x) for x in line.split()[-4:])
        assert 0 <= p50 <= p90 <= p99 <= worst < 10_000, line
