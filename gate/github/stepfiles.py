"""The runner's step files are ToolGate's alone: nothing the step ran can forge them.

The runner reads what a step leaves from five files it creates for the step
(``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV``, ``GITHUB_PATH``,
``GITHUB_STATE``): the step's outputs (the last value of a key wins), its summary, and
the environment and ``PATH`` of the job's later steps. The agent under test and
``setup`` never get these variables (:func:`gate.replay.command.agent_environ`), but they
run in the same container, where the files are writable paths (under
``/github/file_commands``). So :class:`StepSeal`:

* at the start, records each file's size (:meth:`StepSeal.start`; and makes ToolGate the
  reaper of every process the step starts, :func:`gate.replay.reaper.track`);
* once the gate is over (:meth:`StepSeal.close`, before ToolGate writes anything the
  step leaves): ends every process the step started (:func:`gate.replay.reaper.end_all`),
  then cuts each file back to its size at the start, warning about what was cut.

ToolGate writes its summary and its outputs after that, and nothing of the step is left
running to write after it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

STEP_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE")


@dataclass
class StepSeal:
    """See the module docstring. :meth:`close` acts once; later calls only end any
    process started since (none, normally)."""

    sizes: Mapping[str, tuple[Path, int]]
    """Variable → (its file, its size at the start)."""
    closed: bool = field(default=False)

    @classmethod
    def start(cls, environ: Mapping[str, str]) -> StepSeal:
        sizes: dict[str, tuple[Path, int]] = {}
        for name in STEP_FILES:
            value = environ.get(name)
            if not value:
                continue
            path = Path(value)
            try:
                sizes[name] = (path, path.stat().st_size)
            except OSError:
                sizes[name] = (path, 0)  # not there yet: anything in it later is not ours
        from gate.replay.reaper import track

        track()
        return cls(sizes)

    def close(self) -> list[str]:
        """End the step's processes and put the files back as they were; what happened
        that a reviewer should know, as sentences (warnings)."""
        notes: list[str] = []
        from gate.replay.reaper import end_all

        ended = end_all()
        if ended and not self.closed:
            notes.append(
                f"ToolGate ended {ended} process(es) the agent under test or `setup` left "
                "running (a process started during the step lives until the gate is over)."
            )
        if self.closed:
            return notes
        self.closed = True
        for name, (path, size) in self.sizes.items():
            try:
                now = path.stat().st_size
            except OSError:
                continue
            if now <= size:
                continue
            with contextlib.suppress(OSError):
                os.truncate(path, size)
            notes.append(
                f"something other than ToolGate wrote {now - size:,} bytes to ${name} during "
                "the step (the agent under test or `setup`, through the file's path): removed. "
                "Only ToolGate writes the step's outputs, summary and job environment."
            )
        return notes
