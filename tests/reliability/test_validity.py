"""Infrastructure failures are not model failures: a run that decided nothing says so.

Real processes: ``toolgate check`` as a subprocess, a command agent whose script is
missing, the fake OpenAI-compatible server on 127.0.0.1 failing on purpose.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gate.errors import ExitCode
from gate.results import read_results
from tests.reliability import helpers as h
from tests.reliability.helpers import TOOL, fault_case, project
from tests.reliability.test_faults import FAULT_FIGURES, records
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call


def test_check__agent_script_missing__refused_before_the_first_case_exit_2(
    tmp_path: Path,
) -> None:
    rows = [fault_case("ok", n) for n in range(3)]
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(tmp_path / 'no_such_agent.py')])}\n"
        "  workers: 2\n  timeout_s: 5\n"
    )
    cfg = project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.BAD_INPUT)
    assert "agent.command" in proc.stderr and "no_such_agent.py" in proc.stderr, proc.stderr
    assert "toolgate.yml:" in proc.stderr, "the message names the config's line"
    assert not (tmp_path / "out" / "runs.jsonl").exists(), "no case ran"


def test_check__agent_cannot_start__verdict_error_exit_4_with_its_stderr(
    tmp_path: Path,
) -> None:
    """The script is there but dies at start, the same way for every case-sample: the run
    is not valid (never "the agent got worse"), and the agent's own words are shown."""
    rows = [fault_case("ok", n) for n in range(3)]
    script = tmp_path / "broken_agent.py"
    script.write_text(
        "import sys\nsys.stderr.write('agent: no_such_module_for_toolgate is not installed\\n')\n"
        "sys.exit(1)\n",
        "utf-8",
    )
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(script)])}\n"
        "  workers: 2\n  timeout_s: 5\n"
    )
    cfg = project(tmp_path, rows, agent)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.RUN_INVALID)
    # the agent's own words reach the terminal
    assert "no_such_module_for_toolgate" in proc.stdout, proc.stdout
    assert "ERROR" in proc.stdout and "FAILED" not in proc.stdout
    results = read_results(tmp_path / "out" / "results.json")
    assert results.run_error is not None and "failed the same way" in results.run_error.reason
    assert results.verdict is not None and results.verdict.passed is False
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "This run is not valid" in comment
    assert "gate(s) missed" not in comment and "Regress" not in comment
    FAULT_FIGURES["faults injected"] += 6
    FAULT_FIGURES["case-samples planned"] += 6
    FAULT_FIGURES["case-samples recorded"] += len(records(tmp_path / "out" / "runs.jsonl"))


def _openai_agent(srv: FakeOpenAIServer) -> str:
    return (
        "  kind: openai\n  model: fake-model\n"
        f"  base_url: {srv.base_url}\n  api_key_env: TOOLGATE_FAULTS_NO_KEY\n"
        "  timeout_s: 2\n  max_retries: 1\n"
    )


def test_check__endpoint_fails_one_case__missing_counted_verdict_error(tmp_path: Path) -> None:
    """The endpoint answers 503 to every request of one case: its samples are missing —
    not failures that would read as a regression, not passes — and the run is not valid."""

    def script(req: Any, i: int) -> Response:
        user = next(m["content"] for m in req["messages"] if m["role"] == "user")
        if "FAULT=down" in user:
            return Response(503, {"error": {"message": "overloaded"}}, {"Retry-After": "0"})
        if any(m["role"] == "tool" for m in req["messages"]):
            return Response(body=chat_completion(content="done"))
        call = tool_call("lookup_order", {"order_id": "ord_10482"})
        return Response(body=chat_completion(tool_calls=[call]))

    rows = [fault_case("ok", 0), fault_case("ok", 1), fault_case("down", 0)]
    with FakeOpenAIServer(script) as srv:
        cfg = project(tmp_path, rows, _openai_agent(srv))
        proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.RUN_INVALID)
    runs = records(tmp_path / "out" / "runs.jsonl")
    line = next(
        json.loads(x)
        for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()
        if '"down-0"' in x
    )
    assert line["error_class"] == "infrastructure"
    results = read_results(tmp_path / "out" / "results.json")
    assert results.missing is not None
    assert (results.missing.count, results.missing.planned) == (2, 6)
    assert results.missing.per_case == {"down-0": 2} and results.missing.by_reason == {"http": 2}
    assert results.run_error is not None and "2 of 6 case-sample(s) are missing" in (
        results.run_error.reason
    )
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "This run is not valid" in comment and "Missing case-samples: 2 of 6" in comment
    assert "missing case-samples: 2 of 6 (http 2)" in proc.stdout
    FAULT_FIGURES["faults injected"] += 2
    FAULT_FIGURES["case-samples planned"] += 6
    FAULT_FIGURES["case-samples recorded"] += len(runs)


def test_check__forbidden_call_then_endpoint_fails__hard_failure_stands_exit_1(
    tmp_path: Path,
) -> None:
    """The model makes the must-not-call call, then the endpoint fails for good: that
    sample is not missing — its hard failure fails the gate."""

    def script(req: Any, i: int) -> Response:
        if any(m["role"] == "tool" for m in req["messages"]):
            return Response(500, {"error": {"message": "upstream"}})
        call = tool_call("lookup_order", {"order_id": "ord_10482"})
        return Response(body=chat_completion(tool_calls=[call]))

    row = fault_case("ok", 0) | {"must_not_call": ["lookup_order"], "expected_tool_calls": []}
    row["expected_no_tool"] = True
    row["available_tools"] = [TOOL]
    with FakeOpenAIServer(script) as srv:
        cfg = project(tmp_path, [row], _openai_agent(srv), samples=1)
        proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.GATE_FAILED)
    results = read_results(tmp_path / "out" / "results.json")
    assert results.run_error is None and results.missing is None
    assert [hf.kind for hf in results.hard_failures] == ["must_not_call"]
    FAULT_FIGURES["faults injected"] += 1
    FAULT_FIGURES["case-samples planned"] += 1
    FAULT_FIGURES["case-samples recorded"] += 1
