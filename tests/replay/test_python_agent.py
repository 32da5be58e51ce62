"""The python adapter: sync and async callables, call_tool from frozen responses,
timeouts, exceptions, budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.errors import ConfigError
from gate.model import Run
from gate.replay.runner import run_all
from gate.runsfile import read_runs
from tests.replay.helpers import FakeDataset, case, config, response

HERE = Path(__file__).parent


def _run(tmp_path: Path, name: str, **agent: object) -> Run:
    cfg = config(
        tmp_path,
        {
            "kind": "python",
            "callable": f"agents_py:{name}",
            "path": [str(HERE)],
            "timeout_s": 1,
            **agent,
        },
    )
    responses = (
        response("lookup_order", {"order_id": "ord_1"}, ok={"status": "shipped"}),
        response("issue_refund", None, error={"status": 500}),
    )
    run_all(cfg, FakeDataset([case("k1", responses=responses)]), tmp_path / "out", samples=1,
            shard=None, resume=False, progress=False)  # fmt: skip
    ((_, run),) = read_runs(tmp_path / "out" / "runs.jsonl")
    return run


def test_python__sync_callable__call_tool_answers_and_final_recorded(tmp_path: Path) -> None:
    run = _run(tmp_path, "sync_agent")
    assert run.error is None and run.final == "shipped (2 tools)"
    assert [c.name for c in run.calls] == ["lookup_order"]
    assert run.turns[0].tool_results[0].content == {"status": "shipped"}


def test_python__async_callable_with_optional_kwargs__awaited(tmp_path: Path) -> None:
    run = _run(tmp_path, "async_agent")
    assert run.error is None and run.final == "k1:shipped"
    assert run.calls[0].raw_arguments == '{"order_id": "ord_1"}'
    assert run.usage is not None and set(run.usage) == {"prompt_tokens"}


def test_python__batch__one_turn_of_parallel_calls(tmp_path: Path) -> None:
    run = _run(tmp_path, "batch_agent")
    assert run.error is None and run.final is None
    (turn,) = run.turns
    assert [c.name for c in turn.calls] == ["lookup_order", "issue_refund"]
    assert [r.is_error for r in turn.tool_results] == [False, True]


def test_python__exception__recorded_with_traceback_tail(tmp_path: Path) -> None:
    run = _run(tmp_path, "raising_agent")
    assert (run.error or "").startswith("exception: the callable raised KeyError: 'missing field'")
    assert "agents_py.py" in (run.error or "")
    assert len(run.turns) == 1  # the call made before the exception is kept


@pytest.mark.parametrize("name", ["slow_agent", "slow_async_agent"])
def test_python__step_past_timeout__timeout_error(tmp_path: Path, name: str) -> None:
    run = _run(tmp_path, name)
    assert run.error == "timeout: the callable did not call a tool or return within 1s (step 1)"


def test_python__budget_exception_swallowed__still_a_step_budget_error(tmp_path: Path) -> None:
    run = _run(tmp_path, "greedy_agent", step_budget=2)
    assert (
        run.error == "step_budget: the agent asked for tool-calling turn 3 with a step budget of 2"
    )
    assert len(run.turns) == 3


def test_python__wrong_return_type__protocol_error(tmp_path: Path) -> None:
    run = _run(tmp_path, "wrong_return")
    assert (run.error or "").startswith("protocol: the callable returned int")


def test_python__cannot_import__config_error_names_field(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"kind": "python", "callable": "no_such_module_xyz:run"})
    with pytest.raises(ConfigError) as exc:
        run_all(cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False)  # fmt: skip
    assert exc.value.problems[0].field == "agent.callable"
    assert "No module named 'no_such_module_xyz'" in exc.value.problems[0].message
