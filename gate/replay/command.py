"""The ``command`` agent adapter: any program, any language, over JSON Lines.

A pool of ``agent.workers`` long-lived worker processes; each case-sample borrows one
idle worker. The protocol, the environment a worker gets, and what costs a case-sample
(never the run) are written once in docs/agent-protocol.md (section "The ``command``
protocol"). Every reply must name the case-sample (and the user turn) it answers
(:func:`_check_addressed`).

**Every exchange is bounded.** Writes go through a non-blocking stdin under the step's
timeout; a wait for output also notices, every :data:`EXIT_CHECK_S`, a worker that exited
while a child holds its stdout; a kill always reaches the worker's process group.
stdout is read only while a message is awaited, into a buffer that holds at most one
line of :data:`MAX_LINE_BYTES`; stderr is drained continuously and only its last
:data:`STDERR_TAIL_BYTES` are kept.
"""

from __future__ import annotations

import abc
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, ClassVar

from gate import jsonio
from gate.adapters.interface import PayloadError
from gate.adapters.plain import calls_from_plain
from gate.agents.command import CommandAgent, ReplyIds
from gate.agents.interface import BARE_PYTHON
from gate.agents.mcp import McpAgent
from gate.config import Config
from gate.errors import ConfigError, Problem, WorkerBroken
from gate.model import Run
from gate.replay.interface import Agent
from gate.replay.session import AgentFailure, ErrorKind, Job, Session

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Longest protocol line accepted from an agent."""

STDOUT_HINT = " — stdout is for protocol messages only; write logs and prints to stderr"
"""Said with every protocol error: a stray print() on stdout is the usual cause."""

EXIT_CHECK_S = 0.25
"""How often a wait on a worker's pipe also checks whether the worker has exited."""
STDERR_TAIL_BYTES = 4096
"""How much of a worker's stderr is kept (the end of it) for error records."""

_EOF = object()
_TOO_LONG = object()


class AgentProcess:
    """An agent's process, in a process group of its own (a kill reaches its children):
    stdin a pipe (non-blocking: :meth:`write` waits in poll, under a deadline) or
    ``/dev/null``, stdout a pipe, stderr drained by a thread that keeps its tail
    (:class:`StderrTail`). The ``command`` adapter's workers and the ``mcp`` adapter's
    agents."""

    def __init__(
        self, argv: Sequence[str], cwd: str, env: dict[str, str], *, stdin: bool = True
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.stderr_tail = StderrTail(self.proc.stderr)
        self._threads: list[tuple[IO[bytes] | None, threading.Thread]] = [
            (self.proc.stderr, self.stderr_tail.thread)
        ]
        """The threads that must end before the process is gone (and the pipe each reads)."""
        if self.proc.stdin is not None:
            self._in = self.proc.stdin.fileno()
            os.set_blocking(self._in, False)
            self._in_poll = select.poll()
            self._in_poll.register(self._in, select.POLLOUT | select.POLLERR | select.POLLHUP)

    def write(self, data: bytes, timeout: float, exited: Callable[[], bool]) -> int | None:
        """Write ``data`` to stdin within ``timeout`` s: 0 once all is written, the bytes
        still unsent when the time is up, ``None`` when the reader is gone (the pipe
        broke, or ``exited()``, asked every :data:`EXIT_CHECK_S`)."""
        view = memoryview(data)
        end = time.monotonic() + timeout
        while True:
            try:
                view = view[os.write(self._in, view) :]
            except BlockingIOError:
                pass
            except (OSError, ValueError):  # BrokenPipeError: it closed its stdin or exited
                return None
            if not view:
                return 0
            left = end - time.monotonic()
            if left <= 0:
                return len(view)
            self._in_poll.poll(max(1, int(min(left, EXIT_CHECK_S) * 1000 + 0.5)))
            if exited():
                return None

    def close_stdin(self) -> None:
        """End of file on its stdin, without waiting (a worker: exit; a conversation: it
        is over)."""
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()

    def kill(self, deadline: float | None = None) -> None:
        """Kill the process group (always the group: a process that exited may have left
        children); wait for it; give its threads (:attr:`_threads`) until ``deadline``
        (default 1 s; a grandchild that left the group may hold a pipe open), then close
        the pipes — one a thread still reads is left to it (closing a pipe under a
        blocked read would wait for that read)."""
        kill_group(self.proc)
        end = time.monotonic() + 1.0 if deadline is None else deadline
        for _, thread in self._threads:
            thread.join(timeout=max(0.0, end - time.monotonic()))
        busy = [pipe for pipe, thread in self._threads if thread.is_alive()]
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and pipe not in busy:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()


class Worker(AgentProcess):
    """One worker of the pool. Its stdout is read by the runner thread that owns the
    current case (``poll`` + ``os.read`` into a bounded line buffer: no extra thread or
    hand-off per message)."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str,
        env: dict[str, str],
        *,
        silence: str = "the agent did not answer",
    ):
        super().__init__(argv, cwd, env)
        self.silence = silence
        """How a step that got no answer in time is described (``timeout:`` errors)."""
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._buf = bytearray()
        self._eof = False
        self.served: set[tuple[str, int]] = set()
        """The case-samples this worker answered (a late line naming one is dropped)."""
        self.stray = 0
        """Late lines of earlier case-samples dropped while it ran the current one."""
        self._dead = threading.Event()

    def _next_line(self, timeout: float) -> object:
        """The next stdout line, :data:`_EOF`, :data:`_TOO_LONG`, or None on timeout."""
        end = time.monotonic() + timeout
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[: nl + 1])
                del self._buf[: nl + 1]
                return line
            if len(self._buf) > MAX_LINE_BYTES:
                return _TOO_LONG
            if self._eof:
                return _EOF
            left = end - time.monotonic()
            # in slices: a worker that exited while a child of it holds stdout open never
            # sends EOF; its exit is noticed here instead of being called a timeout
            wait_ms = max(1, int(min(left, EXIT_CHECK_S) * 1000 + 0.5))
            if left <= 0 or not self._poll.poll(wait_ms):
                if self.proc.poll() is not None and not self._poll.poll(0):
                    return _EOF
                if time.monotonic() >= end:
                    return None
                continue
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                self._buf += chunk
            else:
                self._eof = True

    def alive(self) -> bool:
        return self.proc.poll() is None and not self._dead.is_set()

    def exited(self) -> bool:
        return self.proc.poll() is not None

    def has_pending_output(self) -> bool:
        """Whether the worker printed something nobody asked for (or closed stdout)."""
        return bool(self._buf) or self._eof or bool(self._poll.poll(0))

    def send(self, message: dict[str, Any], timeout: float) -> None:
        """Write one message within ``timeout`` seconds: a worker that stops reading its
        stdin (a message over the pipe buffer) is a ``timeout``, never a hang."""
        data = jsonio.dumps_line(message)
        left = self.write(data, timeout, self.exited)
        if left is None:
            raise WorkerBroken(ErrorKind.CRASH, self._exit_text("while reading its input"))
        if left:
            raise WorkerBroken(
                ErrorKind.TIMEOUT,
                f"the agent did not read its input within {timeout:.3g}s "
                f"({left} bytes of a message still unsent)",
            )

    def receive(self, timeout: float, step: int) -> dict[str, Any]:
        item = self._next_line(timeout)
        if item is None:
            raise WorkerBroken(
                ErrorKind.TIMEOUT, f"{self.silence} within {timeout:.3g}s (step {step})"
            )
        if item is _EOF:
            raise WorkerBroken(ErrorKind.CRASH, self._exit_text(f"before answering (step {step})"))
        if item is _TOO_LONG:
            raise WorkerBroken(
                ErrorKind.PROTOCOL,
                f"a stdout line longer than {MAX_LINE_BYTES} bytes (step {step})",
            )
        assert isinstance(item, bytes)
        try:
            message = jsonio.loads_strict(item)
        except jsonio.JsonInputError as exc:
            raise WorkerBroken(
                ErrorKind.PROTOCOL,
                f"stdout line is not JSON ({exc}): {item[:200].decode('utf-8', 'replace')!r}"
                f"{STDOUT_HINT}",
            ) from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise WorkerBroken(
                ErrorKind.PROTOCOL,
                f'stdout line is not a message object with a "type": '
                f"{item[:200].decode('utf-8', 'replace')!r}{STDOUT_HINT}",
            )
        return message

    def _exit_text(self, when: str) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return f"the worker closed its stdout {when}"
        return f"the worker exited with code {code} {when}"

    def kill(self, deadline: float | None = None) -> None:
        self._dead.set()
        super().kill(deadline)

    def stop(self, deadline: float) -> None:
        """Ask politely (close stdin), wait until ``deadline`` (``time.monotonic()``),
        then kill."""
        self.close_stdin()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.kill(deadline)


class StderrTail:
    """A process's stderr, drained by a thread of its own; only its last
    :data:`STDERR_TAIL_BYTES` are kept (for error records). The pipe is closed at its end
    (a kill leaves it to this thread while it is blocked reading)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe: IO[bytes]) -> None:
        read = getattr(pipe, "read1", pipe.read)
        try:
            while chunk := read(65536):
                with self._lock:
                    self._tail += chunk
                    if len(self._tail) > 2 * STDERR_TAIL_BYTES:
                        del self._tail[: len(self._tail) - STDERR_TAIL_BYTES]
        except (OSError, ValueError):
            return
        finally:
            with contextlib.suppress(OSError):
                pipe.close()

    def text(self, max_lines: int = 20) -> str:
        """Its last ``max_lines`` lines."""
        with self._lock:
            text = bytes(self._tail[-STDERR_TAIL_BYTES:]).decode("utf-8", "replace")
        return "\n".join(text.rstrip().splitlines()[-max_lines:])


# The gate's own credentials: the agent under test (code from the pull request) never sees
# them — every variable ToolGate reads a GitHub token from (gate.github.context: the
# github-token input, TOOLGATE_GITHUB_TOKEN, GITHUB_TOKEN), GH_TOKEN, and the runner's own.
# Its own keys (e.g. OPENAI_API_KEY) pass through; `agent.env` can add more.
_GATE_CREDENTIALS = frozenset(
    {
        "TOOLGATE_GITHUB_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
    }
)


# The runner's file commands: whoever writes to these files sets the step's outputs, its
# summary, and the environment and PATH of the job's later steps. They are ToolGate's
# alone (SECURITY.md says what an agent in the same container can still reach).
RUNNER_FILES = frozenset(
    {"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"}
)

STOP_GRACE_S = 1.0
"""How long workers get to exit after their stdin closes before they are killed."""


def kill_group(proc: subprocess.Popen[bytes], wait_s: float = 5.0) -> None:
    """SIGKILL the process group ``proc`` leads (started with ``start_new_session``), or
    ``proc`` alone when that is gone; wait at most ``wait_s`` for it (a zombie we
    cannot reap is left)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=wait_s)


def agent_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for agent workers, ``setup`` and ``install``: ours, less the
    gate's GitHub credentials and the runner's file commands (:data:`RUNNER_FILES`)."""
    return {
        k: v
        for k, v in environ.items()
        if k.upper() not in _GATE_CREDENTIALS and k.upper() not in RUNNER_FILES
    }


ID_HINT = (
    ": echo the case_id and sample of the start message in every reply "
    '(or set agent.reply_ids: "optional")'
)
"""Said with every reply that does not name its case-sample."""


def _earlier(message: dict[str, Any], worker: Worker, job: Job) -> bool:
    """Whether ``message`` names a case-sample this worker served before this one: a late
    line of an earlier case, which is never this case's answer nor its failure."""
    cid, sample = message.get("case_id"), message.get("sample")
    if not isinstance(cid, str) or not isinstance(sample, int) or isinstance(sample, bool):
        return False
    return (cid, sample) != (job.case.id, job.sample) and (cid, sample) in worker.served


def _check_addressed(
    message: dict[str, Any], job: Job, step: int, *, required: bool, turn: int = 1
) -> None:
    """A reply names its case-sample (``case_id``, ``sample``, as the start message gave
    them) — required unless ``agent.reply_ids`` is ``optional`` — and it must name this
    one; a reply that names its user turn (``turn``, as the start or user message gave
    it) must name this one: an answer to a turn not yet sent, or a late line of an
    earlier turn, is a protocol error of this case, never this turn's answer."""
    said = message.get("turn")
    if "turn" in message and said != turn:
        when = (
            "an answer to a user turn not yet sent"
            if isinstance(said, int) and not isinstance(said, bool) and said > turn
            else "a late line of an earlier user turn"
        )
        raise WorkerBroken(
            ErrorKind.PROTOCOL,
            f"a {message['type']!r} reply for turn {said!r} while running turn {turn} "
            f"(step {step}): {when}",
        )
    for key, want in (("case_id", job.case.id), ("sample", job.sample)):
        if key not in message:
            if required:
                raise WorkerBroken(
                    ErrorKind.PROTOCOL,
                    f"a {message['type']!r} reply without {key} (step {step}){ID_HINT}",
                )
            continue
        if message[key] != want:
            raise WorkerBroken(
                ErrorKind.PROTOCOL,
                f"a reply for {key} {message[key]!r} while running {key} {want!r} "
                f"(step {step}): a late line of an earlier case",
            )


class WorkerPoolAgent(Agent):
    """A pool of long-lived worker processes speaking the protocol of the module
    docstring: the ``command`` adapter, and the ``python`` adapter's workers
    (:mod:`gate.replay.python_agent`). Subclasses give the program and may check each new
    worker before its first case (:meth:`_check_started`)."""

    kind = "command"
    field = "agent.command"
    """The config field a worker that cannot start is reported at."""
    silence = "the agent did not answer"
    """How a step without an answer is described (``timeout:``)."""
    error_kinds: ClassVar[Mapping[str, ErrorKind]] = {}
    """The ``kind`` of an ``error`` message → the error recorded (none: ``agent_error``)."""
    kept_after: frozenset[ErrorKind] = frozenset({ErrorKind.AGENT_ERROR})
    """Failures after which the worker is between cases and serves the next one (it
    reported them itself); after any other it is replaced."""

    def __init__(
        self,
        *,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        workers: int,
        file: str,
        line: int | None = None,
        require_ids: bool = True,
    ) -> None:
        self._require_ids = require_ids
        self._line = line
        self._argv = argv
        self._cwd = cwd
        self._env = env
        self._file = file
        self._workers = workers
        self.max_parallel: int | None = workers
        self._idle: list[Worker] = []
        self._all: set[Worker] = set()
        self._unchecked: set[Worker] = set()
        """Started by :meth:`prepare`, not yet checked (:meth:`_check_started`)."""
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(workers)
        self.restarts = 0
        self._jobs = 0  # announced by prepare()
        self._started = 0  # run() calls so far

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """What ran, for results (as configured: never the machine's paths)."""

    def _spawn(self) -> Worker:
        """A new worker, not yet checked (:meth:`_check_started`)."""
        try:
            worker = Worker(self._argv, self._cwd, self._env, silence=self.silence)
        except OSError as exc:
            raise AgentFailure(
                ErrorKind.START, f"cannot start the agent {self._argv[0]!r}: {exc}"
            ) from None
        with self._lock:
            self._all.add(worker)
        return worker

    def _check_started(self, worker: Worker) -> None:
        """Check a new worker before its first case; raise a ``start`` :class:`AgentFailure`
        (the worker killed) when it cannot serve. None by default: a command speaks only
        when spoken to."""
        return None

    def _checked(self, worker: Worker) -> Worker:
        """``worker`` once :meth:`_check_started` passed (else discarded, and raised)."""
        try:
            self._check_started(worker)
        except AgentFailure:
            self._discard(worker)
            raise
        return worker

    def prepare(self, jobs: int) -> None:
        """Start the workers up front (in parallel with each other), and turn a worker
        that cannot start at all into a config error rather than N identical failures."""
        with self._lock:
            self._jobs = max(self._jobs, self._started + jobs)  # a repeated call adds none
            missing = min(self._workers, jobs) - len(self._all)
        fresh: list[Worker] = []
        try:
            for _ in range(max(0, missing)):  # idempotent: a second call adds nothing
                fresh.append(self._spawn())
            # All spawned first, so that they start up side by side; the first is checked
            # here (a worker that cannot start at all is a config error before any
            # case-sample runs), the others when they take their first case-sample.
            if fresh:
                self._check_started(fresh[0])
        except AgentFailure as exc:
            for worker in fresh:
                self._discard(worker)
            raise ConfigError(
                Problem(self._file, self._line, self.field, exc.message),
            ) from None
        with self._lock:
            self._unchecked.update(fresh[1:])
            self._idle.extend(reversed(fresh))  # the checked one is taken first

    def _acquire(self) -> Worker:
        self._slots.acquire()
        try:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
                unchecked = worker in self._unchecked
                self._unchecked.difference_update([worker] if worker is not None else [])
            if worker is not None and unchecked:
                self._checked(worker)
            if worker is not None and worker.alive() and not worker.has_pending_output():
                return worker
            if worker is not None:  # died while idle, or printed between cases
                self._discard(worker)
            return self._checked(self._spawn())
        except AgentFailure:
            self._slots.release()
            raise

    def _discard(self, worker: Worker) -> None:
        worker.kill()
        with self._lock:
            self._all.discard(worker)
            self.restarts += 1

    def _release(self, worker: Worker, healthy: bool) -> None:
        if healthy and worker.alive():
            with self._lock:
                self._idle.append(worker)
        else:
            self._discard(worker)
        self._slots.release()

    def run(self, job: Job, session: Session) -> Run | None:
        with self._lock:
            self._started += 1
        worker = self._acquire()
        healthy = False
        try:
            self._exchange(worker, job, session)
            healthy = not worker.stray  # out of step with its cases: replaced
        except WorkerBroken as broken:
            worker.kill()  # before reading the tail: the stderr reader then sees EOF
            tail = worker.stderr_tail.text()
            raise AgentFailure(
                broken.kind,
                # No pid: it differs between identical runs, and the reports must not.
                broken.message,
                detail=f"--- stderr (last lines) ---\n{tail}" if tail else None,
            ) from None
        except AgentFailure as failure:
            healthy = failure.kind in self.kept_after and not worker.stray
            raise
        finally:
            worker.served.add((job.case.id, job.sample))
            self._release(worker, healthy)
        return None

    def _agent_error(self, message: dict[str, Any]) -> AgentFailure:
        """The failure an ``error`` message reports: the agent's own (``agent_error``),
        or one of :attr:`error_kinds` that its ``kind`` names, with its ``detail``."""
        kind = self.error_kinds.get(str(message.get("kind")))
        text = message.get("message")
        detail = message.get("detail") if kind is not None else None
        return AgentFailure(
            kind or ErrorKind.AGENT_ERROR,
            text if isinstance(text, str) else f"(no message) {message!r:.200}",
            detail=detail if isinstance(detail, str) and detail else None,
        )

    def _receive(self, worker: Worker, job: Job, step: int, turn: int) -> dict[str, Any]:
        """The next reply of this case-sample within the step's time: a late line of an
        earlier case-sample of this worker is dropped, never this case's answer or
        failure (the worker is replaced once this case-sample is over)."""
        end = time.monotonic() + job.step_timeout()
        while True:
            message = worker.receive(max(0.0, end - time.monotonic()), step)
            if _earlier(message, worker, job):
                worker.stray += 1
                continue
            _check_addressed(message, job, step, required=self._require_ids, turn=turn)
            return message

    def _exchange(self, worker: Worker, job: Job, session: Session) -> None:
        worker.send(
            {
                "type": "start",
                "case_id": job.case.id,
                "sample": job.sample,
                "turn": 1,
                "seed": job.seed,
                "messages": job.messages,
                "tools": job.tools,
            },
            job.step_timeout(),
        )
        step = 1
        while True:
            turn = session.user_turn + 1
            message = self._receive(worker, job, step, turn)
            kind = message["type"]
            session.add_usage(message.get("usage"))
            if kind == "final":
                content = message.get("content")
                if content is not None and not isinstance(content, str):
                    raise WorkerBroken(
                        ErrorKind.PROTOCOL, '"final" content must be a string or null'
                    )
                nxt = session.next_user(content)
                if nxt is None:
                    return
                if worker.has_pending_output():
                    raise WorkerBroken(
                        ErrorKind.PROTOCOL,
                        f"the agent sent another line after its answer to user turn {turn}, "
                        f"before it was sent user turn {turn + 1}: an answer to a user turn "
                        "not yet sent (each reply answers the turn it was sent)",
                    )
                worker.send(
                    {
                        "type": "user",
                        "case_id": job.case.id,
                        "sample": job.sample,
                        "turn": turn + 1,
                        "content": nxt,
                        "messages": session.messages(),
                    },
                    job.step_timeout(),
                )
                step += 1
                continue
            if kind == "error":
                raise self._agent_error(message)
            if kind != "tool_calls":
                raise WorkerBroken(
                    ErrorKind.PROTOCOL, f"unknown message type {kind!r} (step {step})"
                )
            try:
                calls = calls_from_plain(message.get("calls"), "calls")
            except PayloadError as exc:
                raise WorkerBroken(ErrorKind.PROTOCOL, f"bad tool_calls message: {exc}") from None
            if not calls:
                raise WorkerBroken(ErrorKind.PROTOCOL, '"tool_calls" with no calls (send "final")')
            content = message.get("content")
            results = session.answer(calls, content if isinstance(content, str) else None)
            recorded = session.turns[-1]
            worker.send(
                {
                    "type": "tool_results",
                    "turn": turn,
                    "results": [
                        {"id": r.id, "name": c.name, "content": r.content, "is_error": r.is_error}
                        for c, r in zip(recorded.calls, results, strict=True)
                    ],
                },
                job.step_timeout(),
            )
            step += 1

    def drain(self) -> None:
        """Tell the idle workers no job still needs to exit (close their stdin), without
        waiting: called by each runner thread that finds no more work, so that the
        workers exit while the last case-samples still run and :meth:`close` finds them
        gone (stopping 32 of them only at the end cost 2–3 % of a benchmark run). A job
        already taken but not yet started keeps its worker: one is left idle per
        announced job that has not called :meth:`run` yet."""
        with self._lock:
            keep = max(0, self._jobs - self._started)
            spare = max(0, len(self._idle) - keep)
            retire, self._idle = self._idle[:spare], self._idle[spare:]
        for worker in retire:
            worker.close_stdin()

    def close(self) -> None:
        with self._lock:
            workers = list(self._all)
            self._all.clear()
            self._idle.clear()
            self._unchecked.clear()
        for w in workers:  # every worker starts exiting at once; then each is waited for
            w.close_stdin()
        deadline = time.monotonic() + STOP_GRACE_S  # one grace period for them all
        for w in workers:
            w.stop(deadline)


class CommandPoolAgent(WorkerPoolAgent):
    """The ``command`` adapter (module docstring)."""

    kind = "command"

    def __init__(self, config: Config, cfg: CommandAgent):
        self._cfg = cfg
        file, argv, cwd, env = program(config, cfg)
        super().__init__(
            argv=argv,
            cwd=cwd,
            env=env,
            workers=cfg.workers,
            file=file,
            line=config.agent_lines.get("agent.command"),
            require_ids=cfg.reply_ids is ReplyIds.REQUIRED,
        )

    def describe(self) -> dict[str, Any]:
        # As configured, not as resolved: results must not depend on the machine's paths.
        return {
            "kind": self.kind,
            "command": self._cfg.argv(),
            "workers": self._cfg.workers,
            **self._cfg.declared(),
        }


def program(
    config: Config, cfg: CommandAgent | McpAgent
) -> tuple[str, list[str], str, dict[str, str]]:
    """The config's file name (for messages), and the agent's command line, folder and
    environment (:func:`agent_environ`'s, less the secrets the settings name, with
    ``agent.env`` added). An empty command is a config error."""
    file = str(config.source) if config.source else "toolgate.yml"
    argv = cfg.argv()
    if not argv:
        line = config.agent_lines.get("agent.command")
        raise ConfigError(Problem(file, line, "agent.command", "is empty"))
    interpreter = config.agent_python()
    if argv[0] in BARE_PYTHON and interpreter is not None:
        # A bare `python` means the interpreter running ToolGate (it exists wherever
        # ToolGate does: a fresh machine may have no `python` on PATH), or the one
        # `agent.python` names; `agent.python: path` leaves it to PATH.
        argv[0] = interpreter
    secrets = {name.upper() for name in cfg.secret_env_names()}
    env = {k: v for k, v in agent_environ(os.environ).items() if k.upper() not in secrets}
    cwd = str(config.resolve(cfg.cwd) if cfg.cwd else config.root)
    return file, argv, cwd, {**env, "PYTHONUNBUFFERED": "1", **cfg.env}
