"""The ``mcp`` agent adapter: any program whose agent takes its tools from an MCP server.

For each case-sample ToolGate opens an :class:`~.endpoint.Endpoint` (the case's tools,
answered from its frozen responses) on the shared :class:`~.host.McpHost`, writes the
case to a JSON file, and starts ``agent.command`` (in ``agent.cwd``, default the config's
folder) with, added to its environment:

* ``TOOLGATE_MCP_URL`` — the endpoint's streamable-HTTP address (127.0.0.1, a path token of
  its own);
* ``TOOLGATE_MCP_COMMAND`` — a shell-quoted command that serves the same tools on stdio
  (:mod:`.bridge`), for MCP clients that launch their servers; ``TOOLGATE_MCP_COMMAND_JSON``
  is the same command as a JSON array;
* ``TOOLGATE_CASE`` — the path of a JSON file holding ``case_id``, ``sample``, ``seed``,
  ``user_input`` and ``message_history``.

What the agent prints on stdout is its final answer (stripped; at most
``agent.max_output_bytes``); its exit status and the number of MCP connections are kept in
the run's ``meta.mcp``. The gate's credentials and the tokens of ``agent.servers`` are
removed from the environment; ``agent.env`` is added.

**Every failure costs one case-sample, never the run**, and keeps every call recorded so
far (a batch still held is recorded before the endpoint closes):

=================  ===========================================================================
``timeout``        no tool call and no exit within ``timeout_s`` (the first step counts from
                   the start; so a case-sample lasts at most ``timeout_s × (step_budget + 1)``)
``crash``          the agent exits with a non-zero status (stderr tail attached), or cannot start
``protocol``       it exits 0 without a final answer, never connects (no MCP request at all),
                   opens more than ``max_connections`` connections, prints more than
                   ``max_output_bytes``, or sends a ``tools/call`` naming no tool
``step_budget``    a batch of calls past the step budget (recorded; its calls get an error)
``deadline``       the run's ``deadline_s`` passed
=================  ===========================================================================

The agent's whole process group is killed when its case-sample ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from gate.config import Config, McpAgent
from gate.errors import ConfigError, Problem
from gate.model import Run
from gate.replay.command import STDERR_TAIL_BYTES, agent_environ
from gate.replay.mcp import bridge
from gate.replay.mcp.endpoint import Endpoint
from gate.replay.mcp.host import McpHost
from gate.replay.session import AgentFailure, ErrorKind, Job, Session

__all__ = ["McpServedAgent"]

_READER_JOIN_S = 2.0
"""How long the pipes' readers get to finish once the process group is killed."""


class _Process:
    """One agent process: stdout kept whole (bounded), stderr's tail kept, its exit
    reported to ``on_exit``."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        max_output: int,
        on_exit: Any,
    ) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group: a kill reaches its children
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.max_output = max_output
        self.out = bytearray()
        self.overflow = False
        self.tail = bytearray()
        self.exited = threading.Event()
        self._on_exit = on_exit
        self._threads = [
            threading.Thread(target=self._read_out, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_err, args=(self.proc.stderr,), daemon=True),
            threading.Thread(target=self._wait, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read_out(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
                if len(self.out) + len(chunk) > self.max_output:
                    self.overflow = True
                    continue  # keep draining, so the agent never blocks on its own pipe
                self.out += chunk

    def _read_err(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
                self.tail += chunk
                if len(self.tail) > 2 * STDERR_TAIL_BYTES:
                    del self.tail[: len(self.tail) - STDERR_TAIL_BYTES]

    def _wait(self) -> None:
        self.proc.wait()
        self.exited.set()
        self._on_exit()

    def kill_group(self) -> None:
        """SIGKILL the process group (the agent and whatever it started in it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for t in self._threads:
            t.join(timeout=_READER_JOIN_S)
        for pipe in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    def stderr_tail(self, max_lines: int = 20) -> str:
        text = bytes(self.tail[-STDERR_TAIL_BYTES:]).decode("utf-8", "replace")
        return "\n".join(text.rstrip().splitlines()[-max_lines:])


class McpServedAgent:
    """The ``mcp`` adapter (module docstring)."""

    kind = "mcp"

    def __init__(self, config: Config, cfg: McpAgent, host: McpHost | None = None) -> None:
        self._cfg = cfg
        self._file = str(config.source) if config.source else "toolgate.yml"
        self._argv = (
            list(cfg.command) if isinstance(cfg.command, list) else shlex.split(cfg.command)
        )
        if not self._argv:
            raise ConfigError(Problem(self._file, None, "agent.command", "is empty"))
        if self._argv[0] in ("python", "python3"):
            self._argv[0] = sys.executable  # as for `command`: the interpreter running ToolGate
        self._cwd = str(config.resolve(cfg.cwd) if cfg.cwd else config.root)
        tokens = {name.upper() for s in cfg.servers for name in s.headers_env.values()}
        base = {k: v for k, v in agent_environ(os.environ).items() if k.upper() not in tokens}
        self._env = {**base, "PYTHONUNBUFFERED": "1", **cfg.env}
        self._host = host or McpHost()
        self._own_host = host is None
        self.max_parallel: int | None = cfg.workers

    def describe(self) -> dict[str, Any]:
        command = self._cfg.command
        shown = list(command) if isinstance(command, list) else shlex.split(command)
        return {
            "kind": self.kind,
            "command": shown,
            "workers": self._cfg.workers,
            "batch_window_ms": self._cfg.batch_window_ms,
            "max_connections": self._cfg.max_connections,
        }

    def samples_for(self, case_id: str, samples: int) -> range:
        return range(samples)

    def prepare(self, jobs: int) -> None:
        """Start the MCP host, and turn a program that does not exist into a config error
        (rather than one identical failure per case-sample)."""
        program = self._argv[0]
        found = shutil.which(program, path=os.environ.get("PATH")) or (
            program if (Path(self._cwd) / program).exists() else None
        )
        if found is None:
            raise ConfigError(
                Problem(self._file, None, "agent.command", f"cannot find the program {program!r}")
            )
        try:
            self._host.start()
        except AgentFailure as exc:
            raise ConfigError(Problem(self._file, None, "agent", exc.message)) from None

    def close(self) -> None:
        if self._own_host:
            self._host.stop()

    # ─── one case-sample ──────────────────────────────────────────────────────

    def run(self, job: Job, session: Session) -> Run | None:
        endpoint = Endpoint(
            session,
            batch_window_s=self._cfg.batch_window_ms / 1000,
            max_connections=self._cfg.max_connections,
        )
        url = self._host.open(endpoint)
        folder = tempfile.mkdtemp(prefix="toolgate-case-")
        proc: _Process | None = None
        failure: AgentFailure | None = None
        try:
            case_file = Path(folder) / "case.json"
            case_file.write_text(json.dumps(_case_document(job), ensure_ascii=False), "utf-8")
            stdio = bridge.command(url)
            env = {
                **self._env,
                "TOOLGATE_MCP_URL": url,
                "TOOLGATE_MCP_COMMAND": shlex.join(stdio),
                "TOOLGATE_MCP_COMMAND_JSON": json.dumps(stdio),
                "TOOLGATE_CASE": str(case_file),
            }
            try:
                proc = _Process(
                    self._argv, self._cwd, env, self._cfg.max_output_bytes, endpoint.notify
                )
            except OSError as exc:
                raise AgentFailure(
                    ErrorKind.CRASH, f"cannot start the agent {self._argv[0]!r}: {exc}"
                ) from None
            failure = _watch(job, endpoint, proc)
        finally:
            if proc is not None:
                proc.kill_group()
            self._host.close(endpoint)  # records a batch still held
            shutil.rmtree(folder, ignore_errors=True)
        assert proc is not None
        self._outcome(session, endpoint, proc, failure)
        return None

    def _outcome(
        self,
        session: Session,
        endpoint: Endpoint,
        proc: _Process,
        failure: AgentFailure | None,
    ) -> None:
        code = proc.proc.returncode if proc.exited.is_set() else None
        session.meta["mcp"] = {"exit_code": code, "connections": endpoint.connections}
        tail = proc.stderr_tail()
        detail = f"--- stderr (last lines) ---\n{tail}" if tail else None
        pid = f" [pid {proc.proc.pid}]"
        failure = endpoint.failure or failure
        if failure is not None:
            raise AgentFailure(failure.kind, failure.message + pid, detail=failure.detail or detail)
        if code != 0:
            raise AgentFailure(
                ErrorKind.CRASH, f"the agent exited with code {code}{pid}", detail=detail
            )
        if endpoint.requests == 0:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                "the agent never connected to its MCP server (TOOLGATE_MCP_URL or "
                f"TOOLGATE_MCP_COMMAND){pid}",
                detail=detail,
            )
        if proc.overflow:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent printed more than {self._cfg.max_output_bytes} bytes on stdout "
                f"(agent.max_output_bytes){pid}",
            )
        final = bytes(proc.out).decode("utf-8", "replace").strip()
        if not final:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent exited with code 0 without a final answer on stdout{pid}",
                detail=detail,
            )
        session.final = final


def _watch(job: Job, endpoint: Endpoint, proc: _Process) -> AgentFailure | None:
    """Wait for the agent to exit, a step at a time: each tool call starts a new step of
    at most ``timeout_s`` (calls, failures and the exit are the endpoint's only events).
    Returns the failure that ended the wait early, if any."""
    seen = endpoint.events()
    while True:
        try:
            timeout = job.step_timeout()
        except AgentFailure as deadline:
            return deadline
        now = endpoint.wait_event(seen, timeout, proc.exited.is_set)
        if endpoint.failure is not None or proc.exited.is_set():
            return None
        if now == seen:
            step = len(endpoint.session.turns) + 1
            return AgentFailure(
                ErrorKind.TIMEOUT,
                f"no tool call and no exit within {timeout:.3g}s (step {step})",
            )
        seen = now


def _case_document(job: Job) -> dict[str, Any]:
    """What ``TOOLGATE_CASE`` holds."""
    return {
        "case_id": job.case.id,
        "sample": job.sample,
        "seed": job.seed,
        "user_input": job.case.user_input,
        "message_history": [dict(m) for m in job.case.message_history],
    }
