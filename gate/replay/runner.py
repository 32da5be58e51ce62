"""Run the agent on every case × sample and write ``runs.jsonl`` (docs/agent-protocol.md).

:func:`run_all` runs the planned case-samples through the configured agent adapter and
appends each one's line to ``out/runs.jsonl`` as it finishes. Concurrency, the global
deadline, shards, ``--resume`` and its run header, and the progress line are the user's
contract, written once in docs/agent-protocol.md (section "Runs at scale"). Here:

* **Plan.** Cases in dataset order, filtered by ``case_ids`` and by the shard; samples
  ``0..samples-1`` of each (the replay adapter adds samples its file holds). The plan is
  run sample-major (every case's sample 0 first), so a global deadline leaves whole
  samples rather than whole cases undone.
* **Threads, not asyncio**: the adapters block on pipes, sockets and user code (a sync
  Python agent cannot be awaited), and threads cost little here —
  ``bench/runner_bench.py`` measures ``run_all`` within 1 % of bare ``http.client``
  threads and 4 % of bare pipe exchanges doing the same work.
* **Seeds.** Each case-sample gets ``job_seed(config.seed, case_id, sample)``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from gate import jsonio
from gate.config import Config
from gate.errors import UsageError
from gate.model import Case, DatasetLike, Run, Shard
from gate.replay.frozen import ReplayBackend
from gate.replay.interface import Agent, build_agent
from gate.replay.session import AgentFailure, ErrorKind, Job, Session, job_seed
from gate.report.redact import redactor_for
from gate.runsfile import RunsWriter, iter_runs
from gate.scorers.context import NormalizerTable

RUNS_FILE = "runs.jsonl"


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What one :func:`run_all` did. Every planned case-sample is either ``skipped``
    (already recorded, resume) or ``written``; ``errors`` counts written records with an
    error, by kind in ``error_kinds`` (``deadline`` ones are also ``not_started``)."""

    runs_path: Path
    planned: int
    skipped: int
    written: int
    errors: int
    not_started: int
    unrecorded_calls: int
    wall_s: float
    error_kinds: dict[str, int] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)
    misses: tuple[str, ...] = ()
    """The first unrecorded calls (case, tool, canonical arguments, nearest recorded)."""


# ─── plan ─────────────────────────────────────────────────────────────────────


def select_cases(
    cases: Sequence[Case],
    *,
    shard: Shard | None = None,
    case_ids: Collection[str] | None = None,
) -> list[Case]:
    """The cases to run, in dataset order. Unknown ``case_ids`` are a UsageError."""
    if case_ids is not None:
        known = {c.id for c in cases}
        missing = sorted(set(case_ids) - known)
        if missing:
            raise UsageError(f"unknown case id(s): {', '.join(missing[:10])}")
        wanted = set(case_ids)
        cases = [c for c in cases if c.id in wanted]
    if shard is not None:
        cases = [c for c in cases if shard.holds(c.id)]
    return list(cases)


def _recorded(path: Path) -> set[tuple[str, int]]:
    """Case-samples already in ``path``; a last line cut short by a kill is removed."""
    if not path.exists():
        return set()
    with path.open("rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
    return {(run.case_id, run.sample) for _, run in iter_runs(path)}


# ─── progress ─────────────────────────────────────────────────────────────────


class Progress:
    """The progress line on stderr: on a terminal one line redrawn in place (done/total,
    failures, rate, ETA); otherwise one line every ``interval_s`` and at the end."""

    def __init__(
        self,
        total: int,
        stream: IO[str] | None,
        *,
        interval_s: float = 30.0,
        tty: bool | None = None,
        label: str = "case-samples",
    ) -> None:
        self.total = total
        self.stream = stream
        self.label = label
        self.tty = bool(tty if tty is not None else stream is not None and stream.isatty())
        self.interval_s = 0.2 if self.tty else interval_s
        self.t0 = time.monotonic()
        # On a terminal the first update shows at once; elsewhere only after an interval.
        self._last = self.t0 - self.interval_s if self.tty else self.t0
        self._lock = threading.Lock()

    def line(self, done: int, failed: int) -> str:
        elapsed = time.monotonic() - self.t0
        rate = done / elapsed if elapsed > 0 else 0.0
        left = self.total - done
        eta = (
            f"ETA {_clock(left / rate)}" if rate > 0 and left else ("done" if not left else "ETA ?")
        )
        return (
            f"toolgate run: {done}/{self.total} {self.label} · {failed} failed · "
            f"{rate:.1f}/s · {_clock(elapsed)} elapsed · {eta}"
        )

    def update(self, done: int, failed: int, *, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        with self._lock:
            if not final and now - self._last < self.interval_s:
                return
            self._last = now
            text = self.line(done, failed)
            if self.tty:
                self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


# ─── the run header ───────────────────────────────────────────────────────────

HEADER_FILE = "run-header.json"


def run_identity(config: Config, dataset: DatasetLike, agent: Agent) -> dict[str, Any]:
    """What a resumed run must share with the one that started the folder."""
    return {
        "gate_name": config.name,
        "dataset_sha256": dataset.sha256,
        "agent": agent.describe(),
        "seed": config.seed,
        "scoring_sha256": config.scoring_sha256(),
    }


def write_header(out: Path, header: dict[str, Any]) -> None:
    from gate.outdir import write_atomic

    write_atomic(out / HEADER_FILE, [jsonio.dumps(header, indent=True)])


def check_header(out: Path, header: dict[str, Any], runs_path: Path) -> None:
    """Refuse to resume a folder another agent or config wrote: one whose header differs,
    or that has runs but no header."""
    path = out / HEADER_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if runs_path.exists() and runs_path.stat().st_size > 0:
            raise UsageError(
                f"cannot resume {out}: its runs were written without a run header "
                f"({HEADER_FILE}), so nothing says they are of this agent and config",
                hint="Run without --resume to start the folder afresh.",
            ) from None
        write_header(out, header)
        return
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        recorded = jsonio.loads_strict(raw)
    except jsonio.JsonInputError:
        recorded = None
    if not isinstance(recorded, dict):
        raise UsageError(f"cannot resume {out}: {path} is not a run header")
    shown = jsonio.canonical
    differ = [k for k in sorted(header) if shown(recorded.get(k)) != shown(header[k])]
    if differ:
        was = ", ".join(f"{k}: {shown(recorded.get(k))[:80]}" for k in differ)
        raise UsageError(
            f"cannot resume {out}: it was written by another {' and '.join(differ)} ({was})",
            hint="Run without --resume, or give this run its own --out.",
        )


# ─── run ──────────────────────────────────────────────────────────────────────


def run_all(
    config: Config,
    dataset: DatasetLike,
    out: Path,
    *,
    samples: int,
    shard: Shard | None,
    resume: bool,
    case_ids: Collection[str] | None = None,
    progress: bool = True,
    agent: Agent | None = None,
    stderr: IO[str] | None = None,
    progress_interval_s: float = 30.0,
    progress_label: str = "case-samples",
    recorded: Collection[tuple[str, int]] | None = None,
    norms: NormalizerTable | None = None,
) -> RunSummary:
    """Run every planned case-sample and write ``out/runs.jsonl`` (module docstring).

    ``agent`` replaces the adapter the config describes (tests); it is closed at the end
    either way. ``recorded``, with ``resume``, is what the runs file already holds, as
    (case id, sample) — given by a caller that wrote it (the confirmation stage), so the
    file is not read to find out. ``norms`` is the run's normaliser cache (the scorers
    use the same one afterwards).
    """
    t0 = time.monotonic()
    deadline = t0 + config.deadline_s if config.deadline_s is not None else None
    cases = select_cases(dataset.cases, shard=shard, case_ids=case_ids)
    agent = agent if agent is not None else build_agent(config)
    try:
        check = getattr(agent, "check_cases", None)
        if callable(check):
            check({c.id for c in dataset.cases})
        scope = getattr(agent, "check_scope", None)  # a runs file must cover the cases run
        if callable(scope):
            scope(cases, samples)
        runs_path = out / RUNS_FILE
        header = run_identity(config, dataset, agent)
        done_before: Collection[tuple[str, int]] = set()
        if not resume:
            write_header(out, header)
        else:
            check_header(out, header, runs_path)
            done_before = set(recorded) if recorded is not None else _recorded(runs_path)
        plan: list[tuple[Case, int]] = []
        per_case = [(c, agent.samples_for(c.id, samples)) for c in cases]
        depth = max((max(s, default=-1) + 1 for _, s in per_case), default=0)
        for s in range(depth):  # sample-major: every case's sample 0 first
            plan.extend((c, s) for c, ss in per_case if s in ss)
        todo = [(c, s) for c, s in plan if (c.id, s) not in done_before]
        skipped = len(plan) - len(todo)
        if norms is None:
            norms = NormalizerTable.from_config(config)
        # runs.jsonl is uploaded as an artifact: the secrets the config names (and the
        # usual token variables, and token shapes) never reach it.
        writer = RunsWriter(
            runs_path, append=resume, redact=redactor_for(config, os.environ).redact
        )
        work = _Worker(
            config,
            agent,
            todo,
            writer,
            Progress(
                len(todo),
                (stderr or sys.stderr) if progress else None,
                interval_s=progress_interval_s,
                label=progress_label,
            ),
            norms,
            deadline,
        )
        try:
            if todo:
                agent.prepare(len(todo))
            threads = min(config.concurrency, agent.max_parallel or len(todo), len(todo))
            pool = [
                threading.Thread(target=work.loop, name=f"toolgate-run-{i}", daemon=True)
                for i in range(threads)
            ]
            for t in pool:
                t.start()
            for t in pool:
                while t.is_alive():
                    t.join(timeout=0.5)
            if work.fatal is not None:
                raise work.fatal
        except BaseException:
            work.stop.set()
            raise
        finally:
            work.close()
        work.progress.update(work.done, work.failed, final=True)
    finally:
        agent.close()
    return RunSummary(
        runs_path=runs_path,
        planned=len(plan),
        skipped=skipped,
        written=work.done,
        errors=work.failed,
        not_started=work.kinds.get(ErrorKind.DEADLINE.value + ":not_started", 0),
        unrecorded_calls=work.unrecorded,
        wall_s=time.monotonic() - t0,
        error_kinds={k: v for k, v in sorted(work.kinds.items()) if ":" not in k},
        agent=agent.describe(),
        misses=tuple(work.misses),
    )


_WRITE_GRACE_S = 10.0
"""How long closing an interrupted run waits for lines being written (a local file: ms)."""


@dataclass
class _Worker:
    """The loop every runner thread runs (take the next case-sample, run it, write it),
    and what the threads share: the counts, the first fatal error, the runs file's state."""

    MAX_MISSES: ClassVar[int] = 20

    config: Config
    agent: Agent
    todo: list[tuple[Case, int]]
    writer: RunsWriter
    progress: Progress
    norms: NormalizerTable
    deadline: float | None
    next: int = 0
    done: int = 0
    failed: int = 0
    unrecorded: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    fatal: BaseException | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    closed: bool = False
    writing: int = 0
    """Runs lines being written now (outside the lock: see :meth:`_write`)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards the counts and the runs file's state (not the plan: :attr:`taking`)."""
    idle: threading.Condition = field(init=False)
    """On ``lock``: notified when the last line being written is done."""
    taking: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.idle = threading.Condition(self.lock)

    def close(self) -> None:
        """Close the runs file: no new line starts, and one being written (by a runner
        thread still going when the run was interrupted) is finished first, so none is
        cut."""
        with self.idle:
            self.closed = True
            self.idle.wait_for(lambda: not self.writing, timeout=_WRITE_GRACE_S)
            self.writer.close()

    def _take(self) -> tuple[Case, int] | None:
        with self.taking:
            if self.next >= len(self.todo) or self.stop.is_set():
                return None
            item = self.todo[self.next]
            self.next += 1
            return item

    def loop(self) -> None:
        try:
            while (item := self._take()) is not None:
                self._write(*self._one(*item))
            drain = getattr(self.agent, "drain", None)
            if callable(drain):  # nothing left to run: the adapter may let go of its workers
                drain()
        except BaseException as exc:  # a bug or an I/O failure stops the whole run
            with self.lock:
                self.fatal = self.fatal or exc
            self.stop.set()

    def _one(self, case: Case, sample: int) -> tuple[Run, int, list[str], bool]:
        cfg = self.config.agent
        if self.deadline is not None and time.monotonic() >= self.deadline:
            run = Run(
                case_id=case.id,
                sample=sample,
                error=f"{ErrorKind.DEADLINE.value}: not started: the global deadline "
                f"(deadline_s: {self.config.deadline_s:g}) passed first",
            )
            return run, 0, [], True
        job = Job(
            case=case,
            sample=sample,
            seed=job_seed(self.config.seed, case.id, sample),
            step_budget=case.step_budget or cfg.step_budget,
            timeout_s=cfg.timeout_s,
            deadline=self.deadline,
        )
        backend = ReplayBackend(case, self.norms)
        session = Session(job, backend)
        session.meta["seed"] = job.seed
        error: str | None = None
        t0 = time.perf_counter()
        stored: Run | None = None
        try:
            stored = self.agent.run(job, session)
        except AgentFailure as failure:
            error = str(failure)
            if (
                failure.kind is ErrorKind.TIMEOUT
                and self.deadline is not None
                and time.monotonic() >= self.deadline - 0.01
            ):  # the step's time was cut short by the global deadline, not the agent's fault
                error = (
                    f"{ErrorKind.DEADLINE.value}: the global deadline passed during the case "
                    f"({error})"
                )
        except Exception as exc:  # an adapter or agent bug costs this case-sample only
            tb = "".join(traceback.format_exception(exc)).rstrip().splitlines()[-8:]
            error = f"{ErrorKind.EXCEPTION.value}: {type(exc).__name__}: {exc}\n" + "\n".join(tb)
        latency_ms = round((time.perf_counter() - t0) * 1000, 3)
        run = stored if stored is not None else session.to_run(error=error, latency_ms=latency_ms)
        return run, session.unrecorded, backend.misses, False

    def _write(self, run: Run, unrecorded: int, misses: list[str], not_started: bool) -> None:
        line = self.writer.encode(run)  # outside the lock: 32 threads share it
        with self.lock:
            if self.closed:
                return  # interrupted: this case-sample is run again by --resume
            self.writing += 1
        # The write (a system call) is made outside the lock: at concurrency 32 the threads
        # finish their case-samples nearly together, and a lock held across the call
        # queued them behind each other (a median wait of 1.2 ms per case-sample). Each
        # line stays whole: the file object writes a line in one buffered call.
        written = False
        try:
            self.writer.write_line(line)
            written = True
        finally:
            with self.lock:
                self.writing -= 1
                if not self.writing:
                    self.idle.notify_all()
                if written:
                    self._count(run, unrecorded, misses, not_started)
                done, failed = self.done, self.failed
        self.progress.update(done, failed)

    def _count(self, run: Run, unrecorded: int, misses: list[str], not_started: bool) -> None:
        """Count a written case-sample (under :attr:`lock`)."""
        self.done += 1
        self.unrecorded += unrecorded
        for miss in misses:  # distinct misses only: samples repeat the same call
            if len(self.misses) < self.MAX_MISSES and miss not in self.misses:
                self.misses.append(miss)
        if run.error is not None:
            self.failed += 1
            self.kinds[run.error.split(":", 1)[0]] += 1
            if not_started:
                self.kinds[ErrorKind.DEADLINE.value + ":not_started"] += 1
