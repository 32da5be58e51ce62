"""run_all: one record per case × sample, shards, resume, deadline, concurrency, progress."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gate.errors import RunsFileError, UsageError
from gate.model import Run, Shard
from gate.replay.runner import Progress, run_all, run_identity, select_cases, write_header
from gate.replay.session import Job, Session
from gate.runsfile import RunsWriter, read_runs
from tests.replay.helpers import FakeDataset, case, config


class CountingAgent:
    """An in-process agent: one lookup call, then a final answer; tracks concurrency."""

    kind = "test"
    max_parallel: int | None = None

    def __init__(self, delay_s: float = 0.0):
        self.delay_s = delay_s
        self.in_flight = 0
        self.max_seen = 0
        self.lock = threading.Lock()
        self.seen: list[tuple[str, int]] = []
        self.closed = False

    def samples_for(self, case_id: str, samples: int) -> Sequence[int]:
        return range(samples)

    def prepare(self, jobs: int) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def close(self) -> None:
        self.closed = True

    def run(self, job: Job, session: Session) -> Run | None:
        with self.lock:
            self.in_flight += 1
            self.max_seen = max(self.max_seen, self.in_flight)
            self.seen.append((job.case.id, job.sample))
        try:
            from gate.adapters.plain import call_from_plain

            session.answer(
                [call_from_plain({"name": "lookup_order", "arguments": {"order_id": "ord_1"}})]
            )
            time.sleep(self.delay_s)
            session.final = f"done {job.case.id}/{job.sample}"
        finally:
            with self.lock:
                self.in_flight -= 1
        return None


def _cfg(tmp_path: Path, **extra: Any):
    return config(tmp_path, {"kind": "python", "callable": "x:y"}, **extra)


def _keys(path: Path) -> list[tuple[str, int]]:
    return [(r.case_id, r.sample) for _, r in read_runs(path)]


def test_run_all__cases_times_samples__one_record_each(tmp_path: Path) -> None:
    agent = CountingAgent()
    ds = FakeDataset([case(f"c{i}") for i in range(5)])
    s = run_all(_cfg(tmp_path), ds, tmp_path / "out", samples=3, shard=None, resume=False,
                progress=False, agent=agent)  # fmt: skip
    keys = _keys(tmp_path / "out" / "runs.jsonl")
    assert sorted(keys) == sorted((f"c{i}", k) for i in range(5) for k in range(3))
    assert (s.planned, s.written, s.skipped, s.errors) == (15, 15, 0, 0)
    assert agent.closed
    # sample-major: every case's sample 0 is taken before any sample 1
    assert [k for _, k in agent.seen[:5]] == [0] * 5


def test_run_all__concurrency__bounded_and_used(tmp_path: Path) -> None:
    agent = CountingAgent(delay_s=0.05)
    ds = FakeDataset([case(f"c{i}") for i in range(24)])
    run_all(_cfg(tmp_path, concurrency=4), ds, tmp_path / "out", samples=1, shard=None,
            resume=False, progress=False, agent=agent)  # fmt: skip
    assert agent.max_seen == 4


def test_shards__partition_the_cases__disjoint_complete_deterministic() -> None:
    cases = [case(f"case-{i}") for i in range(200)]
    parts = [select_cases(cases, shard=Shard(i, 4)) for i in range(1, 5)]
    ids = [c.id for p in parts for c in p]
    assert sorted(ids) == sorted(c.id for c in cases) and len(ids) == len(set(ids))
    assert all(30 < len(p) < 70 for p in parts)
    # the rule of the common brief, computed independently
    import hashlib

    expected = int(hashlib.sha256(b"case-7").hexdigest(), 16) % 4 + 1
    assert [i for i in range(1, 5) if Shard(i, 4).holds("case-7")] == [expected]


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "a/b", "3", "1/-2"])
def test_parse_shard__bad__usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--shard must be i/n"):
        Shard.parse(text)


def test_parse_shard__good__index_and_count() -> None:
    assert Shard.parse("2/4") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"


def test_run_all__shard__runs_only_its_cases(tmp_path: Path) -> None:
    ds = FakeDataset([case(f"c{i}") for i in range(20)])
    run_all(_cfg(tmp_path), ds, tmp_path / "out", samples=1, shard=Shard(2, 3), resume=False,
            progress=False, agent=CountingAgent())  # fmt: skip
    got = {cid for cid, _ in _keys(tmp_path / "out" / "runs.jsonl")}
    assert got == {f"c{i}" for i in range(20) if Shard(2, 3).holds(f"c{i}")}


def test_run_all__unknown_case_id__usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown case id"):
        run_all(_cfg(tmp_path), FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False, case_ids=["zz"], agent=CountingAgent())  # fmt: skip


def test_run_all__resume_after_kill__skips_recorded_drops_cut_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ds = FakeDataset([case(f"c{i}") for i in range(4)])
    agent = CountingAgent()
    # what the interrupted run of the same agent and config wrote first
    write_header(out, run_identity(_cfg(tmp_path), ds, agent))
    with RunsWriter(out / "runs.jsonl") as w:
        w.write(Run(case_id="c0", sample=0, final="earlier"))
        w.write(Run(case_id="c1", sample=1, final="earlier"))
    with (out / "runs.jsonl").open("ab") as fh:
        fh.write(b'{"case_id": "c2", "sample": 0, "tur')  # a write cut short by a kill
    s = run_all(
        _cfg(tmp_path), ds, out, samples=2, shard=None, resume=True, progress=False, agent=agent
    )
    keys = _keys(out / "runs.jsonl")
    assert sorted(keys) == sorted((f"c{i}", k) for i in range(4) for k in range(2))
    assert (s.skipped, s.written) == (2, 6)
    assert ("c2", 0) in agent.seen and ("c0", 0) not in agent.seen
    runs = {(r.case_id, r.sample): r for _, r in read_runs(out / "runs.jsonl")}
    assert runs[("c0", 0)].final == "earlier"


def test_run_all__no_resume__starts_afresh(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunsWriter(out / "runs.jsonl") as w:
        w.write(Run(case_id="old", sample=0))
    run_all(_cfg(tmp_path), FakeDataset([case("a")]), out, samples=1, shard=None, resume=False,
            progress=False, agent=CountingAgent())  # fmt: skip
    assert _keys(out / "runs.jsonl") == [("a", 0)]


def test_run_all__resume_with_corrupt_line__runs_file_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    ds, agent = FakeDataset([case("a")]), CountingAgent()
    write_header(out, run_identity(_cfg(tmp_path), ds, agent))
    (out / "runs.jsonl").write_text('{"case_id": "a", "sample": 0}\nnot json\n')
    with pytest.raises(RunsFileError):
        run_all(_cfg(tmp_path), ds, out, samples=1, shard=None, resume=True,
                progress=False, agent=agent)  # fmt: skip


def test_run_all__global_deadline__unstarted_case_samples_get_error_records(tmp_path: Path) -> None:
    agent = CountingAgent(delay_s=0.2)
    ds = FakeDataset([case(f"c{i}") for i in range(10)])
    s = run_all(_cfg(tmp_path, concurrency=1, deadline_s=0.5), ds, tmp_path / "out", samples=1,
                shard=None, resume=False, progress=False, agent=agent)  # fmt: skip
    runs = [r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")]
    assert len(runs) == 10  # nothing dropped
    late = [r for r in runs if r.error]
    assert 5 <= len(late) <= 8
    assert all(
        r.error == "deadline: not started: the global deadline (deadline_s: 0.5) passed first"
        for r in late
    )
    assert s.not_started == len(late) and s.error_kinds == {"deadline": len(late)}


def test_progress__not_a_tty__periodic_lines_and_a_final_line(tmp_path: Path) -> None:
    err = io.StringIO()
    ds = FakeDataset([case(f"c{i}") for i in range(6)])
    run_all(_cfg(tmp_path, concurrency=1), ds, tmp_path / "out", samples=1, shard=None,
            resume=False, stderr=err, agent=CountingAgent(delay_s=0.06),
            progress_interval_s=0.1)  # fmt: skip
    lines = err.getvalue().splitlines()
    assert 2 <= len(lines) <= 6
    assert "\r" not in err.getvalue()
    assert lines[-1].startswith("toolgate run: 6/6 case-samples · 0 failed ·")
    assert lines[-1].endswith("done")


def test_progress__disabled__silent(tmp_path: Path) -> None:
    err = io.StringIO()
    run_all(_cfg(tmp_path), FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
            resume=False, stderr=err, progress=False, agent=CountingAgent())  # fmt: skip
    assert err.getvalue() == ""


def test_run_all__agent_raises_unexpectedly__exception_record_run_goes_on(tmp_path: Path) -> None:
    class Buggy(CountingAgent):
        def run(self, job: Job, session: Session) -> Run | None:
            if job.case.id == "bad":
                raise ZeroDivisionError("oops")
            return super().run(job, session)

    ds = FakeDataset([case("ok"), case("bad"), case("ok2")])
    s = run_all(_cfg(tmp_path), ds, tmp_path / "out", samples=1, shard=None, resume=False,
                progress=False, agent=Buggy())  # fmt: skip
    runs = {r.case_id: r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert (runs["bad"].error or "").startswith("exception: ZeroDivisionError: oops")
    assert runs["ok2"].error is None and s.errors == 1


def test_progress__tty__redrawn_in_place_then_newline() -> None:
    out = io.StringIO()
    p = Progress(10, out, tty=True)
    p.update(3, 1)
    time.sleep(0.25)
    p.update(5, 1)
    p.update(10, 2, final=True)
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 3 and text.endswith("\n") and text.count("\n") == 1
    assert "toolgate run: 10/10 case-samples · 2 failed" in text


def test_run_all__deadline_during_a_case__deadline_error_not_timeout(tmp_path: Path) -> None:
    import sys

    from tests.replay.helpers import write_agent

    argv = write_agent(tmp_path, "slow", "def answer(msg, send, recv):\n    time.sleep(5)\n")
    cfg = config(tmp_path, {"kind": "command", "command": argv, "timeout_s": 30}, deadline_s=0.5)
    assert argv[0] == sys.executable
    s = run_all(cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False)  # fmt: skip
    ((_, run),) = read_runs(tmp_path / "out" / "runs.jsonl")
    assert (run.error or "").startswith(
        "deadline: the global deadline passed during the case (timeout: the agent did not answer"
    )
    assert s.error_kinds == {"deadline": 1} and s.not_started == 0


def test_run_all__many_threads_writing__every_line_whole_and_counted(tmp_path: Path) -> None:
    agent = CountingAgent()
    ds = FakeDataset([case(f"c{i}") for i in range(100)])
    s = run_all(_cfg(tmp_path, concurrency=16), ds, tmp_path / "out", samples=4, shard=None,
                resume=False, progress=False, agent=agent)  # fmt: skip
    keys = _keys(tmp_path / "out" / "runs.jsonl")  # a cut or merged line would not parse
    assert len(keys) == len(set(keys)) == s.written == 400


def test_close__waits_for_a_line_being_written__then_writes_no_more(tmp_path: Path) -> None:
    """Lines are written outside the runner's lock; closing an interrupted run must not
    cut one that a still-running thread is writing, and no line may start after it."""
    from gate.replay.runner import _Worker

    started, release = threading.Event(), threading.Event()

    class SlowWriter(RunsWriter):
        def write_line(self, line: bytes) -> None:
            started.set()
            assert release.wait(5)
            super().write_line(line)

    path = tmp_path / "runs.jsonl"
    writer = SlowWriter(path)
    worker = _Worker(None, None, [], writer, Progress(2, None), None, None)  # type: ignore[arg-type]
    first = threading.Thread(target=worker._write, args=(Run(case_id="c", sample=0), 0, [], False))
    first.start()
    assert started.wait(5)
    closer = threading.Thread(target=worker.close)
    closer.start()
    time.sleep(0.2)
    assert closer.is_alive() and worker.closed  # waiting for the line half-way through
    release.set()
    closer.join(5)
    first.join(5)
    assert not closer.is_alive() and not first.is_alive()
    worker._write(Run(case_id="c", sample=1), 0, [], False)  # after close: not written
    assert _keys(path) == [("c", 0)] and worker.done == 1 and worker.writing == 0
