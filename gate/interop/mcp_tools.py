"""Tool lists from MCP servers: ``toolgate import mcp-tools`` (:func:`write_tools_file`), and
drift against the pin (:func:`server_drift`); docs/agent-protocol.md ("Your real MCP
servers") gives both. A server that cannot be reached is a notice, never a verdict.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from gate.baseline.diff import definition_diff
from gate.config import Config, McpServerConfig
from gate.errors import McpServerError
from gate.model import DriftChange, ToolDrift, ToolRef, ToolSpec

__all__ = ["list_server_tools", "server_drift", "tool_drift", "write_tools_file"]


def list_server_tools(
    server: McpServerConfig, *, root: Path, environ: Mapping[str, str]
) -> list[ToolSpec]:
    """The tools one server advertises (raises :class:`McpServerError`)."""
    # The MCP SDK takes about 2 s to import: only a command that lists a server pays it
    # (every `toolgate check` asks for the drift, and most configure no server).
    from gate.replay.mcp.upstream import Upstream

    with Upstream([server], root=root, environ=environ) as upstream:
        return upstream.listed(server.name)


def write_tools_file(tools: Sequence[ToolSpec], out: Path) -> None:
    """The tools as a tools.json, sorted by name; a tool's MCP annotations are kept (its
    ``readOnlyHint`` and ``destructiveHint`` say its effect when judging effects)."""
    entries = [dict(t.definition()) for t in sorted(tools, key=lambda t: t.name)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _info(spec: ToolSpec) -> ToolRef:
    return ToolRef(
        hash=spec.definition_hash(), description=spec.description, parameters=dict(spec.parameters)
    )


def _same(a: ToolSpec, b: ToolSpec) -> bool:
    # Name, description and input schema: what the drift diff can show. Annotations (the
    # tool's effect) are read from the pinned file, never from the server at check time.
    return (
        dataclasses.replace(a, annotations=None).definition_hash()
        == dataclasses.replace(b, annotations=None).definition_hash()
    )


def tool_drift(
    pinned: Mapping[str, ToolSpec], advertised: Mapping[str, tuple[str, ToolSpec]]
) -> list[ToolDrift]:
    """Pinned definitions vs what the servers advertise (tool → (server, definition))."""
    out: list[ToolDrift] = []
    for name in sorted(set(pinned) | set(advertised)):
        pin = pinned.get(name)
        served = advertised.get(name)
        if pin is not None and served is not None and _same(pin, served[1]):
            continue
        change = (
            DriftChange.ADDED
            if pin is None
            else DriftChange.REMOVED
            if served is None
            else DriftChange.CHANGED
        )
        out.append(
            ToolDrift(
                tool=name,
                change=change,
                diff=tuple(
                    definition_diff(
                        _info(pin) if pin else None, _info(served[1]) if served else None
                    )
                ),
                server=served[0] if served else None,
            )
        )
    return out


def server_drift(
    config: Config, pinned: Mapping[str, ToolSpec], environ: Mapping[str, str]
) -> tuple[list[ToolDrift], list[str]]:
    """Drift between the dataset's tools and ``agent.servers`` (docs/agent-protocol.md), and
    notices for servers that could not be listed. Nothing without configured servers."""
    servers = config.agent.mcp_servers()
    if not servers:
        return [], []
    advertised: dict[str, tuple[str, ToolSpec]] = {}
    notices: list[str] = []
    for server in servers:
        try:
            tools = list_server_tools(server, root=config.root, environ=environ)
        except McpServerError as exc:
            notices.append(f"tool drift not checked for MCP server {server.name!r}: {exc}")
            continue
        for spec in tools:
            advertised.setdefault(spec.name, (server.name, spec))
    if notices:  # a server missing would make all its tools look removed
        return [], notices
    return tool_drift(pinned, advertised), notices
