"""The score stage's reader: memoised identical runs and the parallel path give exactly the
scores of scoring every run on its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.dataset import load_dataset
from gate.errors import RunsFileError
from gate.pipeline._scorepool import ForkExecutor, ScoreExecutor, SerialExecutor
from gate.pipeline.records import sample_record
from gate.pipeline.score import score_runs
from gate.policy.table import assemble
from gate.runsfile import MAX_RUN_CALLS, RunsIndex, read_runs
from gate.scorers import ScoringContext, score_sample
from gate.scorers.registry import METRICS
from tests.scorers.test_score_command import CASES, _many_runs

EXECUTORS: dict[str, ScoreExecutor] = {"serial": SerialExecutor(), "fork": ForkExecutor(2)}


def _score(ds, runs_path: Path, executor: ScoreExecutor):  # type: ignore[no-untyped-def]
    with RunsIndex(runs_path, display="runs.jsonl") as runs:
        return score_runs(dataset=ds, runs=runs, config=None, shard=None, executor=executor)


@pytest.mark.parametrize("workers", ["serial", "fork"])
def test_read_and_score__identical_runs_memoised__same_scores_as_fresh(
    tmp_path: Path, workers: str
) -> None:
    ds_path = tmp_path / "dataset.jsonl"
    ds_path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    runs = _many_runs(30)
    for i, r in enumerate(runs):
        r["latency_ms"] = float(i)  # differs between otherwise identical runs
        r["usage"] = {"prompt_tokens": i}
    # A must-not-call hit repeated in several samples: hard failures carry their sample.
    # (Every case gets the three samples, as coverage wants the same count for each.)
    for s in range(3):
        for c in CASES:
            runs.append(
                {
                    "case_id": c["id"],
                    "sample": 100 + s,
                    "turns": [
                        {
                            "calls": [{"name": "delete_account", "arguments": {}}],
                            "tool_results": [],
                        }
                    ],
                    "final": "done",
                    "error": None,
                }
            )
    runs_path = tmp_path / "runs.jsonl"
    runs_path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    ds = load_dataset(ds_path)
    scored = _score(ds, runs_path, EXECUTORS[workers])
    assert scored.workers == (1 if workers == "serial" else 2)
    fresh_ctx = ScoringContext.build(None, None, ds.tools)
    cases = {c.id: c for c in ds.cases}
    index = {c.id: i for i, c in enumerate(ds.cases)}
    expected = [score_sample(cases[r.case_id], r, fresh_ctx) for _, r in read_runs(runs_path)]
    # Every record (and so every score, reason, evidence and tally) is the fresh one's.
    records = scored.records.bind(assemble(scored.metas, scored.batches))
    for want in expected:
        record = sample_record(want, names=METRICS)
        assert record in records.of_case(index[want.case_id]), (want.case_id, want.sample)
    records.close()
    assert len(scored.rows) == len(expected)
    hard = [h for batch in scored.batches for _, h in batch.hard]
    assert {h.sample for h in hard if h.case_id == "known-order"} == {100, 101, 102}
    assert len(hard) == sum(len(w.hard_failures) for w in expected)


@pytest.mark.parametrize("workers", ["serial", "fork"])
def test_read_and_score__a_line_past_the_call_bound__cut_and_failed_as_fresh(
    tmp_path: Path, workers: str
) -> None:
    """A line over :data:`gate.runsfile.MAX_RUN_CALLS` is cut and failed by the chunk reader
    as by the line reader, and a line of the same calls within the bound is not."""
    ds_path = tmp_path / "dataset.jsonl"
    ds_path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    call = {"name": "lookup_order", "arguments": {"order_id": "ord_7281"}}
    runs = [
        {"case_id": c["id"], "sample": s, "turns": [{"calls": [call] * n}], "final": "ok"}
        for c in CASES
        for s, n in ((0, MAX_RUN_CALLS + 1), (1, 3))
    ]
    runs_path = tmp_path / "runs.jsonl"
    runs_path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    ds = load_dataset(ds_path)
    scored = _score(ds, runs_path, EXECUTORS[workers])
    ctx = ScoringContext.build(None, None, ds.tools)
    cases = {c.id: c for c in ds.cases}
    index = {c.id: i for i, c in enumerate(ds.cases)}
    records = scored.records.bind(assemble(scored.metas, scored.batches))
    for _, run in read_runs(runs_path):
        cut = run.sample == 0
        assert (run.error or "").startswith("step_budget: the run records") == cut
        assert len(run.calls) == (MAX_RUN_CALLS if cut else 3)
        record = sample_record(score_sample(cases[run.case_id], run, ctx), names=METRICS)
        assert record in records.of_case(index[run.case_id]), (run.case_id, run.sample)
    records.close()


def test_memo__sample_score_fields__each_from_the_view_or_the_sample() -> None:
    """A repeated view takes the first sample's scoring (its row, its record template,
    its hard failures with the sample number changed): every other field of a sample
    score must follow from the view. A field added to SampleScore must be placed here,
    and the memo (gate.pipeline._scorepool.Scoring) taught it if it is per sample."""
    import dataclasses

    from gate.model import SampleScore

    per_sample = {"sample", "latency_ms", "usage", "hard_failures"}
    from_view = {
        "case_id", "passed", "scores", "failed_checks", "reasons", "evidence", "tallies", "error",
        "turns",
    }  # fmt: skip
    assert {f.name for f in dataclasses.fields(SampleScore)} == per_sample | from_view


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("latency_ms", "slow"),
        ("usage", {"prompt_tokens": "many"}),
        ("sample", -1),
        ("final", 3),
        ("error", ["not", "a", "string"]),
        ("case_id", ["known-order"]),
        ("surprise", 1),
    ],
)
def test_read_and_score__repeat_of_an_earlier_run_with_a_bad_field__same_error_both_paths(
    tmp_path: Path, field: str, value: object
) -> None:
    """A line whose turns repeat an earlier line's skips converting them again in the
    parallel reader: every other field must still be checked, with the serial reader's
    error (file, line, field, message)."""
    ds_path = tmp_path / "dataset.jsonl"
    ds_path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    runs = _many_runs(30)
    bad = dict(runs[0], sample=999)
    bad[field] = value
    runs.insert(20, bad)
    runs_path = tmp_path / "runs.jsonl"
    runs_path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    ds = load_dataset(ds_path)
    problems = []
    for executor in EXECUTORS.values():
        with pytest.raises(RunsFileError) as exc:
            _score(ds, runs_path, executor)
        problems.append(exc.value.problems)
    assert problems[0] == problems[1]
    (problem,) = problems[0]
    assert (problem.line, problem.field) == (21, field)


def test_score_sample__arguments_orjson_cannot_write__scored_without_the_memos() -> None:
    """The memos of schema validity and matching are keyed by the arguments' JSON text; a
    caller's arguments holding a lone surrogate have none, and are scored all the same."""
    from gate.model import Case, ExpectedCall, Run, SourceRef, ToolCall, ToolSpec, Turn

    tool = ToolSpec("t", "", {"type": "object", "properties": {"a": {"type": "string"}}})
    case = Case(
        "c",
        "u",
        SourceRef("d.jsonl", 1),
        available_tools=(tool,),
        expected_tool_calls=(ExpectedCall("t"),),
    )
    run = Run("c", 0, (Turn((ToolCall("t", {"a": "\ud800"}),)),))
    score = score_sample(case, run, ScoringContext.build(tools={"t": tool}))
    assert score.scores["call_accuracy"] == 1.0
    assert score.scores["schema_validity"] == 1.0
