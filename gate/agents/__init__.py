"""The agent kinds: ``agent.kind`` in toolgate.yml → the module that owns the kind.

How a kind is added, and what its module answers for, is written once in
docs/agent-protocol.md ("Adding an agent kind"); from outside the package,
:func:`register` it. A kind's module is imported when a config names it (start-up
imports none of them).
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, get_args

from gate.agents.interface import AgentSettings

KINDS: dict[str, str] = {
    "replay": "gate.agents.replay:ReplayAgent",
    "command": "gate.agents.command:CommandAgent",
    "python": "gate.agents.python:PythonAgent",
    "openai": "gate.agents.openai:OpenAIAgent",
    "mcp": "gate.agents.mcp:McpAgent",
}
"""Kind name → ``module:Class`` of its settings, in the order messages list them."""

RUNS_FILE_KIND = "replay"
"""The kind a runs file scored without a config was made by (``toolgate score``)."""


def names() -> tuple[str, ...]:
    """Every kind's name, in the registry's order."""
    return tuple(KINDS)


def settings_of(name: Any) -> type[AgentSettings] | None:
    """The settings model of the kind called ``name`` (``None``: no such kind)."""
    target = KINDS.get(name) if isinstance(name, str) else None
    return None if target is None else _load(name, target)


def all_settings() -> dict[str, type[AgentSettings]]:
    """Every kind's settings model (imports every kind: for messages about all of them)."""
    return {name: _load(name, target) for name, target in KINDS.items()}


def register(name: str, target: str) -> None:
    """Add a kind from outside the package: ``target`` is the ``module:Class`` of its
    settings (a subclass of :class:`~gate.agents.interface.AgentSettings`)."""
    if name in KINDS and KINDS[name] != target:
        raise ValueError(f"agent kind {name!r} is already registered ({KINDS[name]})")
    KINDS[name] = target


@functools.cache
def _load(name: str, target: str) -> type[AgentSettings]:
    module, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, AgentSettings)):
        raise TypeError(f"agent kind {name!r}: {target} is not an AgentSettings subclass")
    tags = get_args(cls.model_fields["kind"].annotation)
    if tags != (name,):
        raise TypeError(f"agent kind {name!r}: {target} must declare kind: Literal[{name!r}]")
    if not isinstance(getattr(cls, "adapter", None), str):
        raise TypeError(f"agent kind {name!r}: {target} names no adapter")
    return cls
