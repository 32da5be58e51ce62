"""The score stage's executors: read the runs of a file and score them, serially or in a
pool of forked worker processes — the same scores either way.

:func:`gate.pipeline.score.score_stage` takes an executor the way an HTTP client takes a
transport: :class:`SerialExecutor` reads the file whole and scores each run in this
process; :class:`ForkExecutor` cuts the file at line boundaries into chunks that this
process and the forked workers of a :class:`~concurrent.futures.ProcessPoolExecutor`
read (by offset, through the descriptor the runs index opened: the file is opened once)
and score.
Scoring is a pure function of (case, scoring view, context), so the scores are identical
whatever the chunking (a test compares the two).

A chunk comes back as columns, never as per-sample objects: the coverage entry of every
line (its line, its case's dataset index, its sample), the scored samples as a
:class:`~gate.policy.table.SampleRows` batch (numpy), and each sample's results.json
record — rendered by the worker (:func:`gate.pipeline.records.sample_record`) and written to the
worker's spool file, of which the parent keeps only offsets. The parent checks coverage
(the one :class:`~gate.runsfile.Coverage` check, in file order), assembles the batches for
the reduction and copies the records into results.json without building a sample object.
A malformed line stops the read at that line (a :class:`~gate.errors.RunsFileError`
naming it).

Runs identical to an earlier one of the same case — the same scoring view — are scored
once and copied (:class:`Memo`).

``TOOLGATE_SCORE_WORKERS`` sets the number of scoring processes of the default executor
(``1`` forces the serial one); by default every available core is used for files of at
least :data:`PARALLEL_MIN_LINES` lines, where ``fork`` is available and the process runs
no other thread (forking beside live threads risks copying a held lock).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from gate.errors import Problem, RunAborted, RunsFileError, UsageError
from gate.jsonio import key_text
from gate.model import Case, HardFailure, Run, Turn, value
from gate.pipeline.records import record_template
from gate.policy.table import CaseMeta, RowProto, RowsBuilder, SampleRows, SampleTable
from gate.policy.validity import is_missing
from gate.results import RecordTemplate
from gate.runsfile import (
    SHORT_LINE,
    Coverage,
    RunRows,
    RunsIndex,
    convert_run,
    decode_run_line,
    read_at,
)
from gate.scorers import ScoringContext, score_sample
from gate.scorers.facts import VIEW_FIELDS
from gate.scorers.registry import METRICS
from gate.scorers.sample import earns_nothing
from gate.scorers.usage import usage_values

PARALLEL_MIN_LINES = 4000
"""Below this many lines forking workers costs more than it saves."""
CHUNKS_PER_WORKER = 4
"""Chunks per worker at least: small enough to balance uneven lines, large enough to
amortise."""
CHUNK_BYTES = 4 << 20
"""Largest chunk of the runs file: a worker holds one chunk's bytes, lines and rows at a
time, so its memory stays the same whatever the file's size."""
TAPER = 16
"""How much smaller than the first the last chunks may be (:func:`chunk_bounds`)."""
_WINDOW = 1 << 16
"""Bytes read at a time around a cut point to find the next line boundary."""
STALL_S = 600.0
"""Longest wait for the next chunk's answer (a chunk scores in seconds): past it its
worker is stopped or stuck, and the run is aborted (exit code 4)."""
REAP_S = 10.0
"""Longest the exit of a worker is waited for."""
_NAN = float("nan")
_BLANK_START = (b"", b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c")
"""First bytes of a line that may be blank (``bytes.strip`` removes these)."""


@value
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
    keep_runs: bool = False
    """Whether the converted runs come back too (:attr:`ScoredRuns.kept`: the judge reads
    them, so no line is parsed twice)."""


class RowRecords:
    """The results.json records of scored samples, kept in the order of the rows they came
    with (batches concatenated: in memory, or as offsets into the workers' spool files);
    :meth:`bind` reads them in a table's order (:class:`gate.results.SampleRecords`)."""

    BLOCK = 256
    """Cases whose records :meth:`of_case` reads together."""

    def __init__(self) -> None:
        self._sources: list[_Source] = []
        self._spools: list[_Spool] = []
        self._starts: list[int] = []
        self._order: np.ndarray | None = None
        self._case_starts: np.ndarray | None = None
        self._sizes: np.ndarray | None = None
        self._remap: np.ndarray | None = None
        """Row → row of the sources, for the first ``len(_remap)`` rows (set by
        :meth:`joined` on bound records: their rows come on in their table's order)."""
        self._block: tuple[int, list[int], list[bytes]] | None = None
        """The records of the cases read last (:meth:`of_case`): the first case, each
        case's start in the list, and the records."""

    def add_memory(self, records: list[bytes]) -> None:
        self._starts.append(self._total())
        self._sources.append(_Memory(records))

    def add_spooled(
        self, spool: _Spool, fd_key: int, offsets: array[int], lengths: array[int]
    ) -> None:
        if spool not in self._spools:
            self._spools.append(spool)
        self._starts.append(self._total())
        self._sources.append(_Spooled(spool, fd_key, offsets, lengths))

    def _total(self) -> int:
        return sum(len(s) for s in self._sources)

    def joined(self, other: RowRecords) -> RowRecords:
        """These rows' records, then ``other``'s (for a table assembled from both). When
        these records are bound, their rows are taken in their table's order (the score
        stage hands its table's sorted rows on as its one batch)."""
        assert other._order is None or other._remap is None
        out = RowRecords()
        if self._order is not None:
            out._remap = self._source_rows(self._order)
        out._spools = [*self._spools, *(s for s in other._spools if s not in self._spools)]
        for src in (*self._sources, *other._sources):
            out._starts.append(out._total())
            out._sources.append(src)
        return out

    def _source_rows(self, rows: np.ndarray) -> np.ndarray:
        if self._remap is None:
            return rows
        n = len(self._remap)
        return np.where(rows < n, self._remap[np.minimum(rows, n - 1)], rows)

    def bind(self, table: SampleTable) -> RowRecords:
        """Read in ``table``'s order from now on (its rows are these rows, sorted)."""
        self._order = table.order
        self._case_starts = table.starts
        self._sizes = table.sizes
        self._block = None
        return self

    def of_case(self, case: int) -> list[bytes]:
        block = self._block
        if block is None or not 0 <= case - block[0] < len(block[1]) - 1:
            block = self._block = self._read_block(case)
        first, bounds, records = block
        return records[bounds[case - first] : bounds[case - first + 1]]

    def _read_block(self, first: int) -> tuple[int, list[int], list[bytes]]:
        """The records of :attr:`BLOCK` cases from ``first`` on: the cases are
        read in order (results.json is written a case at a time), and the rows of
        neighbouring cases usually follow each other in one source, so a block is a few
        reads, not one or more per case."""
        assert self._order is not None and self._case_starts is not None
        assert self._sizes is not None
        last = min(first + self.BLOCK, len(self._sizes))
        a = int(self._case_starts[first])
        b = int(self._case_starts[last - 1]) + int(self._sizes[last - 1])
        rows = self._source_rows(self._order[a:b]).tolist()
        records: list[bytes] = []
        k = 0
        while k < len(rows):
            src = _bisect(self._starts, rows[k])
            base = self._starts[src]
            # Rows that follow each other in one source are read together.
            end = k + 1
            limit = base + len(self._sources[src])
            while end < len(rows) and rows[end] == rows[end - 1] + 1 and rows[end] < limit:
                end += 1
            records.extend(self._sources[src].many(rows[k] - base, end - k))
            k = end
        bounds = [*(self._case_starts[first:last] - a).tolist(), b - a]
        return first, bounds, records

    def close(self) -> None:
        """Drop the spool files (after results.json is written)."""
        self._block = None
        for spool in self._spools:
            spool.close()


def _bisect(starts: list[int], row: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= row:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Source(Protocol):
    def __len__(self) -> int: ...
    def many(self, i: int, n: int) -> list[bytes]: ...


@dataclass(slots=True)
class _Memory:
    records: list[bytes]

    def __len__(self) -> int:
        return len(self.records)

    def many(self, i: int, n: int) -> list[bytes]:
        return self.records[i : i + n]


@dataclass(slots=True)
class _Spooled:
    spool: _Spool
    key: int
    offsets: array[int]
    lengths: array[int]

    STRETCH = 4 << 20
    """Bytes of records read at once at most (a read is cut into its records, then let go)."""

    def __len__(self) -> int:
        return len(self.offsets)

    def many(self, i: int, n: int) -> list[bytes]:
        offsets, lengths = self.offsets, self.lengths
        out = []
        k, stop = i, i + n
        while k < stop:
            # A stretch of records that follow each other in the file (up to a bound):
            # one read, cut into its records.
            start = offsets[k]
            size = lengths[k]
            end = k + 1
            while end < stop and offsets[end] == start + size and size < self.STRETCH:
                size += lengths[end]
                end += 1
            blob = self.spool.read(self.key, start, size)
            at = 0
            for j in range(k, end):
                out.append(blob[at : at + lengths[j]])
                at += lengths[j]
            k = end
        return out


class Parked(NamedTuple):
    """Where a worker left a chunk's output (:func:`_park`): the pool's pipe carries
    only this, so a worker never waits for this process to read a large answer."""

    path: str
    length: int


class _Spool:
    """The workers' record files (one per worker process, under a private temporary
    folder) and their parked answers, read back by offset; removed on :meth:`close`."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="toolgate-records-")
        self._fds: dict[int, int] = {}
        self._writers: dict[int, int] = {}

    def path(self, key: int) -> str:
        return os.path.join(self.root, f"{key}.records")

    def writer(self, key: int) -> int:
        """A descriptor appending to ``key``'s record file (this process's own: the
        workers open theirs with :func:`_spool_writer`), closed on :meth:`close`."""
        fd = self._writers[key] = _spool_writer(self.root, key)
        return fd

    def read(self, key: int, offset: int, length: int) -> bytes:
        fd = self._fds.get(key)
        if fd is None:
            path = os.path.join(self.root, f"{key}.records")
            fd = self._fds[key] = os.open(path, os.O_RDONLY)
        return os.pread(fd, length, offset)

    def unpark(self, parked: Parked) -> _ChunkOut:
        """The chunk output a worker parked (:func:`_park`), its file removed once read
        (the disk holds only the answers not taken yet)."""
        try:
            with open(parked.path, "rb") as fh:
                blob = fh.read()
            os.unlink(parked.path)
            short = len(blob) != parked.length
            problem = f"{len(blob)} of {parked.length} bytes" if short else None
        except OSError as exc:  # removed from outside, or a failing disk
            problem = exc.strerror or str(exc)
        if problem is not None:
            raise RunAborted(
                f"a scoring worker's answer could not be read back: {problem}",
                hint="run again; TOOLGATE_SCORE_WORKERS=1 scores in this process alone",
            )
        out: _ChunkOut = pickle.loads(blob)
        return out

    def close(self) -> None:
        for fd in (*self._fds.values(), *self._writers.values()):
            os.close(fd)
        self._fds.clear()
        self._writers.clear()
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass(slots=True)
class ScoredRuns:
    """What an executor read and scored: the samples as rows for the reduction (one batch
    per chunk), their results.json records, where each scored run's line is, and which of
    them had a call without a frozen response: (index into ``rows``, case id, each such
    call as shown), read as the line was scored."""

    metas: Sequence[CaseMeta]
    batches: list[SampleRows] = field(default_factory=list)
    records: RowRecords = field(default_factory=RowRecords)
    rows: RunRows = field(default_factory=RunRows)
    unrecorded: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)
    kept: list[Run] = field(default_factory=list)
    """The converted runs in ``rows``' order, when the job asked for them
    (:attr:`ScoreJob.keep_runs`)."""
    workers: int = 1

    def __len__(self) -> int:
        return len(self.rows)


class ScoreExecutor(Protocol):
    """Reads and scores a :class:`ScoreJob` (the seam of the score stage)."""

    @property
    def workers(self) -> int: ...

    def score(self, job: ScoreJob) -> ScoredRuns: ...


# ─── identical runs are scored once ───────────────────────────────────────────


MEMO_SIZE = 2_000
"""Runs a memo holds before it starts afresh. The samples of a case come close together in
a runs file (the runner starts them together), so a small memo gets nearly every hit: on
``bench/score_bench.py``'s 100,000 case-samples, 36,605 of 36,612 with 2,000 entries (the
same as with 20,000), while a worker's peak memory fell from 598 to 187 MiB."""


@value
class Scoring:
    """What one scoring view scored to, for every sample that has it: the sample's row
    (:class:`~gate.policy.table.RowProto`), its results.json record but its sample
    number and usage (:class:`~gate.results.RecordTemplate`), the converted turns, and
    the hard failures as the first sample found them. Scoring reads nothing but the view:
    a sample's own number, latency and usage are all that differ (hard failures carry
    the sample number). The memo outlives a chunk, so a prototype made by one chunk's
    builder is added by the next one's: they share the metric columns (METRICS) and the
    first check bits (every pass check), the only ones a sample score fails."""

    proto: RowProto
    template: RecordTemplate
    turns: tuple[Turn, ...]
    hard: tuple[HardFailure, ...]
    unrecorded: tuple[str, ...]
    """The calls the frozen responses could not answer, as shown (:func:`_unanswered`)."""
    costed: bool = True
    """Whether its samples have usage metrics (not when the run earns nothing,
    :func:`gate.scorers.sample.earns_nothing`)."""


class Memo:
    """Scorings of runs already seen, keyed by the run's scoring view: every field of
    :class:`gate.scorers.facts.ScoringView` (:data:`~gate.scorers.facts.VIEW_FIELDS`)
    (:meth:`key_of_json`). At temperature 0 most samples of a case are the same run; each is
    scored once and the others take its :class:`Scoring`. Bounded: cleared when it
    holds :data:`MEMO_SIZE` runs."""

    def __init__(self) -> None:
        self._d: dict[Any, Scoring] = {}

    @staticmethod
    def key_of_json(obj: Mapping[str, Any]) -> Any:
        """The key of a decoded line that is not converted yet: each view field as it is
        when a string or null, else its JSON text. Nothing in it is checked here: a line
        whose key equals an earlier, valid line's holds the same view fields — a text that
        reads like another field's JSON is still refused, as every field but the turns is
        checked when the line is converted, and turns that are not an array first."""
        parts = []
        try:
            for name in VIEW_FIELDS:
                v = obj.get(name)
                parts.append(v if v is None or type(v) is str else key_text(v))
        except TypeError:
            return None
        return tuple(parts)

    def get(self, key: Any) -> Scoring | None:
        """The scoring of the run first seen with ``key``."""
        return self._d.get(key) if key is not None else None

    def put(self, key: Any, scoring: Scoring) -> None:
        if key is None:
            return
        if len(self._d) >= MEMO_SIZE:
            self._d.clear()
        self._d[key] = scoring


def _unanswered(case: Case, run: Run) -> tuple[str, ...]:
    """The calls of ``run`` the frozen responses could not answer, as the notice shows
    them; a call of a tool the case must never call is left out (a hard failure: no
    response should be recorded for it)."""
    from gate.report.escape import call_repr

    never = set(case.must_not_call)
    shown = []
    for turn in run.turns:
        calls = {c.id: c for c in turn.calls}
        for result in turn.tool_results:
            if result.unrecorded:
                call = calls.get(result.id)
                if call is not None and call.name in never:
                    continue
                shown.append(
                    call_repr({"name": call.name, "arguments": call.arguments})
                    if call is not None
                    else "a call"
                )
    return tuple(shown)


def _of_sample(hard: tuple[HardFailure, ...], sample: int) -> tuple[HardFailure, ...]:
    """``hard`` as another sample of the same run found them."""
    return tuple(HardFailure(h.kind, h.case_id, sample, h.call, h.message) for h in hard)


# ─── reading and scoring a chunk (both executors) ─────────────────────────────


@dataclass(slots=True)
class _ChunkOut:
    """A chunk's lines and scores, as columns (module docstring). Line numbers are
    relative to the chunk's first line (the parent adds where the chunk starts)."""

    newlines: int
    entry_line: array[int]
    entry_case: array[int]
    """The line's case: its dataset index, or -1 when unknown (then in ``unknown``)."""
    entry_sample: array[int]
    unknown: dict[int, str]
    """Entry index → the case id of a line whose case the dataset does not have."""
    scored: array[int]
    """Entry index of each scored row, in row order."""
    run_start: array[int]
    run_length: array[int]
    rows: SampleRows
    unrecorded: list[tuple[int, str, tuple[str, ...]]]
    kept: list[Run]
    records: list[bytes] | None
    """The rows' records, in memory (serial executor) — or, from a worker, in its spool:"""
    spool_key: int = 0
    record_offset: array[int] = field(default_factory=lambda: array("q"))
    record_length: array[int] = field(default_factory=lambda: array("q"))
    error: tuple[int, list[tuple[str, int | None, str | None, str]]] | None = None


@dataclass(slots=True)
class _Work:
    """What every chunk of one job needs (given to the workers by inheritance)."""

    display: str
    index: Mapping[str, int]
    wanted: Mapping[str, Case]
    table: Mapping[str, int]
    metas: Sequence[CaseMeta]
    ctx: ScoringContext
    min_sample: int
    extra: bool
    keep_runs: bool


def _work_of(job: ScoreJob) -> _Work:
    cov = job.coverage
    return _Work(
        display=job.index.display,
        index=cov.index,
        wanted={c.id: c for c in job.cases if cov.case_index(c.id) >= 0},
        table={m.id: i for i, m in enumerate(job.metas)},
        metas=job.metas,
        ctx=job.ctx,
        min_sample=job.min_sample,
        extra=job.extra,
        keep_runs=job.keep_runs,
    )


def _score_chunk(data: bytes, base: int, w: _Work, memo: Memo, spool_fd: int | None) -> _ChunkOut:
    """Read and score every line of ``data`` (which starts at byte ``base`` of the file);
    stops at the first bad line, as a reader reading the whole file would. Records go to
    ``spool_fd`` (a worker's spool file) or stay in memory."""
    entry_line, entry_case, entry_sample = array("q"), array("q"), array("q")
    scored, run_start, run_length = array("q"), array("q"), array("q")
    offsets, lengths = array("q"), array("q")
    records: list[bytes] = []
    unknown: dict[int, str] = {}
    unrecorded: list[tuple[int, str, tuple[str, ...]]] = []
    kept: list[Run] = []
    builder = RowsBuilder(METRICS, w.metas)
    display, index, wanted, table = w.display, w.index, w.wanted, w.table
    ctx, min_sample, extra = w.ctx, w.min_sample, w.extra
    spool_at = os.lseek(spool_fd, 0, os.SEEK_END) if spool_fd is not None else 0
    pending: list[bytes] = []
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
        if raw[:1] in _BLANK_START and not raw.strip():
            continue
        try:
            obj = decode_run_line(raw, file=display, lineno=lineno)
            raw_id = obj.get("case_id") if isinstance(obj, dict) else None  # unchecked
            key = memo.key_of_json(obj) if isinstance(raw_id, str) and raw_id in wanted else None
            hit = memo.get(key)
            # A line with the view of an earlier one: its other fields are checked, its
            # turns (already converted, so valid) are not converted again.
            run = convert_run(
                obj,
                file=display,
                lineno=lineno,
                turns=hit.turns if hit is not None else None,
                short=end - start < SHORT_LINE,
            )
        except RunsFileError as exc:
            problems = [(p.file, p.line, p.field, p.message) for p in exc.problems]
            error = (lineno, problems)
            break
        cid = run.case_id
        e = len(entry_line)
        entry_line.append(lineno)
        entry_sample.append(run.sample)
        i = index.get(cid, -1)
        entry_case.append(i)
        if i < 0:
            unknown[e] = cid
        case = wanted.get(cid)
        if case is None or run.sample < min_sample:
            continue
        if hit is None:
            score = score_sample(case, run, ctx)
            hard = score.hard_failures
            hit = Scoring(
                proto=builder.proto(
                    table[cid],
                    passed=score.passed,
                    scores=score.scores,
                    failed_checks=score.failed_checks,
                    tallies=score.tallies,
                    # score_sample gives every metric, in the builder's order (METRICS).
                    values=[_NAN if v is None else v for v in score.scores.values()],
                    missing=run.error if is_missing(run.error, hard) else None,
                ),
                template=record_template(score, names=METRICS, extra=extra, reasons_kept=True),
                turns=run.turns,
                hard=hard,
                unrecorded=_unanswered(case, run) if score.tallies.unrecorded else (),
                costed=not earns_nothing(run, hard),
            )
            memo.put(key, hit)
            used = None  # the row and the record hold this run's own usage metrics already
        else:
            hard = _of_sample(hit.hard, run.sample) if hit.hard else ()
            # The usage metrics are this sample's own (an identical run may report other
            # usage).
            used = (
                usage_values(
                    run.usage,
                    ctx.pricing.price_of_run(run.meta) if ctx.pricing is not None else None,
                )
                if hit.costed
                else None
            )
        if hit.unrecorded:
            unrecorded.append((len(scored), cid, hit.unrecorded))
        if w.keep_runs:
            kept.append(run)
        scored.append(e)
        run_start.append(base + start)
        run_length.append(end - start)
        builder.add_proto(
            table[cid],
            run.sample,
            hit.proto,
            usage=run.usage,
            latency_ms=run.latency_ms,
            hard=hard,
            extra=extra,
            usage_scores=used,
        )
        record = hit.template.render(run.sample, run.usage, used)
        if spool_fd is None:
            records.append(record)
        else:
            offsets.append(spool_at)
            lengths.append(len(record))
            spool_at += len(record)
            pending.append(record)
            if len(pending) >= 512:
                os.write(spool_fd, b"".join(pending))
                pending.clear()
    if pending and spool_fd is not None:
        os.write(spool_fd, b"".join(pending))
    return _ChunkOut(
        newlines=data.count(b"\n"),
        entry_line=entry_line,
        entry_case=entry_case,
        entry_sample=entry_sample,
        unknown=unknown,
        scored=scored,
        run_start=run_start,
        run_length=run_length,
        rows=builder.build(),
        unrecorded=unrecorded,
        kept=kept,
        records=records if spool_fd is None else None,
        spool_key=os.getpid() if spool_fd is not None else 0,
        record_offset=offsets,
        record_length=lengths,
        error=error,
    )


def _collect(
    chunks: Iterable[_ChunkOut], job: ScoreJob, result: ScoredRuns, spool: _Spool | None
) -> None:
    """Report the lines of each chunk (in file order) to the coverage check and keep what
    was scored; raise at the first bad line, or with every coverage problem. (Rows of a
    line the check refuses are never kept: any refusal is an error.)"""
    cov = job.coverage
    rows = result.rows
    first_line = 0
    for chunk in chunks:
        entry_line, entry_case, entry_sample = (
            chunk.entry_line,
            chunk.entry_case,
            chunk.entry_sample,
        )
        unknown = chunk.unknown
        for e in range(len(entry_line)):
            if cov.full:
                break
            i = entry_case[e]
            if i < 0:
                cov.add(first_line + entry_line[e], unknown[e], entry_sample[e])
            else:
                cov.add_index(first_line + entry_line[e], i, entry_sample[e])
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
        n = len(rows)
        result.unrecorded.extend((n + k, cid, calls) for k, cid, calls in chunk.unrecorded)
        result.kept.extend(chunk.kept)
        rows.line.extend(first_line + entry_line[e] for e in chunk.scored)
        rows.case.extend(entry_case[e] for e in chunk.scored)
        rows.sample.extend(entry_sample[e] for e in chunk.scored)
        rows.start.extend(chunk.run_start)
        rows.length.extend(chunk.run_length)
        result.batches.append(chunk.rows)
        if chunk.records is not None:
            result.records.add_memory(chunk.records)
        else:
            assert spool is not None
            result.records.add_spooled(
                spool, chunk.spool_key, chunk.record_offset, chunk.record_length
            )
        first_line += chunk.newlines
    cov.finish()


# ─── the serial executor ──────────────────────────────────────────────────────


class SerialExecutor:
    """Reads the file whole and scores every run in this process."""

    workers = 1

    def score(self, job: ScoreJob) -> ScoredRuns:
        result = ScoredRuns(job.metas, workers=1)
        chunk = _score_chunk(job.index.data(), 0, _work_of(job), Memo(), None)
        _collect([chunk], job, result, None)
        return result


# ─── the fork-pool executor ───────────────────────────────────────────────────

_JOB: tuple[int, _Work, str] | None = None
"""Each worker's job (set by :func:`_start`: the runs file's descriptor, the work, the
spool folder); inherited through the fork, never pickled."""
_STARTED: Any = None
"""Shared with the parent: the pid of the worker that took each chunk (0: not yet)."""
_MEMO = Memo()
"""Each worker's memo (a forked copy per worker, kept across its chunks)."""
_SPOOL_FD: int | None = None
"""Each worker's spool file, opened on its first chunk."""


class ForkExecutor:
    """Scores the file in ``workers`` processes: this one and ``workers - 1`` forked
    processes of a :class:`~concurrent.futures.ProcessPoolExecutor`, each reading its
    chunks by offset through the runs index's open descriptor (inherited: nothing but the
    chunk's bounds is pickled on the way in; on the way back, where the worker parked the
    chunk's output in its spool, :class:`Parked`). This process takes the outputs in file
    order; while the next one is not ready it scores a chunk no worker has started yet
    (:func:`_in_order`), so it does not sit idle holding a copy of what the workers hold:
    one process fewer for the same cores. Each wait is bounded by :data:`STALL_S`. A
    worker killed from outside breaks the pool: the error names the signal and the lines
    and cases of the chunk that worker held (which worker held which chunk is the one
    thing the standard pool does not tell, so the workers write it into a shared array).
    Every worker is reaped on the way out, whatever happened."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def score(self, job: ScoreJob) -> ScoredRuns:
        result = ScoredRuns(job.metas, workers=self.workers)
        spool = _Spool()
        index = job.index
        chunks = chunk_bounds(index, self.workers)
        ctx = multiprocessing.get_context("fork")
        started = ctx.RawArray("q", len(chunks))
        before = set(multiprocessing.active_children())
        work = _work_of(job)
        # Cases are compiled in the workers as their runs come (in parallel), not up front.
        pool = ProcessPoolExecutor(
            max(1, self.workers - 1),
            mp_context=ctx,
            initializer=_start,
            initargs=((index.fileno, work, spool.root), started),
        )
        workers: list[multiprocessing.process.BaseProcess] = []
        clean = False
        try:
            # Chunks in flight in the pool: one a worker, and one queued.
            feed = _Feed(pool, chunks, depth=max(1, self.workers - 1) + 1)
            workers = [p for p in multiprocessing.active_children() if p not in before]
            own = _Own(index, work, spool)

            def answer(k: int, future: Future[Parked]) -> _ChunkOut:
                return spool.unpark(_answer(future, k, chunks, index, started, workers))

            _collect(_in_order(feed, own, answer), job, result, spool)
            clean = True
        except BaseException:
            spool.close()
            raise
        finally:
            _stop(pool, workers, graceful=clean)
        return result


class _Feed:
    """The chunks in file order, handed out one at a time: to the pool while fewer than
    ``depth`` of its chunks are being scored, else to whoever asks (this process). Nothing is
    submitted that may have to be cancelled (a cancelled future left in a broken pool
    makes the pool's own thread fail)."""

    def __init__(
        self, pool: ProcessPoolExecutor, chunks: Sequence[tuple[int, int]], depth: int
    ) -> None:
        self.pool, self.chunks, self.depth = pool, chunks, depth
        self.futures: dict[int, Future[Parked]] = {}
        self.next = 0
        self.fill()

    def fill(self) -> None:
        # Answered chunks waiting for their turn do not count: the worker keeps busy
        # while this process scores one of its own.
        while self.next < len(self.chunks) and self._pending() < self.depth:
            k = self.next
            try:
                self.futures[k] = self.pool.submit(_chunk, k, self.chunks[k])
            except BrokenProcessPool as exc:  # a worker died: the chunk's answer says so
                failed: Future[Parked] = Future()
                failed.set_exception(exc)
                self.futures[k] = failed
            self.next += 1

    def _pending(self) -> int:
        return sum(1 for future in self.futures.values() if not future.done())

    def take(self) -> int | None:
        """The next chunk no one has, for this process (None: every chunk is handed out)."""
        if self.next >= len(self.chunks):
            return None
        self.next += 1
        return self.next - 1


def _in_order(
    feed: _Feed, own: _Own, answer: Callable[[int, Future[Parked]], _ChunkOut]
) -> Iterator[_ChunkOut]:
    """The chunks' outputs in file order. While chunk ``k``'s worker has not answered,
    this process scores the next chunk no one has and keeps its output until its turn. A
    future is let go as it is answered (a done future holds its output: kept, every
    chunk's columns would stay in memory to the end)."""
    scored_here: dict[int, _ChunkOut] = {}
    for k in range(len(feed.chunks)):
        feed.fill()
        if k in scored_here:
            yield scored_here.pop(k)
            continue
        future = feed.futures[k]
        while not future.done() and (j := feed.take()) is not None:
            scored_here[j] = own.score(feed.chunks[j])
            feed.fill()
        del feed.futures[k]
        yield answer(k, future)


class _Own:
    """This process's share of a :class:`ForkExecutor`'s chunks: scored here, with a memo
    and a spool file of its own, as a worker scores its chunks."""

    def __init__(self, index: RunsIndex, work: _Work, spool: _Spool) -> None:
        self.index, self.work, self.spool = index, work, spool
        self.memo = Memo()
        self.fd: int | None = None

    def score(self, chunk: tuple[int, int]) -> _ChunkOut:
        start, end = chunk
        try:
            if self.fd is None:
                self.fd = self.spool.writer(os.getpid())
            data = read_at(self.index.fileno, start, end - start, display=self.work.display)
            return _score_chunk(data, start, self.work, self.memo, self.fd)
        except OSError as exc:  # the spool cannot be written (a full disk)
            raise RunAborted(
                f"scoring could not go on: {exc}",
                hint="free disk space for the temporary folder (TMPDIR) and run again",
            ) from None


def _start(job: tuple[int, _Work, str], started: Any) -> None:
    """A worker's start: the parent stops it (SIGINT ignored) and a SIGTERM ends it (the
    CLI's raising handler would unwind into the parent's code)."""
    global _JOB, _STARTED
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _JOB, _STARTED = job, started


def _chunk(k: int, chunk: tuple[int, int]) -> Parked:
    """Chunk ``k`` in a worker: noted as this worker's, then :func:`_work` (looked up at
    call time, so a test can replace it), its output parked in the spool."""
    _STARTED[k] = os.getpid()
    out = _work(chunk)
    assert _JOB is not None
    return _park(_JOB[2], k, out)


def _answer(
    future: Future[Parked],
    k: int,
    chunks: Sequence[tuple[int, int]],
    index: RunsIndex,
    started: Any,
    workers: Sequence[multiprocessing.process.BaseProcess],
) -> Parked:
    """Where chunk ``k``'s output is parked, or the error that stops the run (class
    docstring)."""
    try:
        return future.result(timeout=STALL_S)
    except TimeoutError:
        raise RunAborted(
            f"a scoring worker sent nothing for {STALL_S:g} s while scoring "
            f"{chunk_where(index, chunks[k])} (still running): stopped or stuck",
            hint="run again; TOOLGATE_SCORE_WORKERS=1 scores in this process alone",
        ) from None
    except BrokenProcessPool:
        code, held = _casualty(started, workers)
        raise RunAborted(
            f"a scoring worker ended before it answered ({_describe(code)}) while scoring "
            f"{chunk_where(index, chunks[k if held is None else held])}: stopped from "
            "outside, most often for lack of memory",
            hint="TOOLGATE_SCORE_WORKERS=1 scores in this process alone, with less memory",
        ) from None
    except OSError as exc:  # the spool cannot be written (a full disk)
        raise RunAborted(
            f"a scoring worker could not go on: {exc}",
            hint="free disk space for the temporary folder (TMPDIR) and run again",
        ) from None
    except Exception as exc:  # a scorer raised: a bug, with the worker's traceback
        raise RuntimeError(f"a scoring worker failed:\n{exc.__cause__ or repr(exc)}") from None


def _casualty(
    started: Any, workers: Sequence[multiprocessing.process.BaseProcess]
) -> tuple[int | None, int | None]:
    """The exit code of the worker that broke the pool and the chunk it held last (None:
    not known). Once one worker died the pool SIGTERMs the others: a worker that ended
    otherwise is the one."""
    deadline = time.monotonic() + REAP_S
    for p in workers:  # the pool is stopping them: each wait bounded
        p.join(max(0.0, deadline - time.monotonic()))
    # The pool's own thread reaps the workers too: one it reaped while this thread waited
    # reads as running until that thread has stored its exit code. Look again, bounded.
    while any(p.exitcode is None for p in workers) and time.monotonic() < deadline:
        time.sleep(0.01)
    codes = {p.pid: p.exitcode for p in workers if p.exitcode}
    pid = next((pid for pid, c in codes.items() if c != -signal.SIGTERM), None)
    if pid is None:
        pid = next(iter(codes), None)
    if pid is None:
        return None, None
    held = [j for j in range(len(started)) if started[j] == pid]
    return codes[pid], held[-1] if held else None


def _stop(
    pool: ProcessPoolExecutor,
    workers: Sequence[multiprocessing.process.BaseProcess],
    *,
    graceful: bool,
) -> None:
    """Shut the pool down and reap every worker, each wait bounded by :data:`REAP_S`:
    after a clean run the workers exit on their own; otherwise (an error, an interrupt, a
    stopped worker) they are killed first."""
    if not graceful:
        for p in workers:
            with contextlib.suppress(OSError):
                p.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in workers:
        p.join(REAP_S)
        if p.exitcode is None:
            with contextlib.suppress(OSError):
                p.kill()
            p.join(REAP_S)


def _describe(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"killed by signal {-code}"
        return f"killed by signal {-code}, {name}"
    return f"exit code {code}"


def chunk_where(index: RunsIndex, chunk: tuple[int, int]) -> str:
    """Where a chunk of the runs file is, in words: ``runs.jsonl lines 31–60 (cases
    'a-1' … 'b-3')`` (read only when a worker failed on it)."""
    start, end = chunk
    first_line = 1
    pos = 0
    while pos < start:  # the newlines before the chunk, in windows: never the whole file
        window = index.pread(pos, min(1 << 20, start - pos))
        if not window:
            break
        first_line += window.count(b"\n")
        pos += len(window)
    body = index.pread(start, end - start) if end - start <= 1 << 20 else b""
    if body:
        lines = body.rstrip(b"\n").split(b"\n")
        last_line = first_line + len(lines) - 1
        ids = [i for i in (_case_of(lines[0]), _case_of(lines[-1])) if i is not None]
    else:  # a large chunk: its first line alone
        head = index.pread(start, min(end - start, 1 << 16)).split(b"\n", 1)[0]
        last_line = None
        ids = [i for i in (_case_of(head),) if i is not None]
    lines_text = (
        f"line {first_line}"
        if last_line == first_line
        else f"lines {first_line}–{last_line}"
        if last_line is not None
        else f"lines from {first_line}"
    )
    cases = ""
    if ids:
        shown = " … ".join(repr(i) for i in dict.fromkeys(ids))
        cases = f" (case{'s' if len(set(ids)) > 1 else ''} {shown})"
    return f"{index.display} {lines_text}{cases}"


def _case_of(line: bytes) -> str | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    cid = obj.get("case_id") if isinstance(obj, dict) else None
    return cid[:80] if isinstance(cid, str) else None


def _work(chunk: tuple[int, int]) -> _ChunkOut:
    """Read and score one chunk ``(start, end)`` of the file (in a worker)."""
    global _SPOOL_FD
    assert _JOB is not None
    fd, work, spool_root = _JOB
    gc.disable()  # acyclic records only: collections would rescan them for nothing
    if _SPOOL_FD is None:
        _SPOOL_FD = _spool_writer(spool_root, os.getpid())
    start, end = chunk
    data = read_at(fd, start, end - start, display=work.display)
    return _score_chunk(data, start, work, _MEMO, _SPOOL_FD)


def _spool_writer(root: str, key: int) -> int:
    """A descriptor appending to the record file of process ``key`` under ``root``."""
    return os.open(
        os.path.join(root, f"{key}.records"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
    )


def _park(root: str, k: int, out: _ChunkOut) -> Parked:
    """Chunk ``k``'s output pickled into a file of its own under ``root``."""
    path = os.path.join(root, f"{k}.answer")
    blob = memoryview(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        done = 0
        while done < len(blob):
            wrote = os.write(fd, blob[done:])
            if wrote <= 0:  # (a regular file writes something or raises; never spin)
                raise OSError(f"could not write {path}")
            done += wrote
    finally:
        os.close(fd)
    return Parked(path, len(blob))


def chunk_bounds(index: RunsIndex, workers: int) -> list[tuple[int, int]]:
    """Byte ranges of the file cut at line boundaries (found by reading a little around
    each cut, never the whole file). Each holds a ``1 / (workers × CHUNKS_PER_WORKER)``
    share of the file, and at most :data:`CHUNK_BYTES`; toward the end, a ``1 / (2 ×
    workers)`` share of what is left, down to :data:`TAPER` times smaller. The last
    chunks are small, so the processes finish together: one large last chunk keeps one
    process busy while the others wait."""
    size = index.size
    full = max(1, min(CHUNK_BYTES, -(-size // (workers * CHUNKS_PER_WORKER))))
    least = max(1, full // TAPER)
    bounds = [0]
    while bounds[-1] < size:
        step = max(least, min(full, (size - bounds[-1]) // (2 * workers)))
        bounds.append(_next_line(index, bounds[-1] + step - 1))
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


WORKERS_ENV = "TOOLGATE_SCORE_WORKERS"


def workers_setting(environ: Mapping[str, str]) -> int | None:
    """The number of scoring processes ``TOOLGATE_SCORE_WORKERS`` asks for (``None``: not
    set, every available core). A value that is not a whole number of at least 1 is refused
    (:class:`~gate.errors.UsageError`, exit code 2): :func:`gate.pipeline.check.check`
    asks before the agent runs, so a typo never costs a whole run."""
    raw = environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return None
    try:
        workers = int(raw)
    except ValueError:
        workers = 0
    if workers < 1:
        raise UsageError(
            f"{WORKERS_ENV}={raw!r}: expected a whole number of scoring processes, 1 or more",
            hint=f"unset {WORKERS_ENV} to use every available core; 1 scores in one process",
        )
    return workers


def default_executor(index: RunsIndex) -> ScoreExecutor:
    """The executor for a file of this size on this machine (module docstring)."""
    workers = workers_setting(os.environ)
    if workers is not None:
        return SerialExecutor() if workers == 1 else ForkExecutor(workers)
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        # Forking a process with other threads alive can copy a lock they hold (a
        # deadlock in the child): stay serial (e.g. after a runner left threads behind).
        return SerialExecutor()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    if cores < 2 or not _lines_at_least(index, PARALLEL_MIN_LINES):
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
