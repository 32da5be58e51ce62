"""``kind: replay``: score a runs file made elsewhere; no agent is run
(:mod:`gate.replay.replay_agent`).

A sample is a recorded one: the run is scored on the samples the file holds, and none
can be added (no extra samples for undecided cases, no seeding, nothing to record).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import ClassVar, Literal

from gate.agents.interface import AgentSettings, Finding, Show


class MissingRuns(enum.StrEnum):
    """What a ``replay`` agent does with a case-sample its runs file has no run for."""

    FAIL = "fail"
    """Bad input (exit code 2): the message names the cases the file lacks."""
    SKIP = "skip"
    """Gate on the cases present: the others are *not run*, named in the first line of
    every report, never counted as passes or failures."""


class ReplayAgent(AgentSettings):
    kind: Literal["replay"]
    runs: str
    """The runs file (relative to the config)."""
    missing: MissingRuns = MissingRuns.FAIL
    """A case-sample the runs file lacks: ``fail`` (bad input) or ``skip`` (not run)."""

    adapter: ClassVar[str] = "gate.replay.replay_agent:ReplayRunsAgent"
    samples_recorded: ClassVar[bool] = True

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        path = (root / self.runs).resolve()
        return [] if path.exists() else [("runs", f"no such file {show(path)}")]
