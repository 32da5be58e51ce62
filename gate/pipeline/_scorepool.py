"""The score stage's executors: read the runs of a file and score them, serially or in a
pool of forked worker processes — the same scores either way.

:func:`gate.pipeline.score.score_stage` takes an executor the way an HTTP client takes a
transport: :class:`SerialExecutor` reads the file whole and scores each run in this
process; :class:`ForkExecutor` cuts the file at line boundaries into chunks that forked
workers read (by offset, through the descriptor the runs index opened: the file is opened
once) and score. Scoring is a pure function of (case, scoring view, context), so the
scores are identical whatever the chunking (a test compares the two). Both report every
line to the one :class:`~gate.runsfile.Coverage` check, in file order, and stop at the
first malformed line (a :class:`~gate.errors.RunsFileError` naming it).

Runs identical to an earlier one of the same case — the same scoring view — are scored
once and copied (:class:`Memo`).

``TOOLGATE_SCORE_WORKERS`` sets the number of worker processes of the default executor
(``1`` forces the serial one); by default every available core is used for files of at
least :data:`PARALLEL_MIN_LINES` lines, where ``fork`` is available and the process runs
no other thread (forking beside live threads risks copying a held lock).
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from gate.errors import Problem, RunsFileError
from gate.model import Case, HardFailure, SampleScore, Turn
from gate.policy.table import CaseMeta, RowsBuilder, SampleRows
from gate.results import MemoryRecords, sample_record
from gate.runsfile import Coverage, RunRows, RunsIndex, convert_run, decode_run_line, read_at
from gate.scorers import ScoringContext, score_sample
from gate.scorers.registry import METRICS, VIEW_FIELDS

PARALLEL_MIN_LINES = 4000
"""Below this many lines forking workers costs more than it saves."""
CHUNKS_PER_WORKER = 4
"""Chunks per worker: small enough to balance uneven lines, large enough to amortise."""
_WINDOW = 1 << 16
"""Bytes read at a time around a cut point to find the next line boundary."""


@dataclass(frozen=True, slots=True)
class ScoreJob:
    """What to score: every line of ``index``, checked by ``coverage``; runs of a sample
    number below ``min_sample`` are checked but not scored (the confirmation stage's file
    holds the regular samples it was seeded with). ``metas`` are the cases of the table
    the scores go to (in its order); ``extra`` marks the samples as confirmation ones."""

    index: RunsIndex
    coverage: Coverage
    cases: Sequence[Case]
    ctx: ScoringContext
    metas: Sequence[CaseMeta]
    min_sample: int = 0
    extra: bool = False


@dataclass(slots=True)
class ScoredRuns:
    """What an executor read and scored: the samples as rows for the reduction (one batch
    per chunk), their results.json records, where each scored run's line is, and which of
    them had a call without a frozen response (indices into ``rows``)."""

    metas: Sequence[CaseMeta]
    batches: list[SampleRows] = field(default_factory=list)
    records: MemoryRecords = field(default_factory=MemoryRecords)
    rows: RunRows = field(default_factory=RunRows)
    unrecorded: list[int] = field(default_factory=list)
    workers: int = 1

    def __len__(self) -> int:
        return len(self.rows)


class ScoreExecutor(Protocol):
    """Reads and scores a :class:`ScoreJob` (the seam of the score stage)."""

    @property
    def workers(self) -> int: ...

    def score(self, job: ScoreJob) -> ScoredRuns: ...


# ─── identical runs are scored once ───────────────────────────────────────────


MEMO_SIZE = 20_000


class Memo:
    """Scores of runs already seen, keyed by the run's scoring view: every field of
    :class:`gate.scorers.registry.ScoringView` (:data:`~gate.scorers.registry.VIEW_FIELDS`),
    in canonical JSON. At temperature 0 most samples of a case are the same run; each is
    scored once and the others get a copy with their own sample number, latency and usage
    (scoring reads nothing but the view). Bounded: cleared when it holds
    :data:`MEMO_SIZE` runs."""

    def __init__(self) -> None:
        self._d: dict[Any, tuple[SampleScore, tuple[Turn, ...]]] = {}

    @staticmethod
    def key_of_json(obj: Mapping[str, Any]) -> Any:
        """The key of a decoded line that is not converted yet. Nothing in it is checked
        here: a line whose key equals an earlier, valid line's holds the same view fields,
        and its other fields are still checked when it is converted."""
        try:
            return tuple(orjson.dumps(obj.get(name)) for name in VIEW_FIELDS)
        except TypeError:
            return None

    def get(self, key: Any) -> tuple[SampleScore, tuple[Turn, ...]] | None:
        """(score, converted turns) of the run first seen with ``key``."""
        return self._d.get(key) if key is not None else None

    def put(self, key: Any, score: SampleScore, turns: tuple[Turn, ...]) -> None:
        if key is None:
            return
        if len(self._d) >= MEMO_SIZE:
            self._d.clear()
        self._d[key] = (score, turns)


def derive(score: SampleScore, sample: int, latency: float | None, usage: Any) -> SampleScore:
    """A memoised score for another sample of the same run (built directly: a third of
    the time on memo hits went to ``dataclasses.replace``)."""
    hard = (
        tuple(
            HardFailure(h.kind, h.case_id, sample, h.call, h.message) for h in score.hard_failures
        )
        if score.hard_failures
        else ()
    )
    return SampleScore(
        case_id=score.case_id,
        sample=sample,
        passed=score.passed,
        scores=score.scores,
        failed_checks=score.failed_checks,
        reasons=score.reasons,
        evidence=score.evidence,
        tallies=score.tallies,
        hard_failures=hard,
        error=score.error,
        latency_ms=latency,
        usage=usage,
    )


# ─── reading and scoring lines (both executors) ──────────────────────────────


@dataclass(slots=True)
class _Line:
    lineno: int
    """1-based, relative to the chunk's first line."""
    start: int
    length: int
    case_id: str | None
    sample: int
    score: SampleScore | None


@dataclass(slots=True)
class _ChunkOut:
    lines: list[_Line]
    newlines: int
    error: tuple[int, list[tuple[str, int | None, str | None, str]]] | None = None


def _score_lines(
    data: bytes,
    base: int,
    display: str,
    wanted: Mapping[str, Case],
    ctx: ScoringContext,
    min_sample: int,
    memo: Memo,
) -> _ChunkOut:
    """Read and score every line of ``data`` (which starts at byte ``base`` of the file);
    stops at the first bad line, as a reader reading the whole file would."""
    out: list[_Line] = []
    pos = 0
    lineno = 0
    size = len(data)
    error = None
    while pos < size:
        end = data.find(b"\n", pos)
        end = size if end < 0 else end + 1
        lineno += 1
        raw = data[pos:end]
        start = pos
        pos = end
        if not raw.strip():
            continue
        try:
            obj = decode_run_line(raw, file=display, lineno=lineno)
            raw_id = obj.get("case_id") if isinstance(obj, dict) else None  # unchecked
            key = memo.key_of_json(obj) if isinstance(raw_id, str) and raw_id in wanted else None
            hit = memo.get(key)
            # A line with the view of an earlier one: its other fields are checked, its
            # turns (already converted, so valid) are not converted again.
            run = convert_run(
                obj, file=display, lineno=lineno, turns=hit[1] if hit is not None else None
            )
        except RunsFileError as exc:
            problems = [(p.file, p.line, p.field, p.message) for p in exc.problems]
            error = (lineno, problems)
            break
        score = None
        case = wanted.get(run.case_id)
        if case is not None and run.sample >= min_sample:
            if hit is not None:
                score = derive(hit[0], run.sample, run.latency_ms, run.usage)
            else:
                score = score_sample(case, run, ctx)
                memo.put(key, score, run.turns)
        out.append(_Line(lineno, base + start, end - start, run.case_id, run.sample, score))
    newlines = data.count(b"\n")
    return _ChunkOut(out, newlines, error)


def _collect(chunks: Iterable[_ChunkOut], job: ScoreJob, result: ScoredRuns) -> None:
    """Report the lines of each chunk (in file order) to the coverage check and keep the
    scores of the runs it accepts, as rows and records; raise at the first bad line."""
    cov = job.coverage
    rows = result.rows
    table_index = {m.id: i for i, m in enumerate(job.metas)}
    builder = RowsBuilder(METRICS, job.metas)
    first_line = 0
    for chunk in chunks:
        for ln in chunk.lines:
            if cov.full:
                break
            lineno = first_line + ln.lineno
            assert ln.case_id is not None
            i = cov.add(lineno, ln.case_id, ln.sample)
            score = ln.score
            if i < 0 or score is None:
                continue
            t = table_index[ln.case_id]
            if score.tallies.unrecorded:
                result.unrecorded.append(len(rows))
            rows.line.append(lineno)
            rows.start.append(ln.start)
            rows.length.append(ln.length)
            rows.case.append(i)
            rows.sample.append(ln.sample)
            builder.add(
                t,
                score.sample,
                passed=score.passed,
                scores=score.scores,
                failed_checks=score.failed_checks,
                tallies=score.tallies,
                usage=score.usage,
                latency_ms=score.latency_ms,
                hard=score.hard_failures,
                extra=job.extra,
            )
            result.records.add(
                t, score.sample, job.extra, sample_record(score, names=METRICS, extra=job.extra)
            )
        if chunk.error is not None and not cov.full:
            _, problems = chunk.error
            raise RunsFileError(
                [
                    Problem(f, None if line is None else first_line + line, fld, msg)
                    for f, line, fld, msg in problems
                ]
            )
        if cov.full:
            break
        first_line += chunk.newlines
    cov.finish()
    result.batches.append(builder.build())


# ─── the serial executor ──────────────────────────────────────────────────────


class SerialExecutor:
    """Reads the file whole and scores every run in this process."""

    workers = 1

    def score(self, job: ScoreJob) -> ScoredRuns:
        result = ScoredRuns(job.metas, workers=1)
        wanted = _wanted(job)
        chunk = _score_lines(
            job.index.data(), 0, job.index.display, wanted, job.ctx, job.min_sample, Memo()
        )
        _collect([chunk], job, result)
        return result


def _wanted(job: ScoreJob) -> dict[str, Case]:
    cov = job.coverage
    return {c.id: c for c in job.cases if cov.case_index(c.id) >= 0}


# ─── the fork-pool executor ───────────────────────────────────────────────────

# Set in the parent just before forking; the workers inherit it (nothing is pickled).
_JOB: tuple[int, str, Mapping[str, Case], ScoringContext, int] | None = None
_MEMO = Memo()
"""Each worker's memo (a forked copy per worker, kept across its chunks)."""


class ForkExecutor:
    """Scores the file in ``workers`` forked processes, each reading its chunks by offset
    through the runs index's open descriptor."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def score(self, job: ScoreJob) -> ScoredRuns:
        global _JOB
        result = ScoredRuns(job.metas, workers=self.workers)
        index = job.index
        # Cases are compiled in the workers as their runs come (in parallel), not up front.
        _JOB = (index.fileno, index.display, _wanted(job), job.ctx, job.min_sample)
        chunks = chunk_bounds(index, self.workers * CHUNKS_PER_WORKER)
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(self.workers, initializer=_worker_init) as pool:
                _collect(_unpickled(pool.imap(_work, chunks)), job, result)
        finally:
            _JOB = None
        return result


def _unpickled(blobs: Iterable[bytes]) -> Iterator[_ChunkOut]:
    for blob in blobs:
        chunk: _ChunkOut = pickle.loads(blob)
        yield chunk


def _work(chunk: tuple[int, int]) -> bytes:
    """Read and score one chunk ``(start, end)`` of the file; the pickled :class:`_ChunkOut`."""
    assert _JOB is not None
    fd, display, wanted, ctx, min_sample = _JOB
    gc.disable()  # acyclic records only: collections would rescan them for nothing
    start, end = chunk
    data = read_at(fd, start, end - start, display=display)
    out = _score_lines(data, start, display, wanted, ctx, min_sample, _MEMO)
    return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)


def chunk_bounds(index: RunsIndex, n: int) -> list[tuple[int, int]]:
    """``n`` byte ranges of the file cut at line boundaries (found by reading a little
    around each cut, never the whole file)."""
    size = index.size
    bounds = [0]
    for k in range(1, n):
        cut = _next_line(index, size * k // n)
        if cut > bounds[-1]:
            bounds.append(cut)
    if bounds[-1] != size:
        bounds.append(size)
    return list(itertools.pairwise(bounds))


def _next_line(index: RunsIndex, pos: int) -> int:
    """The offset just after the first newline at or after ``pos`` (the size if none)."""
    size = index.size
    while pos < size:
        window = index.pread(pos, min(_WINDOW, size - pos))
        nl = window.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(window)
    return size


def _worker_init() -> None:
    """Forked workers die on SIGTERM, as ``Pool.terminate`` expects. They inherit the CLI's
    handler, which turns SIGTERM into an exception for a clean unwind of the parent; in a
    worker that exception could leave it alive, or holding the pool's shared queue lock,
    and ``terminate`` then waited for it forever (a hang seen about once in ten runs)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def default_executor(index: RunsIndex) -> ScoreExecutor:
    """The executor for a file of this size on this machine (module docstring)."""
    env = os.environ.get("TOOLGATE_SCORE_WORKERS")
    if env:
        try:
            workers = max(1, int(env))
        except ValueError:
            workers = 1
        return SerialExecutor() if workers == 1 else ForkExecutor(workers)
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        # Forking a process with other threads alive can copy a lock they hold (a
        # deadlock in the child): stay serial (e.g. after a runner left threads behind).
        return SerialExecutor()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    if cores < 2 or _lines_at_least(index, PARALLEL_MIN_LINES) is False:
        return SerialExecutor()
    return ForkExecutor(min(cores, 8))


def _lines_at_least(index: RunsIndex, n: int) -> bool:
    """Whether the file has at least ``n`` lines, judged from its first megabyte (a file
    smaller than that is read whole by the serial executor anyway)."""
    head = index.pread(0, min(index.size, 1 << 20))
    lines = head.count(b"\n")
    if len(head) == index.size:
        return lines >= n
    return lines * index.size / max(len(head), 1) >= n
