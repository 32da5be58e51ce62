"""``kind: replay``: score a runs file made elsewhere; no agent is run
(:mod:`gate.replay.replay_agent`).

A sample is a recorded one: the run is scored on the samples the file holds, and none
can be added (no extra samples for undecided cases, no seeding, nothing to record).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from gate.agents.interface import AgentSettings, Finding, Show


class ReplayAgent(AgentSettings):
    kind: Literal["replay"]
    runs: str
    """The runs file (relative to the config)."""

    adapter: ClassVar[str] = "gate.replay.replay_agent:ReplayRunsAgent"
    samples_recorded: ClassVar[bool] = True

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        path = (root / self.runs).resolve()
        return [] if path.exists() else [("runs", f"no such file {show(path)}")]
