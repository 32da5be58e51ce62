"""The ``mcp`` agent adapter: any program whose agent takes its tools from an MCP server.

What the agent gets and what costs a case-sample are the user's contract, written once in
docs/agent-protocol.md (section "``mcp``: agents whose tools come from an MCP server").
Here: each case-sample opens an :class:`~.endpoint.Endpoint` on the shared
:class:`~.host.McpHost` and starts one agent process; a conversation talks over a line on
stdin (:class:`_Conversation`). A batch still held is recorded before the endpoint closes,
and the agent's whole process group is killed when its case-sample ends.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from gate import jsonio
from gate.agents.mcp import McpAgent
from gate.config import Config
from gate.errors import ConfigError, Problem
from gate.model import Run
from gate.replay.command import AgentProcess, program
from gate.replay.interface import Agent
from gate.replay.mcp import bridge
from gate.replay.mcp.endpoint import Endpoint
from gate.replay.mcp.host import McpHost
from gate.replay.session import AgentFailure, ErrorKind, Job, Session

_READER_JOIN_S = 2.0
"""How long the pipes' readers get to finish once the process group is killed."""


class _Process(AgentProcess):
    """One agent process: stdout kept whole (bounded) — or, with ``lines`` (a
    conversation), split into lines, each reported to ``on_event`` —, its exit reported
    to ``on_event``. Only with ``lines`` is its stdin a pipe."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        max_output: int,
        on_event: Callable[[], None],
        *,
        lines: bool = False,
    ) -> None:
        super().__init__(argv, cwd, env, stdin=lines)
        self.max_output = max_output
        self.out = bytearray()
        self.overflow = False
        self.exited = threading.Event()
        self._on_event = on_event
        self._lines: deque[bytes] = deque()
        self._queued = 0  # bytes of stdout read and not yet taken (lines and a partial one)
        self._lines_lock = threading.Lock()
        read = self._read_lines if lines else self._read_out
        self._reader = threading.Thread(target=read, args=(self.proc.stdout,), daemon=True)
        waiter = threading.Thread(target=self._wait, daemon=True)
        self._threads += [(self.proc.stdout, self._reader), (None, waiter)]
        self._reader.start()
        waiter.start()

    def _read_lines(self, pipe: IO[bytes]) -> None:
        """Stdout as lines (without their newline); a last line without one counts. More
        than ``max_output`` bytes read and not yet taken is an overflow: what follows is
        drained and dropped."""
        partial = bytearray()
        with contextlib.suppress(OSError, ValueError):
            while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
                if self.overflow:
                    continue  # keep draining, so the agent never blocks on its own pipe
                partial += chunk
                with self._lines_lock:
                    self._queued += len(chunk)
                    before = len(self._lines)
                    while (nl := partial.find(b"\n")) >= 0:
                        self._lines.append(bytes(partial[:nl]))
                        self._queued -= 1  # the newline is not kept
                        del partial[: nl + 1]
                    event = len(self._lines) > before
                    if self._queued > self.max_output:
                        self.overflow = event = True
                        self._lines.clear()
                        partial.clear()
                if event:  # a line, not a part of one, is an event of the step timeout
                    self._on_event()
        if partial and not self.overflow:
            with self._lines_lock:
                self._lines.append(bytes(partial))
            self._on_event()

    def has_line(self) -> bool:
        with self._lines_lock:
            return bool(self._lines)

    def next_line(self) -> bytes | None:
        """The next stdout line not yet taken, if any."""
        with self._lines_lock:
            if not self._lines:
                return None
            line = self._lines.popleft()
            self._queued -= len(line)
            return line

    def stdout_done(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for stdout's end: a process that exited may have
        left its last line in the pipe."""
        self._reader.join(timeout)

    def send(self, data: bytes, timeout: float) -> bool:
        """Write ``data`` to stdin within ``timeout`` s. False when the agent closed its
        stdin or exited (its exit says what happened); raises a ``timeout``
        :class:`AgentFailure` when it stops reading."""
        left = self.write(data, timeout, self.exited.is_set)
        if left:
            raise AgentFailure(
                ErrorKind.TIMEOUT,
                f"the agent did not read its stdin within {timeout:.3g}s "
                f"({left} bytes of the next user turn still unsent)",
            )
        return left == 0

    def _read_out(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
                if len(self.out) + len(chunk) > self.max_output:
                    self.overflow = True
                    continue  # keep draining, so the agent never blocks on its own pipe
                self.out += chunk

    def _wait(self) -> None:
        self.proc.wait()
        self.exited.set()
        self._on_event()


class McpServedAgent(Agent):
    """The ``mcp`` adapter (module docstring)."""

    kind = "mcp"

    def __init__(self, config: Config, cfg: McpAgent, host: McpHost | None = None) -> None:
        self._cfg = cfg
        self._file, self._argv, self._cwd, self._env = program(config, cfg)
        self._host = host or McpHost()
        self._own_host = host is None
        self.max_parallel: int | None = cfg.workers

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "command": self._cfg.argv(),
            "workers": self._cfg.workers,
            "batch_window_ms": self._cfg.batch_window_ms,
            "max_connections": self._cfg.max_connections,
            **self._cfg.declared(),
        }

    def prepare(self, jobs: int) -> None:
        """Start the MCP host, and turn a program that does not exist into a config error
        (rather than one identical failure per case-sample)."""
        program = self._argv[0]
        if not (shutil.which(program) or (Path(self._cwd) / program).exists()):
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
        talk: _Conversation | None = None
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
                    self._argv,
                    self._cwd,
                    env,
                    self._cfg.max_output_bytes,
                    endpoint.notify,
                    lines=session.conversation,
                )
            except OSError as exc:
                raise AgentFailure(
                    ErrorKind.CRASH, f"cannot start the agent {self._argv[0]!r}: {exc}"
                ) from None
            if session.conversation:
                talk = _Conversation(session, endpoint, proc, self._host)
                failure = talk.run()
            else:
                failure = _watch(job, endpoint, proc)
        finally:
            if proc is not None:
                proc.kill(time.monotonic() + _READER_JOIN_S)
            self._host.close(endpoint)  # records a batch still held
            shutil.rmtree(folder, ignore_errors=True)
        assert proc is not None
        # How it ended: its failure, else (one user turn) its final answer from stdout; a
        # conversation's answers are already recorded.
        code = proc.proc.returncode if proc.exited.is_set() else None
        mcp: dict[str, Any] = {"exit_code": code, "connections": endpoint.connections}
        if talk is not None:
            mcp["connections_per_turn"] = list(endpoint.turn_connections)
        session.meta["mcp"] = mcp
        tail = proc.stderr_tail.text()
        detail = f"--- stderr (last lines) ---\n{tail}" if tail else None
        failure = endpoint.failure or failure
        if failure is not None:
            raise AgentFailure(failure.kind, failure.message, detail=failure.detail or detail)
        when = ""
        if talk is not None:
            turns = len(session.job.case.conversation)
            when = (
                " after the conversation ended"
                if talk.over
                else f" after answering {talk.answered} of {turns} user turns"
            )
        if code != 0:
            raise AgentFailure(
                ErrorKind.CRASH, f"the agent exited with code {code}{when}", detail=detail
            )
        if talk is not None and not talk.over:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent exited with code 0{when}: after each answer it reads the next "
                f"user turn from stdin, and exits at its end of file",
                detail=detail,
            )
        if endpoint.requests == 0:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                "the agent never connected to its MCP server (TOOLGATE_MCP_URL or "
                "TOOLGATE_MCP_COMMAND)",
                detail=detail,
            )
        if talk is not None:
            return None
        if proc.overflow:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent printed more than {self._cfg.max_output_bytes} bytes on stdout "
                f"(agent.max_output_bytes)",
            )
        final = bytes(proc.out).decode("utf-8", "replace").strip()
        if not final:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                "the agent exited with code 0 without a final answer on stdout",
                detail=detail,
            )
        session.final = final
        return None


_LINE_HINT = (
    ' — in a conversation stdout carries one {"type": "final", "content": ...} line per '
    "user turn; write logs to stderr"
)


class _Conversation:
    """A conversation case over the agent's stdin and stdout (docs/agent-protocol.md,
    "Conversations: a line on stdin"): each answer line is recorded, the next user turn
    written to stdin, every wait a step of at most ``timeout_s``."""

    def __init__(self, session: Session, endpoint: Endpoint, proc: _Process, host: McpHost) -> None:
        self.job = session.job
        self.session = session
        self.endpoint = endpoint
        self.proc = proc
        self.host = host
        self.answered = 0
        """User turns the agent answered."""
        self.over = False
        """ToolGate ended the conversation (its last turn answered, or a must-not-call)."""

    def _woken(self) -> bool:
        return self.proc.exited.is_set() or self.proc.overflow or self.proc.has_line()

    def run(self) -> AgentFailure | None:
        """Talk until the conversation is over and the agent exited, or it fails.
        Returns the failure that ended it early, if any (an exit is judged afterwards)."""
        seen = self.endpoint.events()
        while True:
            try:
                timeout = self.job.step_timeout()
            except AgentFailure as deadline:
                return deadline
            now = self.endpoint.wait_event(seen, timeout, self._woken)
            if self.endpoint.failure is not None:
                return None
            if self.proc.overflow:
                return AgentFailure(
                    ErrorKind.PROTOCOL,
                    f"the agent printed more than {self.proc.max_output} bytes on stdout not "
                    "yet taken as answers: a line longer than agent.max_output_bytes, or lines "
                    "beyond its answers",
                )
            line = self.proc.next_line()
            if line is None and self.proc.exited.is_set():
                self.proc.stdout_done(_READER_JOIN_S)  # its last line may be in the pipe
                line = self.proc.next_line()
            if line is not None:
                try:
                    self._answer(line)
                except AgentFailure as failure:
                    return failure
                if self.over:
                    return self._finish()
                seen = self.endpoint.events()
                continue
            if self.proc.exited.is_set():
                return None
            if now == seen:
                turns = len(self.job.case.conversation)
                return AgentFailure(
                    ErrorKind.TIMEOUT,
                    f"no tool call, answer or exit within {timeout:.3g}s "
                    f"(step {len(self.session.turns) + 1}, user turn "
                    f"{self.session.user_turn + 1} of {turns})",
                )
            seen = now

    def _answer(self, line: bytes) -> None:
        """One answer line: record it and write the next user turn (or end the
        conversation). Raises the :class:`AgentFailure` a bad line or a stuck stdin is."""
        shown = line[:200].decode("utf-8", "replace")
        try:
            message = jsonio.loads_strict(line)
        except jsonio.JsonInputError as exc:
            raise AgentFailure(
                ErrorKind.PROTOCOL, f"stdout line is not JSON ({exc}): {shown!r}{_LINE_HINT}"
            ) from None
        if not isinstance(message, dict) or message.get("type") != "final":
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f'stdout line is not a {{"type": "final"}} message: {shown!r}{_LINE_HINT}',
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise AgentFailure(ErrorKind.PROTOCOL, '"final" content must be a string or null')
        turn = self.answered + 1
        if "turn" in message and message["turn"] != turn:
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f'a "final" line for turn {message["turn"]!r} while running turn {turn}: '
                "each answer answers the user turn it was sent",
            )
        self.host.run_on_loop(self.endpoint.flush)  # a batch still held is this turn's
        nxt = self.session.next_user(content)
        self.answered += 1
        if nxt is None:
            self.over = True
            return
        self.endpoint.end_turn()
        if self.proc.has_line():
            raise AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent printed a second line after answering user turn {self.answered} "
                f"(before it was sent user turn {self.answered + 1}){_LINE_HINT}",
            )
        message = {
            "type": "user",
            "case_id": self.job.case.id,
            "sample": self.job.sample,
            "turn": self.answered + 1,
            "content": nxt,
            "messages": self.session.messages(),
        }
        self.proc.send(jsonio.dumps_line(message), self.job.step_timeout())

    def _finish(self) -> AgentFailure | None:
        """The conversation is over: end of file on stdin, then at most ``timeout_s`` for
        the agent to exit (printing nothing more)."""
        self.proc.close_stdin()
        try:
            timeout = self.job.step_timeout()
        except AgentFailure as deadline:
            return deadline
        end = time.monotonic() + timeout
        seen = self.endpoint.events()
        while not self.proc.exited.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return AgentFailure(
                    ErrorKind.TIMEOUT,
                    f"the agent did not exit within {timeout:.3g}s of the end of the "
                    "conversation (end of file on its stdin)",
                )
            seen = self.endpoint.wait_event(seen, left, self._woken)
            if self.endpoint.failure is not None:
                return None
            if self.proc.overflow or self.proc.has_line():
                break
        self.proc.stdout_done(_READER_JOIN_S)
        if self.proc.overflow or self.proc.has_line():
            return AgentFailure(
                ErrorKind.PROTOCOL,
                f"the agent printed on stdout after its last answer{_LINE_HINT}",
            )
        return None


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
    """What ``TOOLGATE_CASE`` holds (a conversation's also says so, and how many user
    turns it has)."""
    doc: dict[str, Any] = {
        "case_id": job.case.id,
        "sample": job.sample,
        "seed": job.seed,
        "user_input": job.case.user_input,
        "message_history": [dict(m) for m in job.case.message_history],
    }
    if job.case.conversation:
        doc["conversation"] = True
        doc["turns"] = len(job.case.conversation)
    return doc
