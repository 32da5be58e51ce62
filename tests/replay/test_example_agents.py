"""The 30-line example agents of docs/agent-protocol.md, run as real worker processes
(Python and Node) through the command adapter."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.model import ToolSpec
from gate.replay.runner import run_all
from gate.runsfile import read_runs
from tests.replay.helpers import FakeDataset, case, config, response

AGENTS = Path(__file__).resolve().parents[2] / "examples" / "agents"
SEARCH = ToolSpec(
    "search_kb",
    "Search the help center.",
    {"type": "object", "properties": {"query": {"type": "string"}}},
)


def _said(final: str | None) -> tuple[str, Any]:
    """(prefix, decoded tool content) of the echo agents' final answer."""
    assert final is not None
    prefix, _, rest = final.partition(": ")
    return prefix + ": ", json.loads(rest)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([sys.executable, str(AGENTS / "echo_agent.py")], id="python"),
        pytest.param(
            [shutil.which("node") or "node", str(AGENTS / "echo_agent.mjs")],
            id="node",
            marks=pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
        ),
    ],
)
def test_example_agent__protocol_round_trip__runs_recorded(tmp_path: Path, argv: list[str]) -> None:
    cases = [
        case("hit", user="reset my password", tools=(SEARCH,),
             responses=(response("search_kb", {"query": "reset my password"},
                                 ok={"article": "KB-12"}),)),
        case("down", user="billing", tools=(SEARCH,),
             responses=(response("search_kb", None, error={"status": 500}),)),
        case("no-tools", user="hello there", tools=(), responses=()),
        case("unrecorded", user="something new", tools=(SEARCH,),
             responses=(response("search_kb", {"query": "other"}, ok=[]),)),
    ]  # fmt: skip
    cfg = config(
        tmp_path, {"kind": "command", "command": argv, "workers": 2, "timeout_s": 10}, concurrency=2
    )
    summary = run_all(
        cfg,
        FakeDataset(cases),
        tmp_path / "out",
        samples=2,
        shard=None,
        resume=False,
        progress=False,
    )
    runs = {(r.case_id, r.sample): r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert len(runs) == 8 and summary.errors == 0, [r.error for r in runs.values()]
    hit = runs[("hit", 1)]
    assert [(c.name, c.arguments) for c in hit.calls] == [
        ("search_kb", {"query": "reset my password"})
    ]
    assert _said(hit.final) == ("the tool said: ", {"article": "KB-12"})
    assert hit.usage == {"prompt_tokens": len("reset my password")}
    assert _said(runs[("down", 0)].final) == ("the tool failed: ", {"status": 500})
    assert runs[("no-tools", 0)].final == "hello there" and runs[("no-tools", 0)].turns == ()
    prefix, content = _said(runs[("unrecorded", 0)].final)
    assert prefix == "the tool failed: " and content["toolgate_unrecorded"] is True
    assert summary.unrecorded_calls == 2
