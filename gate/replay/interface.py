"""What an agent adapter is, and how the config picks one.

An adapter runs the agent under test on one case-sample (:class:`~gate.replay.session.Job`)
and drives a :class:`~gate.replay.session.Session`: it passes every assistant turn's
calls to ``session.answer``, and each final answer to ``session.next_user``, which
returns a conversation's next scripted user turn (sent to the agent with
``session.messages()``, the conversation so far) or ``None`` — the case-sample is done.
It returns ``None`` (the runner
builds the run from the session) or, for ``replay``, a stored :class:`~gate.model.Run`.
A failure raises :class:`~gate.replay.session.AgentFailure`; any other exception is a bug
in the adapter or the agent and is recorded as an ``exception`` error — the run goes on.

Which adapter runs an agent is its kind's answer (``agent.kind`` in toolgate.yml: the
``adapter`` of its settings, :mod:`gate.agents`); this module builds it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol

from gate.config import Config
from gate.model import Run
from gate.replay.session import Job, Session


class Agent(Protocol):
    """What the runner asks of an adapter; an adapter that subclasses it keeps the
    defaults it does not override."""

    kind: str

    max_parallel: int | None = None
    """Most case-samples the adapter can run at once (``None``: no limit of its own)."""

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        """The sample indexes to run for a case (``range(samples)`` except for replay)."""
        return range(samples)

    def prepare(self, jobs: int) -> None:
        """Called once before the first job with the number of jobs to run."""
        return None

    def run(self, job: Job, session: Session) -> Run | None: ...

    def describe(self) -> dict[str, Any]:
        """What ran, for results (no secrets)."""
        ...

    def close(self) -> None:
        return None


def build_agent(config: Config) -> Agent:
    """The adapter of ``config.agent``'s kind (its settings' ``adapter``), given the config
    and those settings. Problems with the agent's own settings (a command that cannot
    start, a callable that cannot be imported, a missing API key) are
    :class:`gate.errors.ConfigError` s naming the field."""
    module, _, name = config.agent.adapter.partition(":")
    adapter: Any = getattr(importlib.import_module(module), name)
    built: Agent = adapter(config, config.agent)
    return built
