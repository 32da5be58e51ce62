"""The score stage's reading and scoring: runs file → checked coverage → sample scores.

Used by :func:`gate.pipeline.score_stage`. Two paths, one result:

* **serial** — read the runs file line by line (:func:`gate.runsfile.iter_runs`) and score
  each run (:func:`gate.scorers.score_sample`);
* **parallel** — for large files on a machine with several cores, the file is cut at line
  boundaries into chunks that forked worker processes read and score; each worker sends its
  scores back pickled, and the parent puts the :class:`~gate.model.SampleScore` objects in
  file order. Scoring is a pure function of
  (case, run, context), so the scores are identical to the serial path's whatever the
  chunking (a test compares the two).

Coverage is checked the same way on both paths, each problem naming the runs file's line:
a run of a case the dataset does not have, of a case of another shard, a (case, sample)
recorded twice, and — naming the case's dataset line — a case with no run at all. A
malformed line is a :class:`~gate.errors.RunsFileError` naming it (the first bad line of
the file, as the serial reader would stop there).

``TOOLGATE_SCORE_WORKERS`` sets the number of worker processes (``1`` forces the serial
path); by default every available core is used for files of at least
:data:`PARALLEL_MIN_LINES` lines, where ``fork`` is available and the process runs no
other thread (forking beside live threads risks copying a held lock).
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from gate.errors import Problem, RunsFileError
from gate.model import Case, HardFailure, Run, SampleScore, Turn
from gate.policy.reduce import DatasetLike, in_shard
from gate.runsfile import convert_run, decode_run_line, iter_runs, run_to_json
from gate.scorers import ScoringContext, score_sample
from gate.scorers.registry import VIEW_FIELDS

MAX_PROBLEMS = 50
"""Coverage problems listed before giving up (one pass reports many, not all)."""
PARALLEL_MIN_LINES = 4000
"""Below this many lines forking workers costs more than it saves."""
CHUNKS_PER_WORKER = 4
"""Chunks per worker: small enough to balance uneven lines, large enough to amortise."""


class Coverage:
    """Checks that the runs cover exactly the dataset's cases (of the shard), once each."""

    def __init__(self, dataset: DatasetLike, display: str, shard: tuple[int, int] | None):
        self.dataset = dataset
        self.display = display
        self.shard = shard
        self.cases: dict[str, Case] = {c.id: c for c in dataset.cases}
        self.wanted = (
            {cid for cid in self.cases if in_shard(cid, shard)} if shard else set(self.cases)
        )
        self.seen: dict[tuple[str, int], int] = {}
        self.problems: list[Problem] = []

    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def add(self, lineno: int, cid: str, sample: int) -> bool:
        """Record one run; True when it is to be scored (a known case of the shard, seen
        for the first time)."""
        display = self.display
        if cid not in self.cases:
            self.problems.append(
                Problem(
                    display, lineno, "case_id", f"{cid!r} is not a case of {self.dataset.display}"
                )
            )
            return False
        if cid not in self.wanted:
            assert self.shard is not None
            self.problems.append(
                Problem(
                    display,
                    lineno,
                    "case_id",
                    f"case {cid!r} is not in shard {self.shard[0]}/{self.shard[1]} "
                    "(score each shard's runs with its own --shard)",
                )
            )
            return False
        key = (cid, sample)
        first = self.seen.get(key)
        if first is not None:
            self.problems.append(
                Problem(
                    display,
                    lineno,
                    "sample",
                    f"case {cid!r} sample {sample} is recorded twice (first on line {first})",
                )
            )
            return False
        self.seen[key] = lineno
        return True

    def finish(self) -> None:
        """Raise every problem found, after listing the cases without any run."""
        covered = {cid for cid, _ in self.seen}
        for cid in self.cases:
            if cid in self.wanted and cid not in covered and len(self.problems) < MAX_PROBLEMS:
                c = self.cases[cid]
                where = f" (line {c.source.line} of {self.dataset.display})"
                self.problems.append(
                    Problem(
                        self.display,
                        None,
                        "case_id",
                        f"case {cid!r}{where} has no run in this file",
                    )
                )
        if self.problems:
            raise RunsFileError(
                self.problems,
                hint="Every case of the dataset must have its runs, each (case, sample) once: "
                "re-run `toolgate run` (with --resume to fill the gaps).",
            )


def read_covering(
    dataset: DatasetLike, runs_path: Path, display: str, shard: tuple[int, int] | None
) -> list[Run]:
    """Every run of the file, checked to cover exactly the dataset's cases (of the shard)."""
    cov = Coverage(dataset, display, shard)
    runs: list[Run] = []
    for lineno, run in iter_runs(runs_path, display=display):
        if cov.add(lineno, run.case_id, run.sample):
            runs.append(run)
        if cov.full:
            break
    cov.finish()
    return runs


def worker_count(lines: int) -> int:
    """Worker processes for a file of ``lines`` lines (1 = serial)."""
    env = os.environ.get("TOOLGATE_SCORE_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    if lines < PARALLEL_MIN_LINES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if threading.active_count() > 1:
        # Forking a process with other threads alive can copy a lock they hold (a
        # deadlock in the child): stay serial (e.g. after a runner left threads behind).
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def read_and_score(
    dataset: DatasetLike,
    runs_path: Path,
    display: str,
    shard: tuple[int, int] | None,
    ctx: ScoringContext,
) -> tuple[list[SampleScore], dict[str, Any]]:
    """The sample scores of every run of the file, in file order, and timing notes."""
    try:
        data = runs_path.read_bytes()
    except OSError as exc:
        raise RunsFileError(
            Problem(display, None, None, f"cannot read: {exc.strerror or exc}")
        ) from None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    workers = worker_count(lines)
    if workers <= 1:
        return _serial(dataset, runs_path, display, shard, ctx), {"workers": 1}
    return _parallel(dataset, data, display, shard, ctx, workers), {"workers": workers}


def _serial(
    dataset: DatasetLike,
    runs_path: Path,
    display: str,
    shard: tuple[int, int] | None,
    ctx: ScoringContext,
) -> list[SampleScore]:
    runs = read_covering(dataset, runs_path, display, shard)
    cases = {c.id: c for c in dataset.cases}
    memo = Memo()
    out = []
    for run in runs:
        key = memo.key_of_run(run)
        hit = memo.get(key)
        if hit is not None:
            out.append(derive(hit[1], run.sample, run.latency_ms, run.usage))
        else:
            score = score_sample(cases[run.case_id], run, ctx)
            memo.put(key, 0, score, run.turns)
            out.append(score)
    return out


# ─── identical runs are scored once ───────────────────────────────────────────


class Memo:
    """Scores of runs already seen, keyed by the run's scoring view: every field of
    :class:`gate.scorers.registry.ScoringView` (:data:`~gate.scorers.registry.VIEW_FIELDS`),
    in canonical JSON. At temperature 0 most samples of a case are the same run; each is
    scored once and the others get a copy with their own sample number, latency and usage
    (scoring reads nothing but the view). Bounded: cleared when it holds
    :data:`MEMO_SIZE` runs."""

    def __init__(self) -> None:
        self._d: dict[Any, tuple[int, SampleScore, tuple[Turn, ...]]] = {}

    @staticmethod
    def key_of_json(obj: dict[str, Any]) -> Any:
        """The key of a decoded line that is not converted yet. Nothing in it is checked
        here: a line whose key equals an earlier, valid line's holds the same view fields,
        and its other fields are still checked when it is converted."""
        try:
            return tuple(orjson.dumps(obj.get(name)) for name in VIEW_FIELDS)
        except TypeError:
            return None

    @staticmethod
    def key_of_run(run: Run) -> Any:
        return Memo.key_of_json(run_to_json(run))

    def get(self, key: Any) -> tuple[int, SampleScore, tuple[Turn, ...]] | None:
        """(line number, score, converted turns) of the run first seen with ``key``."""
        return self._d.get(key) if key is not None else None

    def put(self, key: Any, lineno: int, score: SampleScore, turns: tuple[Turn, ...]) -> None:
        if key is None:
            return
        if len(self._d) >= MEMO_SIZE:
            self._d.clear()
        self._d[key] = (lineno, score, turns)


MEMO_SIZE = 20_000


def derive(score: SampleScore, sample: int, latency: float | None, usage: Any) -> SampleScore:
    """A memoised score for another sample of the same run (built directly: a third of
    the parent's time on memo hits went to ``dataclasses.replace``)."""
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


# ─── the parallel path ────────────────────────────────────────────────────────

# Set in the parent just before forking; the workers inherit it (nothing is pickled).
_JOB: tuple[bytes, str, Mapping[str, Case], frozenset[str], ScoringContext] | None = None


def _chunks(data: bytes, n: int) -> list[tuple[int, int, int]]:
    """(start, end, first line number) of ``n`` pieces cut at line boundaries."""
    size = len(data)
    bounds = [0]
    for k in range(1, n):
        cut = data.find(b"\n", size * k // n)
        cut = size if cut < 0 else cut + 1
        if cut > bounds[-1]:
            bounds.append(cut)
    if bounds[-1] != size:
        bounds.append(size)
    out = []
    line = 1
    for a, b in itertools.pairwise(bounds):
        out.append((a, b, line))
        line += data.count(b"\n", a, b)
    return out


_MEMO = Memo()
"""Each worker's memo (a forked copy per worker, kept across its chunks: chunks reach a
worker in file order, so a reference always points to a line the parent already has)."""


def _work(chunk: tuple[int, int, int]) -> bytes:
    """Read and score one chunk; returns the pickled entries ``[lineno, case_id, sample,
    score | memo reference | None]`` or ``["error", lineno, problems]``."""
    assert _JOB is not None
    data, display, cases, wanted, ctx = _JOB
    gc.disable()  # acyclic records only: collections would rescan them for nothing
    memo = _MEMO
    start, end, lineno = chunk
    out: list[Any] = []
    for raw in data[start:end].split(b"\n"):
        if raw.strip():
            try:
                obj = decode_run_line(raw, file=display, lineno=lineno)
                raw_id = obj.get("case_id") if isinstance(obj, dict) else None  # unchecked
                key = (
                    memo.key_of_json(obj) if isinstance(raw_id, str) and raw_id in wanted else None
                )
                hit = memo.get(key)
                # A line with the turns of an earlier one: its other fields are checked,
                # its turns (already converted, so valid) are not converted again.
                run = convert_run(
                    obj, file=display, lineno=lineno, turns=hit[2] if hit is not None else None
                )
            except RunsFileError as exc:
                problems = [[p.file, p.line, p.field, p.message] for p in exc.problems]
                out.append(["error", lineno, problems])
                break  # the serial reader stops at the first bad line too
            cid = run.case_id
            if hit is not None:
                # The same run as an earlier line: the parent copies that line's score.
                ref = ["=", hit[0], run.latency_ms, run.usage]
                out.append([lineno, cid, run.sample, ref])
            elif cid in wanted:
                score = score_sample(cases[cid], run, ctx)
                memo.put(key, lineno, score, run.turns)
                out.append([lineno, cid, run.sample, score])
            else:
                out.append([lineno, cid, run.sample, None])
        lineno += 1
    return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)


def _parallel(
    dataset: DatasetLike,
    data: bytes,
    display: str,
    shard: tuple[int, int] | None,
    ctx: ScoringContext,
    workers: int,
) -> list[SampleScore]:
    global _JOB
    cov = Coverage(dataset, display, shard)
    # Cases are compiled in the workers as their runs come (in parallel), not up front.
    _JOB = (data, display, cov.cases, frozenset(cov.wanted), ctx)
    chunks = _chunks(data, workers * CHUNKS_PER_WORKER)
    scores: list[SampleScore] = []
    by_line: dict[int, SampleScore] = {}
    first_error: tuple[int, list[Problem]] | None = None
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init) as pool:
            for blob in pool.imap(_work, chunks):
                entries: Iterable[Any] = pickle.loads(blob)
                for e in entries:
                    if e[0] == "error":
                        # Chunks arrive in file order: the first error seen is the first
                        # bad line (unless the problem list filled up before it, when the
                        # serial reader would have stopped earlier too).
                        if first_error is None and not cov.full:
                            first_error = (e[1], [Problem(*p) for p in e[2]])
                        break
                    if first_error is not None or cov.full:
                        continue
                    lineno, cid, sample, rec = e
                    if rec is None:
                        cov.add(lineno, cid, sample)
                        continue
                    if isinstance(rec, SampleScore):
                        score = rec
                    else:
                        score = derive(by_line[rec[1]], sample, rec[2], rec[3])
                    by_line[lineno] = score
                    if cov.add(lineno, cid, sample):
                        scores.append(score)
    finally:
        _JOB = None
    if first_error is not None:
        raise RunsFileError(first_error[1])
    cov.finish()
    return scores


def _worker_init() -> None:
    """Forked workers die on SIGTERM, as ``Pool.terminate`` expects. They inherit the CLI's
    handler, which turns SIGTERM into an exception for a clean unwind of the parent; in a
    worker that exception could leave it alive, or holding the pool's shared queue lock,
    and ``terminate`` then waited for it forever (a hang seen about once in ten runs)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
