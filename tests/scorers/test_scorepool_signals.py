"""The forked scoring workers (a ``concurrent.futures.ProcessPoolExecutor``): nothing that
can hang, every failure located.

These tests run the real executor on a real file: a worker killed mid-run, a worker that
fails, the parent's SIGTERM handler, a stopped worker, an interrupted parent — each ends
promptly with an error naming the cause, every worker reaped."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate import cli
from gate.dataset import load_dataset
from gate.errors import ExitCode, RunAborted
from gate.pipeline import _scorepool as scorepool
from gate.pipeline.score import score_runs
from gate.runsfile import RunsIndex
from tests.scorers.test_score_command import CASES, _many_runs


def _files(tmp_path: Path, n: int = 60) -> tuple[object, Path]:
    ds_path = tmp_path / "dataset.jsonl"
    ds_path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    runs_path = tmp_path / "runs.jsonl"
    runs_path.write_text("".join(json.dumps(r) + "\n" for r in _many_runs(n)))
    return load_dataset(ds_path), runs_path


def _score(ds: object, runs_path: Path) -> object:
    with RunsIndex(runs_path, display="runs.jsonl") as runs:
        return score_runs(
            dataset=ds,  # type: ignore[arg-type]
            runs=runs,
            config=None,
            shard=None,
            executor=scorepool.ForkExecutor(2),
        )


def _raise(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@pytest.fixture
def cli_sigterm_handler() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _children() -> list[str]:
    me = str(os.getpid())
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                out.append(entry)
    return out


def test_fork_executor__a_worker_killed__run_aborted_names_the_signal_and_every_worker_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, runs_path = _files(tmp_path)
    real = scorepool._work

    def dying(chunk: tuple[int, int]) -> bytes:
        if chunk[0] > 0:  # every worker but the one holding the first chunk dies
            os.kill(os.getpid(), signal.SIGKILL)
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", dying)
    start = time.monotonic()
    with pytest.raises(
        RunAborted,
        match=r"ended before it answered \(killed by signal 9, SIGKILL\) while scoring "
        r"runs\.jsonl lines \d+–\d+ \(case",
    ):
        _score(ds, runs_path)
    assert time.monotonic() - start < 30
    assert not _children(), "a worker left behind"


def test_fork_executor__a_worker_raises__its_traceback_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, runs_path = _files(tmp_path)

    def failing(chunk: tuple[int, int]) -> bytes:
        raise ValueError("scorer bug for the test")

    monkeypatch.setattr(scorepool, "_work", failing)
    with pytest.raises(RuntimeError, match="scorer bug for the test"):
        _score(ds, runs_path)
    assert not _children()


@pytest.mark.usefixtures("cli_sigterm_handler")
def test_fork_executor__a_worker_cannot_write__run_aborted_with_the_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, runs_path = _files(tmp_path)

    def full_disk(chunk: tuple[int, int]) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scorepool, "_work", full_disk)
    with pytest.raises(RunAborted, match="No space left on device") as caught:
        _score(ds, runs_path)
    assert caught.value.hint is not None and "disk space" in caught.value.hint
    assert not _children()


def test_parked_answer__read_back_whole_and_its_file_removed(tmp_path: Path) -> None:
    """The disk holds only the answers not taken yet."""
    spool = scorepool._Spool()
    try:
        out = scorepool._ChunkOut(
            newlines=3,
            entry_line=array("q", [1, 2, 3]),
            entry_case=array("q", [0, 0, 1]),
            entry_sample=array("q", [0, 1, 0]),
            unknown={},
            scored=array("q", [0, 1, 2]),
            run_start=array("q"),
            run_length=array("q"),
            rows=None,  # type: ignore[arg-type]
            unrecorded=[],
            kept=[],
            records=None,
        )
        parked = scorepool._park(spool.root, 7, out)
        assert os.path.isfile(parked.path)
        back = spool.unpark(parked)
        assert back.entry_case.tolist() == [0, 0, 1] and back.newlines == 3
        assert not os.path.exists(parked.path)
        with pytest.raises(RunAborted, match="answer could not be read back"):
            spool.unpark(parked)  # gone: an error named, not a traceback
    finally:
        spool.close()


@pytest.mark.usefixtures("cli_sigterm_handler")
def test_fork_executor__a_worker_cannot_park_its_answer__run_aborted_with_the_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker leaves each chunk's output in its spool (a full disk there is the run's
    end, named), and an answer read back short is an error, never a chunk lost."""
    ds, runs_path = _files(tmp_path)
    real = scorepool._park

    def full_disk(root: str, k: int, out: object) -> scorepool.Parked:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scorepool, "_park", full_disk)
    with pytest.raises(RunAborted, match="No space left on device"):
        _score(ds, runs_path)
    assert not _children()

    def cut(root: str, k: int, out: scorepool._ChunkOut) -> scorepool.Parked:
        parked = real(root, k, out)
        return parked._replace(length=parked.length + 1)

    monkeypatch.setattr(scorepool, "_park", cut)
    with pytest.raises(RunAborted, match="answer could not be read back"):
        _score(ds, runs_path)
    assert not _children()


def test_score_command__a_worker_killed__exit_4_the_cause_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed from outside (the out-of-memory killer), a worker makes the run one that
    decided nothing (exit 4, the verdict "error"), not a ToolGate bug (exit 3)."""
    ds_path = tmp_path / "dataset.jsonl"
    ds_path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    runs_path = tmp_path / "runs.jsonl"
    runs_path.write_text("".join(json.dumps(r) + "\n" for r in _many_runs(60)))
    real = scorepool._work

    def dying(chunk: tuple[int, int]) -> bytes:
        if chunk[0] > 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", dying)
    monkeypatch.setenv("TOOLGATE_SCORE_WORKERS", "2")
    code = cli.main(
        ["score", "--dataset", str(ds_path), "--runs", str(runs_path), "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.RUN_INVALID
    assert "killed by signal 9" in err and "nothing was decided" in err
    assert "Traceback" not in err and "internal error" not in err
    assert not (tmp_path / "o" / "results.json").exists()
    assert not _children()


def test_fork_executor__parent_raises_on_sigterm__a_worker_sigtermed_dies_and_run_aborts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers inherit the CLI's raising SIGTERM handler unless they restore the
    default: a SIGTERM then ends a worker (it does not unwind into the parent's code)."""
    ds, runs_path = _files(tmp_path)
    real = scorepool._work

    def sigtermed(chunk: tuple[int, int]) -> bytes:
        if chunk[0] > 0:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # a worker still running the parent's handler would go on
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", sigtermed)
    start = time.monotonic()
    with pytest.raises(RunAborted, match=r"killed by signal 15"):
        _score(ds, runs_path)
    assert time.monotonic() - start < 20
    assert not _children()


def test_fork_executor__parent_interrupted_while_reading__workers_killed_and_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, runs_path = _files(tmp_path)
    real = scorepool._work

    def slow(chunk: tuple[int, int]) -> bytes:
        time.sleep(30)
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", slow)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            _score(ds, runs_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 10
    assert not _children()


def test_check__a_scoring_worker_killed__exit_4_naming_the_signal_and_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolgate check`` with a worker killed from outside (the out-of-memory killer's
    SIGKILL): an infrastructure error located by the runs file's lines and cases the
    worker was scoring (exit 4), never "a bug in ToolGate" (exit 3)."""
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _many_runs(60)))
    sha = load_dataset(tmp_path / "dataset.jsonl").sha256
    (tmp_path / "toolgate.yml").write_text(
        f"dataset:\n  path: dataset.jsonl\n  sha256: {sha}\n"
        "agent:\n  kind: replay\n  runs: runs.jsonl\n"
    )
    real = scorepool._work

    def dying(chunk: tuple[int, int]) -> bytes:
        if chunk[0] > 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", dying)
    monkeypatch.setenv("TOOLGATE_SCORE_WORKERS", "2")
    code = cli.main(
        ["check", "--config", str(tmp_path / "toolgate.yml"), "--out", str(tmp_path / "o"),
         "--baseline", "none", "--no-progress"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == ExitCode.RUN_INVALID, err
    assert re.search(
        r"a scoring worker ended before it answered \(killed by signal 9, SIGKILL\) while "
        r"scoring \S*runs\.jsonl lines \d+–\d+ \(cases? '[\w-]+'",
        err,
    ), err
    assert "Traceback" not in err and "internal error" not in err
    assert not _children()


def test_fork_executor__a_worker_stopped__bounded_wait_run_aborted_every_worker_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that stops answering without ending (SIGSTOP here; a hang alike): the
    parent's wait is bounded (``STALL_S``), the run aborts naming where, and the stopped
    worker is killed and reaped."""
    ds, runs_path = _files(tmp_path)
    real = scorepool._work

    def stopping(chunk: tuple[int, int]) -> bytes:
        if chunk[0] > 0:
            os.kill(os.getpid(), signal.SIGSTOP)
        return real(chunk)

    monkeypatch.setattr(scorepool, "_work", stopping)
    monkeypatch.setattr(scorepool, "STALL_S", 1.5)
    start = time.monotonic()
    with pytest.raises(RunAborted, match=r"sent nothing for 1\.5 s while scoring runs\.jsonl"):
        _score(ds, runs_path)
    assert time.monotonic() - start < 20
    assert not _children(), "a worker left behind"


def test_fork_executor__two_processes__this_one_scores_chunks_beside_one_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two scoring processes are this one and one forked worker (not two workers beside
    an idle parent): this one scores the chunks the worker has not started while it
    waits (tests/scorers/test_scorepool.py compares the scores with the serial
    executor's)."""
    ds, runs_path = _files(tmp_path, n=400)
    seen: list[int] = []
    real = scorepool._Own.score

    def counting(self: scorepool._Own, chunk: tuple[int, int]) -> object:
        seen.append(len(_children()))
        return real(self, chunk)

    monkeypatch.setattr(scorepool._Own, "score", counting)
    scored = _score(ds, runs_path)
    assert seen, "this process scored no chunk"
    assert set(seen) == {1}, seen  # one worker alive while this process scored
    assert len(scored) == runs_path.read_text().count("\n")  # type: ignore[arg-type]
    assert not _children()


def test_fork_executor__worker_killed_while_this_process_scores__run_aborted_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool breaks while this process is scoring a chunk of its own: the chunks it
    hands out next cannot be submitted, and the run still aborts naming the killed worker
    (never an internal error)."""
    ds, runs_path = _files(tmp_path)
    real_work, real_own = scorepool._work, scorepool._Own.score

    def dying(chunk: tuple[int, int]) -> bytes:
        os.kill(os.getpid(), signal.SIGKILL)
        return real_work(chunk)

    def slow(self: scorepool._Own, chunk: tuple[int, int]) -> object:
        time.sleep(1.0)  # the worker dies and the pool breaks meanwhile
        return real_own(self, chunk)

    monkeypatch.setattr(scorepool, "_work", dying)
    monkeypatch.setattr(scorepool._Own, "score", slow)
    with pytest.raises(RunAborted, match=r"ended before it answered \(killed by signal 9"):
        _score(ds, runs_path)
    assert not _children()
