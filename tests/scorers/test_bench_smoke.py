"""``bench/score_bench.py --quick`` stays runnable (the CI smoke test of the benchmark)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_score_bench__quick_without_peers__prints_every_ratio(tmp_path: Path) -> None:
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "score_bench.py"),
            "--quick",
            "--n",
            "300",
            "--peers",
            "",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "generated 300 case-samples" in p.stdout
    assert "toolgate score (whole process, all metrics)" in p.stdout
    assert "ratio toolgate whole process / json.loads decode" in p.stdout
