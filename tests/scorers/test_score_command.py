"""``toolgate score`` end to end: real files, the real CLI in a subprocess."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order by its ID.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "include_items": {"type": "boolean"},
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "delete_account",
            "description": "Delete the account.",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    },
]

CASES = [
    {
        "id": "known-order",
        "user_input": "Check order ord_7281.",
        "available_tools": TOOLS,
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_7281"}}],
        "must_not_call": ["delete_account"],
        "difficulty": "easy",
        "tags": ["orders"],
    },
    {
        "id": "no-tool",
        "user_input": "What does shipped mean?",
        "available_tools": TOOLS,
        "expected_tool_calls": [],
        "expected_no_tool": True,
    },
    {
        "id": "third",
        "user_input": "Check order ord_1.",
        "available_tools": TOOLS,
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "ord_1"}}],
    },
]


def _run(
    case_id: str, sample: int, *calls: dict[str, Any], error: str | None = None
) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "sample": sample,
        "turns": [{"calls": list(calls), "tool_results": [], "content": None}] if calls else [],
        "final": None if error else "done",
        "error": error,
    }


GOOD = [
    _run(
        "known-order", 0, {"id": "1", "name": "lookup_order", "arguments": {"order_id": "ord_7281"}}
    ),
    _run(
        "known-order",
        1,
        {"id": "1", "name": "lookup_order", "arguments": '{"order_id": "ord_7282"}'},
    ),
    _run("no-tool", 0),
    _run("no-tool", 1, {"name": "functions.Delete_Account", "arguments": {}}),
    _run("third", 0, {"name": "lookup_order", "arguments": {"order_id": "ord_1"}}),
    _run("third", 1, error="timeout: no answer within 20 s"),
]


def _write(tmp: Path, runs: list[Any], *, raw_lines: list[str] | None = None) -> tuple[Path, Path]:
    ds = tmp / "dataset.jsonl"
    ds.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    rf = tmp / "runs.jsonl"
    lines = [json.dumps(r) for r in runs] + (raw_lines or [])
    rf.write_text("".join(line + "\n" for line in lines))
    return ds, rf


def _score(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", "score", *args],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_score__dataset_and_runs__writes_results_with_every_sample(tmp_path: Path) -> None:
    ds, rf = _write(tmp_path, GOOD)
    p = _score(tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out")
    assert p.returncode == 0, p.stderr
    assert "scored 6 case-sample(s) of 3 case(s)" in p.stdout
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    by_id = {c["id"]: c for c in res["cases"]}
    assert [s["sample"] for s in by_id["known-order"]["samples"]] == [0, 1]
    s1 = by_id["known-order"]["samples"][1]
    assert s1["passed"] is False
    assert s1["scores"][res["metric_names"].index("call_accuracy")] == 0.0
    assert "evidence" not in by_id["known-order"]["samples"][0], "a passing sample has none"
    assert s1["evidence"]["arg_diffs"][0]["diffs"][0]["argument"] == "order_id"
    assert by_id["known-order"]["pass_rate"] == 0.5
    # The namespaced, re-cased forbidden call on a no-tool case is a hard failure.
    assert [h["kind"] for h in res["hard_failures"]] == []  # no-tool case lists no must_not_call
    assert by_id["no-tool"]["samples"][1]["failed_checks"] == ["order", "schema_valid", "no_tool"]
    # The crashed sample is a failed sample, not a dropped one.
    s_err = by_id["third"]["samples"][1]
    assert s_err["passed"] is False and "agent_error" in s_err["failed_checks"]
    # Pooled unnecessary-call rate: 1 call on a no-tool case of 4 calls made.
    assert res["metrics"]["unnecessary_call_rate"]["mean"] == pytest.approx(1 / 4)
    # The crashed sample earns nothing: its expected call is not in the per-tool recall.
    assert res["per_tool"]["lookup_order"]["expected"] == 3
    assert s_err["scores"][res["metric_names"].index("call_accuracy")] is None
    assert set(res["metrics"]) >= {"tool_selection_f1", "call_accuracy", "risk_weighted_precision"}


def test_score__must_not_call_in_any_disguise__hard_failure(tmp_path: Path) -> None:
    runs = list(GOOD)
    runs[0] = _run(
        "known-order",
        0,
        {"name": "lookup_order", "arguments": {"order_id": "ord_7281"}},
        {"name": "default_api:DELETE_ACCOUNT", "arguments": {"id": "x"}},
    )
    ds, rf = _write(tmp_path, runs)
    p = _score(tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(h["kind"], h["case_id"], h["sample"]) for h in res["hard_failures"]] == [
        ("must_not_call", "known-order", 0)
    ]


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda runs: [*runs, _run("ghost", 0)], "runs.jsonl:7: case_id: 'ghost' is not a case of"),
        (
            lambda runs: [*runs, runs[0]],
            "runs.jsonl:7: sample: case 'known-order' sample 0 is recorded twice (first on line 1)",
        ),
        (
            lambda runs: [r for r in runs if r["case_id"] != "third"],
            "case 'third' (line 3 of dataset.jsonl) has no run",
        ),
    ],
    ids=["unknown case", "duplicated sample", "missing case"],
)
def test_score__coverage_error__names_the_line(tmp_path: Path, mutate: Any, fragment: str) -> None:
    ds, rf = _write(tmp_path, mutate(list(GOOD)))
    p = _score(tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out")
    assert p.returncode == 2, p.stdout
    assert fragment in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out" / "results.json").exists()


def test_score__malformed_line__names_the_line(tmp_path: Path) -> None:
    ds, rf = _write(tmp_path, GOOD[:3], raw_lines=['{"case_id": "third", "sample": 0, "turns": [}'])
    p = _score(tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out")
    assert p.returncode == 2
    assert "runs.jsonl:4:" in p.stderr and "invalid JSON" in p.stderr


def _shard_of(case_id: str, n: int) -> int:
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % n + 1


def test_score__shard__expects_exactly_that_shards_cases(tmp_path: Path) -> None:
    shard = _shard_of("known-order", 2)
    mine = [r for r in GOOD if _shard_of(r["case_id"], 2) == shard]
    ds, rf = _write(tmp_path, mine)
    p = _score(
        tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out", "--shard", f"{shard}/2"
    )
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {c["id"] for c in res["cases"]} == {r["case_id"] for r in mine}
    assert res["shard"] == {"index": shard, "count": 2}
    # The whole file under a shard: other shards' runs are refused, by line.
    ds, rf = _write(tmp_path, GOOD)
    p = _score(
        tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", "out2", "--shard", f"{shard}/2"
    )
    assert p.returncode == 2 and f"is not in shard {shard}/2" in p.stderr


def test_score__config__uses_its_rules_and_checks_the_pin(tmp_path: Path) -> None:
    _, rf = _write(tmp_path, GOOD)
    (tmp_path / "toolgate.yml").write_text(
        "dataset:\n  path: dataset.jsonl\nagent:\n  kind: replay\n  runs: runs.jsonl\n"
        "scoring:\n  default_order: superset\n"
    )
    pin = subprocess.run(
        [sys.executable, "-m", "gate", "pin", "--config", "toolgate.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pin.returncode == 0, pin.stderr
    p = _score(tmp_path, "--config", "toolgate.yml", "--runs", str(rf), "--out", "out")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["agent"]["kind"] == "replay"
    (tmp_path / "toolgate.yml").write_text(
        "dataset:\n  path: dataset.jsonl\n  sha256: "
        + "0" * 64
        + "\nagent:\n  kind: replay\n  runs: runs.jsonl\n"
    )
    p = _score(tmp_path, "--config", "toolgate.yml", "--runs", str(rf), "--out", "out")
    assert p.returncode == 2 and "sha256" in p.stderr


def test_score__same_inputs__identical_results_but_timing(tmp_path: Path) -> None:
    ds, rf = _write(tmp_path, GOOD)
    for out in ("a", "b"):
        assert (
            _score(tmp_path, "--dataset", str(ds), "--runs", str(rf), "--out", out).returncode == 0
        )
    a = json.loads((tmp_path / "a" / "results.json").read_text())
    b = json.loads((tmp_path / "b" / "results.json").read_text())
    a.pop("timing")
    b.pop("timing")
    assert a == b


def _score_env(tmp: Path, workers: int, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ, TOOLGATE_SCORE_WORKERS=str(workers))
    return subprocess.run(
        [sys.executable, "-m", "gate", "score", *args],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _many_runs(n_samples: int) -> list[dict[str, Any]]:
    out = []
    for s in range(n_samples):
        out.append(
            _run(
                "known-order",
                s,
                {
                    "id": "1",
                    "name": "lookup_order",
                    "arguments": {"order_id": "ord_7281" if s % 3 else "ord_1"},
                },
            )
        )
        out.append(
            _run(
                "no-tool",
                s,
                *([{"name": "lookup_order", "arguments": {"order_id": "x"}}] if s % 4 == 0 else []),
            )
        )
        out.append(
            _run(
                "third",
                s,
                {
                    "name": "lookup_order",
                    "arguments": '{"order_id": ' if s % 5 == 0 else {"order_id": "ord_1"},
                },
            )
        )
    return out


def test_score__parallel_workers__identical_results_to_serial(tmp_path: Path) -> None:
    ds, rf = _write(tmp_path, _many_runs(40))
    for workers, out in ((1, "serial"), (2, "parallel"), (3, "three")):
        p = _score_env(tmp_path, workers, "--dataset", str(ds), "--runs", str(rf), "--out", out)
        assert p.returncode == 0, p.stderr
    res = {}
    for out in ("serial", "parallel", "three"):
        data = json.loads((tmp_path / out / "results.json").read_text())
        workers = data["timing"]["score_workers"]
        data.pop("timing")
        res[out] = (workers, data)
    assert res["serial"][0] == 1 and res["parallel"][0] == 2 and res["three"][0] == 3
    assert res["serial"][1] == res["parallel"][1] == res["three"][1]


def test_score__parallel_workers__first_bad_line_and_coverage_named(tmp_path: Path) -> None:
    runs = _many_runs(40)
    lines = [json.dumps(r) for r in runs]
    lines[70] = '{"case_id": "third", "sample": 99, "turns": [}'
    lines[100] = "not json"
    ds = tmp_path / "dataset.jsonl"
    ds.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    rf = tmp_path / "runs.jsonl"
    rf.write_text("\n".join(lines) + "\n")
    p = _score_env(tmp_path, 2, "--dataset", str(ds), "--runs", str(rf), "--out", "o")
    assert p.returncode == 2
    assert "runs.jsonl:71:" in p.stderr and "runs.jsonl:101" not in p.stderr
    # Coverage problems from several chunks, each with its line.
    runs = _many_runs(40)
    runs[5]["case_id"] = "ghost"
    runs[110] = runs[3]
    ds, rf = _write(tmp_path, runs)
    p = _score_env(tmp_path, 2, "--dataset", str(ds), "--runs", str(rf), "--out", "o")
    assert p.returncode == 2
    assert "runs.jsonl:6: case_id: 'ghost' is not a case of" in p.stderr
    assert "runs.jsonl:111: sample: case" in p.stderr and "(first on line 4)" in p.stderr
