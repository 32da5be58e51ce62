"""The ``mcp`` adapter with real agents on the official MCP Python SDK, over both transports."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from gate.model import ToolCall
from tests.mcp.helpers import error_kind, order_case, run_mcp, script_agent, sdk_agent

# http: mcp.Client (negotiates the stateless 2026-07-28 revision); legacy: ClientSession
# with the 2025 initialize handshake; stdio: mcp.Client launching TOOLGATE_MCP_COMMAND.
TRANSPORTS = ["http", "legacy", "stdio"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mcp_agent__official_sdk_client__calls_recorded_and_answered_from_frozen(
    tmp_path: Path, transport: str
) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent(transport, "lookup"))
    assert run.error is None
    assert run.final == 'order ord_1: {"status":"shipped"}'
    assert [t.calls for t in run.turns] == [
        (ToolCall("lookup_order", {"order_id": "ord_1"}, id="call_0_0"),)
    ]
    assert run.turns[0].tool_results[0].content == {"status": "shipped"}
    assert run.meta is not None and run.meta["mcp"] == {"exit_code": 0, "connections": 1}


def test_mcp_agent__tools_list__serves_the_cases_tools(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "list"))
    assert run.final == "lookup_order,issue_refund"
    assert run.turns == ()


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_mcp_agent__gathered_calls__one_parallel_batch(tmp_path: Path, transport: str) -> None:
    # A wide window: the test checks the batching, not the default window's margin.
    (run,) = run_mcp(tmp_path, sdk_agent(transport, "parallel"), batch_window_ms=2000)
    assert run.error is None
    assert len(run.turns) == 1
    assert sorted(c.name for c in run.turns[0].calls) == ["issue_refund", "lookup_order"]
    assert run.final == '{"status":"shipped"} / {"refunded":true}'


def test_mcp_agent__batch_window_zero__every_call_its_own_step(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "parallel"), batch_window_ms=0)
    assert run.error is None
    assert [len(t.calls) for t in run.turns] == [1, 1]


def test_mcp_agent__sequential_calls__one_turn_each_in_order(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("legacy", "sequence"))
    assert [[c.name for c in t.calls] for t in run.turns] == [["lookup_order"], ["issue_refund"]]


def test_mcp_agent__unknown_tool__recorded_as_called_and_answered_unrecorded(
    tmp_path: Path,
) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "unknown_tool"))
    assert run.error is None
    assert run.calls == (ToolCall("delete_everything", {"confirm": True}, id="call_0_0"),)
    result = run.turns[0].tool_results[0]
    assert result.is_error
    assert isinstance(result.content, dict) and result.content["toolgate_unrecorded"] is True
    assert run.final is not None and run.final.startswith("error: ")


def test_mcp_agent__arguments_break_the_schema__recorded_exactly_and_frozen_answer_served(
    tmp_path: Path,
) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("stdio", "bad_args"))
    assert run.error is None
    assert run.calls[0].arguments == {"order_id": 12345, "x": [1]}
    assert run.turns[0].tool_results[0].content == {"status": "unknown order"}  # the default


def test_mcp_agent__exits_without_final_answer__protocol_error_calls_kept(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "no_final"))
    assert error_kind(run) == "protocol"
    assert "without a final answer" in (run.error or "")
    assert len(run.calls) == 1


def test_mcp_agent__never_connects__protocol_error_names_the_variables(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'print("I answered from memory")\n')
    (run,) = run_mcp(tmp_path, agent)
    assert error_kind(run) == "protocol"
    assert "never connected" in (run.error or "")
    assert "TOOLGATE_MCP_URL" in (run.error or "")


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_mcp_agent__connects_twice__protocol_error_first_connections_calls_kept(
    tmp_path: Path, transport: str
) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent(transport, "twice"))
    assert error_kind(run) == "protocol"
    assert "max_connections: 1" in (run.error or "")
    assert [c.name for c in run.calls] == ["lookup_order"]
    assert run.meta is not None and run.meta["mcp"]["connections"] == 2


def test_mcp_agent__max_connections_two__second_connection_allowed(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "twice"), max_connections=2)
    assert run.error is None
    assert [c.name for c in run.calls] == ["lookup_order", "lookup_order"]


def test_mcp_agent__session_breaks_mid_call__crash_with_the_call_recorded(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "break"), batch_window_ms=5000)
    assert error_kind(run) == "crash"
    assert "exited with code 4" in (run.error or "")
    assert [c.name for c in run.calls] == ["lookup_order"]  # recorded though never answered


def test_mcp_agent__nonzero_exit__crash_with_stderr_tail(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("legacy", "crash"))
    assert error_kind(run) == "crash"
    assert "exited with code 3" in (run.error or "")
    assert "something went wrong in the agent" in (run.error or "")
    assert len(run.calls) == 1


def test_mcp_agent__step_budget__turn_past_it_recorded_and_sample_ends(tmp_path: Path) -> None:
    (run,) = run_mcp(tmp_path, sdk_agent("http", "loop"), step_budget=3)
    assert error_kind(run) == "step_budget"
    assert len(run.turns) == 4  # the turn past the budget is recorded, unanswered
    assert run.turns[-1].tool_results == ()


def test_mcp_agent__hangs__timeout_and_its_process_group_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    agent = script_agent(
        tmp_path,
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(600)
        """,
    )
    t0 = time.monotonic()
    (run,) = run_mcp(tmp_path, agent, timeout_s=1.5)
    assert time.monotonic() - t0 < 30
    assert error_kind(run) == "timeout"
    child = int(pid_file.read_text())
    for _ in range(100):  # the kill is delivered; the child is reaped by init
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the agent's child process survived the end of its case-sample")


def test_mcp_agent__gate_token__never_reaches_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("CRM_TOKEN", "crm-secret")
    (run,) = run_mcp(
        tmp_path,
        sdk_agent("http", "env"),
        env={"MY_FLAG": "1"},
        servers=[
            {"name": "crm", "url": "http://127.0.0.1:9/mcp", "headers_env": {"X": "CRM_TOKEN"}}
        ],
    )
    assert run.final == "GITHUB_TOKEN=False CRM_TOKEN=False MY_FLAG=True TOOLGATE_CASE=True"


def test_mcp_agent__case_file__holds_the_case_sample_and_seed(tmp_path: Path) -> None:
    runs = run_mcp(tmp_path, sdk_agent("http", "case"), samples=2)
    docs = [json.loads(r.final or "{}") for r in runs]
    assert [(d["case_id"], d["sample"]) for d in docs] == [("c1", 0), ("c1", 1)]
    assert docs[0]["user_input"] == "where is my order ord_1?"
    assert docs[0]["message_history"] == []
    assert [d["seed"] for d in docs] == [r.meta["seed"] for r in runs if r.meta]
    assert docs[0]["seed"] != docs[1]["seed"]


def test_mcp_agent__many_case_samples__each_its_own_endpoint(tmp_path: Path) -> None:
    cases = [order_case(f"c{i}", user=f"where is my order ord_{i}?") for i in range(1, 4)]
    runs = run_mcp(tmp_path, sdk_agent("http", "lookup"), cases, workers=3)
    assert [r.error for r in runs] == [None, None, None]
    assert [r.calls[0].arguments for r in runs] == [{"order_id": f"ord_{i}"} for i in (1, 2, 3)]
    assert [r.final for r in runs] == [
        'order ord_1: {"status":"shipped"}',
        'order ord_2: {"status":"unknown order"}',
        'order ord_3: {"status":"unknown order"}',
    ]


def test_mcp_agent__program_missing__config_error_before_any_case(tmp_path: Path) -> None:
    from gate.errors import ConfigError

    with pytest.raises(ConfigError, match=r"agent\.command: cannot find the program"):
        run_mcp(tmp_path, ["no-such-agent-program-xyz"])


def test_docs_example_agent__examples_agents_mcp_agent__runs_as_documented(
    tmp_path: Path,
) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "agents" / "mcp_agent.py"
    (run,) = run_mcp(tmp_path, ["python", str(example)])
    assert run.error is None
    assert run.calls[0].name == "lookup_order"
    assert run.calls[0].arguments == {"query": "where is my order ord_1?"}
    assert run.final == 'the tool said: {"status":"unknown order"}'
