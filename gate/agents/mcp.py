"""``kind: mcp``: any program whose agent takes its tools from an MCP server. ToolGate
serves the case's tools over MCP and sees every call at the tool boundary
(:mod:`gate.replay.mcp`)."""

from __future__ import annotations

import shlex
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from gate.agents.interface import AgentSettings, McpServerConfig


class McpAgent(AgentSettings):
    """One process per case-sample, with ``TOOLGATE_MCP_URL``, ``TOOLGATE_MCP_COMMAND``
    and ``TOOLGATE_CASE`` in its environment."""

    kind: Literal["mcp"]
    command: list[str] | str
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    workers: Annotated[int, Field(ge=1, le=256)] = 4
    """Most agent processes running at once."""
    batch_window_ms: Annotated[float, Field(ge=0, le=10_000)] = 50.0
    """How long an answer is held for calls that arrive alongside it (one parallel
    batch); 0 makes every call its own step."""
    max_connections: Annotated[int, Field(ge=1, le=1000)] = 1
    """MCP connections (sessions, stdio server launches) one case-sample may open in a
    user turn (a conversation counts each of its turns on its own)."""
    max_output_bytes: Annotated[int, Field(ge=1024)] = 1024 * 1024
    """Longest final answer (stdout) accepted."""
    servers: list[McpServerConfig] = Field(default_factory=list)
    """The team's real MCP servers, for ``toolgate record`` and tool-list drift; never
    called while the gate runs the agent."""

    adapter: ClassVar[str] = "gate.replay.mcp.agent:McpServedAgent"

    def argv(self) -> list[str]:
        """The command line as configured (a string is split like a shell would)."""
        return list(self.command) if isinstance(self.command, list) else shlex.split(self.command)

    @model_validator(mode="after")
    def _unique_servers(self) -> McpAgent:
        names = [s.name for s in self.servers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"server name {dupes[0]!r} appears twice")
        return self

    def secret_env_names(self) -> list[str]:
        return [v for s in self.servers for v in s.headers_env.values()]

    def mcp_servers(self) -> tuple[McpServerConfig, ...]:
        return tuple(self.servers)
