"""What ``toolgate check`` is asked to do and what it hands back: the values between its
callers (the CLI and the Action) and :func:`gate.pipeline.check.check`, kept apart so the
publishing stage can return an outcome without importing the check back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gate.model import Shard

if TYPE_CHECKING:
    from gate.github.context import GitHubContext
    from gate.pipeline.inputs import Inputs
    from gate.results import Results


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What `toolgate check` was asked to do (the CLI and the Action build this)."""

    config_path: Path
    config_display: str | None = None
    out: Path | None = None
    baseline: str | None = None
    """A baseline results.json, ``none``, or None for the config's ``baseline.path``."""
    baseline_source: str | None = None
    baseline_missing: str | None = None
    """Why there is no baseline, in words (the Action's search says what it looked for);
    ``None``: said from ``baseline``."""
    require_baseline: bool = False
    """A run compared with nothing fails (``--require-baseline``)."""
    samples: int | None = None
    shard: Shard | None = None
    resume: bool = False
    base_run: bool = False
    """A run of the base branch: its results seed the next pull request's base history
    (every case brought up to ``policy.min_history`` samples)."""
    comment: bool = True
    progress: bool = True
    github: GitHubContext | None = None
    """The GitHub context the caller has read already (the Action): nothing is then read
    from the environment for it, and the caller publishes; ``None`` (``toolgate check``):
    read from ``environ`` and, in Actions, published here."""
    inputs: Inputs | None = None
    """The config and dataset the caller has loaded already from ``config_path`` (the
    Action reads them to plan its outputs): each input file is read once; ``None``: read
    here."""


@dataclass(slots=True)
class CheckOutcome:
    """What the check decided and wrote: the results, their folder and the exit code."""

    results: Results
    out: Path
    exit_code: int
