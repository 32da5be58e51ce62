"""What an agent kind is: the base of every ``agent:`` section, and the questions the rest of
ToolGate asks a kind instead of comparing its name (docs/agent-protocol.md, "Adding an
agent kind", lists them). Nothing here imports the rest of ToolGate: :mod:`gate.config`
builds on it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

SECTION = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)
"""How every section of toolgate.yml validates (:mod:`gate.config` shares it): unknown
keys are errors, booleans and numbers strict. ``defer_build``: a model's validator is built
when it first validates, so a command that never reads a config does not build them all."""

Finding = tuple[str, str]
"""A preflight problem: the key of the ``agent`` section it is about, and the message."""

Show = Callable[[Path], str]
"""How messages name a file (relative to the working directory when inside it)."""


class AgentSettings(BaseModel):
    """The keys every kind has, and the kind's answers (module docstring). A kind's
    subclass narrows ``kind`` to its name (``Literal["command"]``) and sets
    :attr:`adapter`."""

    model_config = SECTION

    kind: str
    timeout_s: Annotated[float, Field(gt=0)] = 60.0
    """Most time one agent step (one request, one worker answer) may take."""
    step_budget: Annotated[int, Field(ge=1)] = 10
    """Most assistant turns per case-sample unless the case sets its own."""
    model: str | None = None
    """The model the agent uses, as the team names it (``gpt-4.1``): for a program, what
    ToolGate cannot see for itself. Reported beside the results and in "This run
    changes …", part of the setup a history describes, the key ``pricing`` is looked up
    by; never a reason for "not comparable". An ``openai`` agent requires it."""

    adapter: ClassVar[str]
    """How the kind runs: ``module:Class`` of its adapter, called with the config and
    these settings (:class:`gate.replay.interface.Agent`)."""
    samples_recorded: ClassVar[bool] = False
    """The samples are read from a runs file made elsewhere: the run is scored on the
    samples the file holds (one unless ``samples`` is set), and none can be added — no
    extra samples for undecided cases, no seeding of base histories, nothing to record."""
    validate_starts: ClassVar[str | None] = None
    """The key naming what ``toolgate validate`` starts once, on the first case, to report
    an agent that cannot start (``None``: validate does not start it)."""

    def declared(self) -> dict[str, Any]:
        """What the config declares of the agent's setup beyond its command: ``model``
        when it names one, ``env`` when it sets variables (in key order) — part of the
        agent's description, of the setup a history describes, and named when a run
        changes them."""
        out: dict[str, Any] = {}
        if self.model is not None:
            out["model"] = self.model
        env: dict[str, str] | None = getattr(self, "env", None)
        if env:
            out["env"] = dict(sorted(env.items()))
        return out

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        """What stops this agent from starting, found before the first case without
        starting it (``root``: the config's folder, which relative paths start from)."""
        return []

    def interpreter(self, root: Path) -> str | None:
        """The interpreter a bare ``python`` runs: ToolGate's own unless the kind lets the
        config choose (:class:`Interpreted`); ``None``: the one on ``PATH``."""
        return sys.executable

    def with_interpreter(self, interpreter: str) -> Self:
        """These settings with a bare ``python`` running ``interpreter`` (the Action's
        ``install:`` environment) where the kind lets the config choose and the config
        does not; else these settings."""
        return self

    def notes(self, root: Path) -> list[str]:
        """What ``toolgate validate`` says about settings that work but may surprise."""
        return []

    def secret_env_names(self) -> list[str]:
        """Environment variables the settings name whose values are secrets (never in a
        report)."""
        return []

    def mcp_servers(self) -> tuple[McpServerConfig, ...]:
        """The team's real MCP servers: what ``toolgate record`` calls through and what
        the gate lists tools from to report drift; never called while the agent runs."""
        return ()

    def legacy_identity(self, base: Mapping[str, Any]) -> dict[str, Any]:
        """What the previous release hashed of the agent besides its kind, from the
        description of a base run of the same kind (``base``): a history of that release
        whose hash matches is the same test, once."""
        return {}


BARE_PYTHON = ("python", "python3")
"""A command's program that ``agent.python`` decides: ToolGate's interpreter, PATH's, or
the one it names."""

PYTHON_TOOLGATE = "toolgate"
"""``agent.python: toolgate``: the interpreter running ToolGate (the default)."""
PYTHON_PATH = "path"
"""``agent.python: path``: the ``python`` found on ``PATH``."""


def _python_choice(v: str) -> str:
    if not v.strip():
        raise ValueError(
            "must be `toolgate`, `path` or the path of a Python interpreter "
            "(for example .venv/bin/python)"
        )
    return v


class Interpreted(AgentSettings):
    """A kind that runs Python programs and lets the config choose their interpreter
    (``agent.python``); in the Action, ``install:`` makes the agent's environment and a
    config that does not set the key runs its interpreter."""

    python: Annotated[str, AfterValidator(_python_choice)] = PYTHON_TOOLGATE
    """Which interpreter runs: ``toolgate`` the one running ToolGate (it exists wherever
    ToolGate does), ``path`` the one found on ``PATH``, or the path of an interpreter
    (relative to the config's folder: ``.venv/bin/python``, the agent's own environment).
    A path as a command's program is always run as given."""

    def interpreter(self, root: Path) -> str | None:
        if self.python == PYTHON_TOOLGATE:
            return sys.executable
        if self.python == PYTHON_PATH:
            return None
        # Never resolved: a virtualenv's python is a symlink to another environment's
        # interpreter.
        return os.path.abspath(root / self.python)

    def with_interpreter(self, interpreter: str) -> Self:
        if "python" in self.model_fields_set:
            return self  # what the file says wins
        return self.model_copy(update={"python": interpreter})

    def preflight(self, root: Path, show: Show) -> list[Finding]:
        interpreter = self.interpreter(root)
        if interpreter is None or interpreter == sys.executable or Path(interpreter).exists():
            return []
        return [
            (
                "python",
                f"the interpreter {self.python!r} is not there "
                f"(looked for {show(Path(interpreter))})",
            )
        ]


class McpServerConfig(BaseModel):
    """A team's real MCP server: what ``toolgate record`` proxies calls to and what the
    gate lists tools from to report drift. Exactly one of ``url`` (streamable HTTP) and
    ``command`` (stdio)."""

    model_config = SECTION

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    url: str | None = None
    command: list[str] | str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    """Added to the stdio server's environment."""
    cwd: str | None = None
    headers_env: dict[str, str] = Field(default_factory=dict)
    """HTTP header → name of the environment variable holding its value (a token)."""
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    """Most time connecting, listing tools or one call may take."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.url is None) == (self.command is None):
            raise ValueError("give exactly one of `url` (streamable HTTP) and `command` (stdio)")
        if self.url is not None and not self.url.lower().startswith(("http://", "https://")):
            raise ValueError(f"`url` {self.url!r} must be an http:// or https:// URL")
        return self
