"""Merging shard results: equal to the unsharded run; overlapping, missing and foreign
parts refused; the CLI gates once and exits with the gate's code."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate.errors import ResultsFileError
from gate.model import OrderMode, Shard
from gate.pipeline.typed import merge_run
from gate.results import Decisions, Results, assemble, read_results, to_jsonable, write_results
from tests.policy.helpers import build_results, case, dataset, make_config, score

CASES = [
    case(
        f"case-{i:02d}",
        i + 1,
        difficulty=("easy", "hard")[i % 2],
        tags=["refunds"] if i % 3 else [],
        must_not_call=["delete_account"] if i == 5 else (),
    )
    for i in range(24)
]
DS = dataset(CASES)
CFG = make_config(samples=2, seed=11)


def merge_results(parts):
    """The merged results of shard parts, without a verdict."""
    run = merge_run(parts)
    return assemble(run.stats, run.records, Decisions(judge=run.judge, timing=run.timing))


def _scores(ids, *, violation=False):
    out = []
    for cid in ids:
        n = int(cid[-2:])
        for s in range(2):
            out.append(
                score(
                    cid,
                    s,
                    (n + s) % 4 != 0,
                    f1=((n + s) % 3) / 2,
                    per_tool={"lookup_order": [1, (n + s) % 2, 1]},
                    confusion=[["lookup_order", "lookup_order" if n % 2 else "issue_refund"]],
                    usage={"prompt_tokens": 10 + n},
                    violation="delete_account"
                    if violation and cid == "case-05" and s == 1
                    else None,
                )
            )
    return out


def _run(shard=None, **kw) -> Results:
    shard = Shard(*shard) if shard is not None else None
    ids = [c.id for c in CASES if shard is None or shard.holds(c.id)]
    return build_results(
        dataset=DS,
        scores=_scores(ids, **kw),
        config=CFG,
        agent={"kind": "test"},
        shard=shard,
        timing={"wall_s": 1.5},
    )


def _comparable(r: Results) -> dict:
    data = to_jsonable(r)
    for key in ("timing", "shard"):
        data.pop(key)
    return data


def test_merged_shards__equal_the_unsharded_run():
    whole = _run(violation=True)
    parts = [(f"part{i}", _run((i, 3), violation=True)) for i in (2, 1, 3)]
    merged = merge_results(parts)
    assert _comparable(merged) == _comparable(whole)
    assert merged.hard_failures[0].case_id == "case-05"


def test_merge__refuses_overlapping_missing_and_foreign_parts():
    one, two = _run((1, 2)), _run((2, 2))
    with pytest.raises(ResultsFileError, match=r"missing shard\(s\) 2/2"):
        merge_results([("a", one)])
    with pytest.raises(ResultsFileError, match="shard 1/2 is also a"):
        merge_results([("a", one), ("b", one), ("c", two)])
    with pytest.raises(ResultsFileError, match="is also in a"):
        merge_results([("a", one), ("b", two), ("c", _run((1, 3)))])
    foreign = build_results(
        dataset=dataset(CASES, sha="f" * 64),
        scores=_scores([c.id for c in CASES if Shard(2, 2).holds(c.id)]),
        config=CFG,
        agent={},
        shard=Shard(2, 2),
        timing={},
    )
    with pytest.raises(ResultsFileError, match="shards must come from one dataset"):
        merge_results([("a", one), ("b", foreign)])


def test_merge__refuses_parts_that_miss_cases():
    one, two = _run((1, 2)), _run((2, 2))
    two.cases.pop()
    with pytest.raises(ResultsFileError, match="23 of the dataset's 24 cases: 1 missing"):
        merge_results([("a", one), ("b", two)])


def _write_parts(tmp_path: Path, **kw) -> list[str]:
    dirs = []
    for i in (1, 2):
        d = tmp_path / f"shard-{i}"
        write_results(d / "results.json", _run((i, 2), **kw))
        dirs.append(str(d))
    return dirs


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], capture_output=True, text=True, timeout=120
    )


def test_merge_cli__gates_once_and_writes_results(tmp_path):
    dirs = _write_parts(tmp_path)
    cfg = tmp_path / "toolgate.yml"
    cfg.write_text(
        "dataset: {path: dataset.jsonl}\n"
        "agent: {kind: replay, runs: runs.jsonl}\n"
        "samples: 2\nseed: 11\n"
        "gates:\n  - {metric: case_passed, min: 0.99}\n"
    )
    p = _cli("merge", *dirs, "--out", str(tmp_path / "out"), "--config", str(cfg))
    assert p.returncode == 1, p.stderr
    assert "FAILED — 1 gate missed: case_passed" in p.stdout
    merged = read_results(tmp_path / "out" / "results.json")
    assert merged.verdict is not None and not merged.verdict.passed
    assert len(merged.cases) == 24 and merged.shard is None


def test_merge_cli__passes_without_gates_and_refuses_a_missing_shard(tmp_path):
    dirs = _write_parts(tmp_path)
    ok = _cli("merge", *dirs, "--out", str(tmp_path / "out"))
    assert ok.returncode == 0, ok.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["verdict"]["passed"] is True
    bad = _cli("merge", dirs[0], "--out", str(tmp_path / "out2"))
    assert bad.returncode == 2
    assert "missing shard(s) 2/2" in bad.stderr
    assert not (tmp_path / "out2" / "results.json").exists()


def test_merge_cli__hard_failure_in_one_shard_fails_the_merged_gate(tmp_path):
    dirs = _write_parts(tmp_path, violation=True)
    p = _cli("merge", *dirs, "--out", str(tmp_path / "out"))
    assert p.returncode == 1
    row = next(ln for ln in p.stdout.splitlines() if ln.startswith("  must_not_call  "))
    assert "1 case: case-05" in row


def test_merge__refuses_a_case_with_a_missing_sample():
    one, two = _run((1, 2)), _run((2, 2))
    two.cases[0].samples.pop()
    with pytest.raises(ResultsFileError, match="holds 1 regular samples"):
        merge_results([("a", one), ("b", two)])


@pytest.mark.parametrize(
    ("field", "change", "message"),
    [
        ("agent", {"agent": {"kind": "command", "command": ["regressed-agent"]}}, "another agent"),
        ("gate_name", {"gate_name": "other-gate"}, "gate 'other-gate'"),
        ("dataset.version", None, "dataset version '2'"),
        ("scoring_sha256", {"scoring_sha256": "0" * 64}, "scored with other settings"),
    ],
)
def test_merge__part_of_another_run__refused_naming_the_field(
    field: str, change: dict | None, message: str
) -> None:
    one, two = _run((1, 2)), _run((2, 2))
    if change is None:  # the dataset's version
        other = two.model_copy(update={"dataset": dataclasses.replace(two.dataset, version="2")})
    else:
        other = two.model_copy(update=change)
    with pytest.raises(ResultsFileError, match=message) as info:
        merge_results([("a", one), ("b", other)])
    assert any(p.field == field and p.file == "b" for p in info.value.problems)
    merge_results([("a", one), ("b", two)])  # the same run's parts still merge


def test_merge__scored_runs_record_their_scoring_hash() -> None:
    one = _run((1, 2))
    assert one.scoring_sha256 == CFG.scoring_sha256()
    stricter = CFG.model_copy(
        update={"scoring": CFG.scoring.model_copy(update={"default_order": OrderMode.SUPERSET})}
    )
    assert stricter.scoring_sha256() != CFG.scoring_sha256()
