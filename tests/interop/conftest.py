"""Shared helpers for the interop tests: the sample files and the real CLI in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).parent / "samples"


def toolgate(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``toolgate`` command line (``python -m gate``) and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "gate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.fixture
def samples() -> Path:
    return SAMPLES
