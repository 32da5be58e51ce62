"""Table-driven scorer cases (cases/samples.json): a case, a run, and what must come out."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from gate.config import ScoringConfig
from gate.model import ToolCall, ToolResult, Turn
from gate.results import evidence_json, tallies_json
from gate.scorers import ScoringContext, score_sample
from tests.scorers.helpers import case, expected_list, run, tool

TABLE = json.loads((Path(__file__).parent / "cases" / "samples.json").read_text())


def build(row: dict[str, Any]):  # type: ignore[no-untyped-def]
    spec = row["case"]
    exp = expected_list(spec.get("expected", []))
    alts = [expected_list(a) for a in spec.get("alternatives", [])]
    tools = None
    if "tools" in spec:
        tools = [tool(n, p) for n, p in spec["tools"].items()]
    c = case(
        expect=exp,
        no_tool=spec.get("no_tool", False),
        alternatives=alts,
        must_not_call=spec.get("must_not_call", []),
        tools=tools,
        order=spec.get("order"),
        step_budget=spec.get("step_budget"),
    )
    turns = []
    for t, batch in enumerate(row["run"]["turns"]):
        calls, results = [], []
        for k, item in enumerate(batch):
            cid = f"c{t}_{k}"
            if "raw" in item:
                calls.append(
                    ToolCall(item["name"], None, id=cid, raw_arguments=item["raw"], parse_ok=False)
                )
            else:
                calls.append(ToolCall(item["name"], item["arguments"], id=cid))
            res = item.get("result", {"content": {"ok": True}})
            results.append(
                ToolResult(
                    cid, res["content"], res.get("is_error", False), res.get("unrecorded", False)
                )
            )
        turns.append(Turn(calls=tuple(calls), tool_results=tuple(results)))
    r = run(*turns, error=row["run"].get("error"), final=row["run"].get("final", "done"))
    return c, r


@pytest.mark.parametrize("row", TABLE, ids=[r["name"] for r in TABLE])
def test_sample_table(row: dict[str, Any]) -> None:
    c, r = build(row)
    ctx = ScoringContext.build(
        ScoringConfig.model_validate_json(json.dumps(row.get("scoring", {})))
    )
    s = score_sample(c, r, ctx, full=True)
    assert s.evidence is not None
    evidence, tallies = evidence_json(s.evidence), tallies_json(s.tallies)
    want = row["expect"]
    assert s.passed is want["passed"], s.failed_checks
    if "failed_checks" in want:
        assert list(s.failed_checks) == want["failed_checks"]
    for name, value in want.get("scores", {}).items():
        got = s.scores[name]
        if value is None:
            assert got is None, (name, got)
        else:
            assert got is not None and math.isclose(got, value, rel_tol=1e-9), (name, got, value)
    for key, value in want.get("evidence", {}).items():
        assert evidence[key] == value, key
    for key, value in want.get("tallies", {}).items():
        assert tallies[key] == value, key
    if "hard_failures" in want:
        assert [h.kind.value for h in s.hard_failures] == want["hard_failures"]
    # Every score has a reason; the evidence is JSON as it stands.
    assert set(s.reasons) == set(s.scores)
    json.dumps(evidence)
    json.dumps(tallies)
