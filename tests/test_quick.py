"""The fast subset the README names: ``pytest -m quick`` collects exactly the test files
tests/quick.txt lists, and every listed path exists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, quick_paths


def test_quick_list__every_path_exists_inside_tests() -> None:
    listed = quick_paths()
    assert listed
    for path in listed:
        assert path.exists(), f"tests/quick.txt: {path.relative_to(ROOT)} does not exist"
        assert (ROOT / "tests") in path.parents, f"{path} is not under tests/"


def test_quick_marker__collects_the_listed_files_and_no_other() -> None:
    command = "-m pytest --collect-only -q -m quick -p no:randomly -p no:cacheprovider"
    done = subprocess.run(
        [sys.executable, *command.split()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    files = {
        (ROOT / line.split("::", 1)[0]).resolve()
        for line in done.stdout.splitlines()
        if "::" in line
    }
    listed = quick_paths()
    assert files, done.stdout[-2000:]
    for f in files:
        assert any(f == p or p in f.parents for p in listed), f"{f} is not in tests/quick.txt"
    for p in listed:
        assert any(f == p or p in f.parents for f in files), f"{p}: no test collected"
    assert Path(__file__).resolve() in files
