"""The replay adapter: stored runs pass through; gaps are error records; misfits are
input errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.errors import RunsFileError
from gate.model import Run
from gate.replay.runner import run_all
from gate.runsfile import RunsWriter, read_runs
from tests.replay.helpers import FakeDataset, case, config


def _write(path: Path, runs: list[Run]) -> None:
    with RunsWriter(path) as w:
        for r in runs:
            w.write(r)


def _elsewhere(tmp_path: Path) -> None:
    _write(
        tmp_path / "elsewhere.jsonl",
        [
            Run(case_id="a", sample=0, final="A0", latency_ms=12.5),
            Run(case_id="a", sample=4, final="A4"),
            Run(case_id="b", sample=1, final="B1"),
        ],
    )


def test_replay__samples_the_file_lacks__bad_input_naming_them(tmp_path: Path) -> None:
    """Nothing failed: the file is short. Every planned case-sample it lacks is named
    (the cases it has no run of at all apart), with the way to gate on the others."""
    _elsewhere(tmp_path)
    cfg = config(tmp_path, {"kind": "replay", "runs": "elsewhere.jsonl"})
    with pytest.raises(RunsFileError) as exc:
        run_all(cfg, FakeDataset([case("a"), case("b"), case("c")]), tmp_path / "out",
                samples=2, shard=None, resume=False, progress=False)  # fmt: skip
    whole, part = exc.value.problems
    assert (whole.file, whole.field) == ("elsewhere.jsonl", "case_id")
    assert whole.message == "no run of 1 of the 3 cases: 'c'"
    assert part.message == "no run of 2 sample(s) of 2 case(s) it holds: 'a' sample 1, 'b' sample 0"
    assert "agent.missing: skip" in (exc.value.hint or "")
    assert not (tmp_path / "out" / "runs.jsonl").exists() or not list(
        read_runs(tmp_path / "out" / "runs.jsonl")
    )


def test_replay__missing_skip__stored_runs_kept_the_rest_not_run(tmp_path: Path) -> None:
    _elsewhere(tmp_path)
    from gate.agents.replay import MissingRuns

    cfg = config(
        tmp_path, {"kind": "replay", "runs": "elsewhere.jsonl", "missing": MissingRuns.SKIP}
    )
    s = run_all(cfg, FakeDataset([case("a"), case("b"), case("c")]), tmp_path / "out",
                samples=2, shard=None, resume=False, progress=False)  # fmt: skip
    runs = {(r.case_id, r.sample): r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert set(runs) == {("a", 0), ("a", 1), ("a", 4), ("b", 0), ("b", 1), ("c", 0), ("c", 1)}
    assert runs[("a", 0)].final == "A0" and runs[("a", 0)].latency_ms == 12.5
    assert runs[("a", 4)].final == "A4"
    assert runs[("b", 0)].error == (
        "not_run: elsewhere.jsonl has no run for case 'b' sample 0 (agent.missing: skip)"
    )
    assert s.error_kinds == {"not_run": 4}


def test_replay__run_for_unknown_case__runs_file_error_names_line(tmp_path: Path) -> None:
    _write(tmp_path / "r.jsonl", [Run(case_id="a", sample=0), Run(case_id="ghost", sample=0)])
    cfg = config(tmp_path, {"kind": "replay", "runs": "r.jsonl"})
    with pytest.raises(RunsFileError) as exc:
        run_all(cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False)  # fmt: skip
    (p,) = exc.value.problems
    assert (p.file, p.line, p.field) == ("r.jsonl", 2, "case_id")


def test_replay__duplicate_case_sample__runs_file_error(tmp_path: Path) -> None:
    _write(tmp_path / "r.jsonl", [Run(case_id="a", sample=0), Run(case_id="a", sample=0)])
    cfg = config(tmp_path, {"kind": "replay", "runs": "r.jsonl"})
    with pytest.raises(RunsFileError, match="appears twice"):
        run_all(cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False)  # fmt: skip


def test_replay__built_adapter__holds_where_each_run_is_not_the_runs(tmp_path: Path) -> None:
    """A runs file of many runs costs a few arrays, not the runs: none is kept parsed
    between building the adapter and running a case-sample, which reads its line again
    (blank lines and all, the offsets still right)."""
    import gc

    from gate.replay.interface import build_agent
    from gate.replay.session import Job, Session

    _write(tmp_path / "r.jsonl", [Run(case_id=f"c{i}", sample=0, final=f"F{i}") for i in range(50)])
    text = (tmp_path / "r.jsonl").read_text()
    (tmp_path / "r.jsonl").write_text("\n" + text.replace("\n", "\n\n", 7))
    cfg = config(tmp_path, {"kind": "replay", "runs": "r.jsonl"})
    agent = build_agent(cfg)
    try:
        gc.collect()
        assert not [o for o in gc.get_objects() if isinstance(o, Run)]
        job = Job(case=case("c42"), sample=0, seed=0, step_budget=10, timeout_s=1.0)
        stored = agent.run(job, Session(job, None))  # type: ignore[arg-type]
        assert stored is not None and (stored.case_id, stored.final) == ("c42", "F42")
    finally:
        agent.close()
