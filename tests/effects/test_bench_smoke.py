"""``bench/tau2_parity.py`` stays runnable: on generated τ²-format trajectories, and on a
results file a user points it at (the same file, so the same figure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "tau2_parity.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300
    )


def test_tau2_parity__generated_then_pointed_at__same_agreement(tmp_path: Path) -> None:
    made = tmp_path / "results.json"
    gen = _bench("--generate", "--tasks", "10", "--trials", "2", "--seed", "6", "--save", str(made))
    assert gen.returncode == 0, gen.stderr
    assert "generated 10 tasks × 2 trials" in gen.stdout
    line = next(x for x in gen.stdout.splitlines() if x.startswith("agreement: "))
    assert line.startswith("agreement: 19/20 simulations (95.0%)")
    assert "| behaviour | agree | simulations |" in gen.stdout
    assert "τ² also asks what the agent said" in gen.stdout
    again = _bench(str(made))
    assert again.returncode == 0, again.stderr
    assert line in again.stdout
