"""Record mode: run the user's real tools once to freeze their responses (local only).

``toolgate record`` is written once in docs/agent-protocol.md ("Freezing real responses");
with ``agent.servers`` the calls go to the team's MCP servers
(:class:`gate.replay.mcp.upstream.Upstream`). Here: the dataset is copied line by line,
other lines and keys exactly as they were, so the diff shows only the new responses. The
registry is imported with the config's folder and the working directory first on
``sys.path``; a call to a tool it lacks, or whose arguments did not parse, is answered
with an error and not recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.config import Config
from gate.errors import DatasetError, Problem, UsageError
from gate.model import Case
from gate.outdir import write_atomic
from gate.replay.frozen import (
    FunctionBackend,
    RecordedCall,
    RecordingBackend,
    ReplayBackend,
    ToolBackend,
)
from gate.replay.interface import Agent, build_agent
from gate.replay.python_worker import import_target
from gate.replay.session import AgentFailure, Job, Session, job_seed
from gate.scorers.context import NormalizerTable


@dataclass(frozen=True, slots=True)
class RecordSummary:
    out: Path
    cases: int
    recorded: int
    """Responses added across all cases."""
    tool_errors: int
    """Of those, responses recorded as errors (the tool raised)."""
    agent_errors: tuple[str, ...]
    """Cases whose agent run failed (their recorded calls are kept)."""


def refuse_in_ci(environ: Mapping[str, str]) -> None:
    if environ.get("CI", "").lower() == "true":
        raise UsageError(
            "`toolgate record` runs your real tools and is for local use only; "
            "it refuses to run when CI=true",
            hint="Record on your machine, review the new responses, and commit the dataset.",
        )


Registry = Mapping[str, Callable[..., Any]] | Callable[[str, Mapping[str, Any] | None], Any]


def load_registry(spec: str, paths: Sequence[str]) -> Registry:
    """Import ``--tools module:attribute``: a mapping of functions, or one handler."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--tools must be module:attribute, not {spec!r}")
    try:
        obj = import_target(spec, paths)
    except Exception as exc:  # any import-time failure of user code is a usage problem
        raise UsageError(f"--tools: cannot import {spec!r}: {type(exc).__name__}: {exc}") from None
    if isinstance(obj, Mapping):
        bad = [k for k, v in obj.items() if not isinstance(k, str) or not callable(v)]
        if bad:
            raise UsageError(f"--tools {spec}: {bad[0]!r} does not map a name to a function")
        return obj
    if callable(obj):
        return obj  # type: ignore[no-any-return]
    raise UsageError(f"--tools {spec}: expected a dict of functions or a function")


def record(
    config: Config,
    cases: Sequence[Case],
    dataset_path: Path,
    out: Path,
    tools: Registry | None,
    *,
    agent: Agent | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] = lambda s: None,
) -> RecordSummary:
    """Record the responses of real tools into a copy of the dataset (module docstring)."""
    refuse_in_ci(os.environ if environ is None else environ)
    if config.agent.samples_recorded and agent is None:
        raise UsageError(
            f"record needs an agent that calls tools; agent.kind is {config.agent.kind}"
        )
    if dataset_path.suffix.lower() != ".jsonl":
        raise UsageError("record writes JSONL datasets only; convert the CSV dataset first")
    if out.resolve() == dataset_path.resolve():
        raise UsageError("--out must not be the dataset itself: record writes a copy to review")
    backend_fn: ToolBackend
    with contextlib.ExitStack() as stack:
        if tools is None:
            servers = config.agent.mcp_servers()
            if not servers:
                raise UsageError(
                    "give --tools (your real tools), or use agent.kind: mcp with agent.servers "
                    "(your real MCP servers) to record through them"
                )
            from gate.replay.mcp.upstream import Upstream

            backend_fn = stack.enter_context(
                Upstream(servers, root=config.root, environ=os.environ)
            )
        elif isinstance(tools, Mapping):
            backend_fn = FunctionBackend(tools)
        else:
            backend_fn = FunctionBackend(handler=tools)
        agent = agent if agent is not None else build_agent(config)
        stack.callback(agent.close)
        norms = NormalizerTable.from_config(config)
        new: dict[str, list[RecordedCall]] = {}
        failed: list[str] = []
        agent.prepare(len(cases))
        for case in cases:
            backend = RecordingBackend(backend_fn, ReplayBackend(case, norms))
            job = Job(
                case=case,
                sample=0,
                seed=job_seed(config.seed, case.id, 0),
                step_budget=case.step_budget or config.agent.step_budget,
                timeout_s=config.agent.timeout_s,
            )
            try:
                agent.run(job, Session(job, backend))
            except AgentFailure as exc:
                failed.append(f"{case.id}: {str(exc).splitlines()[0]}")
            kept = [r for r in backend.recorded if not r.outcome.unrecorded and r.args is not None]
            if kept:
                new[case.id] = kept
            log(f"{case.id}: {len(kept)} response(s) recorded")
    recorded, errors = _write_copy(dataset_path, out, new)
    return RecordSummary(out, len(cases), recorded, errors, tuple(failed))


def _write_copy(src: Path, out: Path, new: Mapping[str, list[RecordedCall]]) -> tuple[int, int]:
    recorded = errors = 0
    lines_out: list[str] = []
    with src.open("r", encoding="utf-8", newline="") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                lines_out.append(line)
                continue
            try:
                row = jsonio.loads_strict(line)
            except jsonio.JsonInputError as exc:
                raise DatasetError(Problem(str(src), lineno, None, str(exc))) from None
            calls = new.get(str(row.get("id"))) if isinstance(row, dict) else None
            if not calls:
                lines_out.append(line)
                continue
            responses = list(row.get("tool_responses") or [])
            for rc in calls:
                entry: dict[str, Any] = {"name": rc.name, "args": dict(rc.args or {})}
                if rc.outcome.is_error:
                    entry["error"] = rc.outcome.content
                    errors += 1
                else:
                    entry["response"] = rc.outcome.content
                responses.append(entry)
                recorded += 1
            row["tool_responses"] = responses
            ending = "\r\n" if line.endswith("\r\n") else "\n"
            lines_out.append(json.dumps(row, ensure_ascii=False) + ending)
    write_atomic(out, ["".join(lines_out).encode("utf-8")])
    return recorded, errors
