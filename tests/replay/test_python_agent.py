"""The python adapter: sync and async callables, call_tool from frozen responses,
timeouts, exceptions, budgets."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gate.errors import ConfigError, ErrorClass, error_class_of
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


# ─── the callable runs in a worker process: nothing it does ends ToolGate ────


def _run_two(tmp_path: Path, name: str, module: str = "agents_py", **agent: object) -> list[Run]:
    """Cases ``bad`` then ``good`` on one worker at a time: what ``bad`` does to its
    process, and that ``good`` still runs (on a fresh worker)."""
    cfg = config(
        tmp_path,
        {"kind": "python", "callable": f"{module}:{name}", "path": [str(HERE)], "timeout_s": 2,
         **agent},
        concurrency=1,
    )  # fmt: skip
    summary = run_all(cfg, FakeDataset([case("bad"), case("good")]), tmp_path / "out",
                      samples=1, shard=None, resume=False, progress=False)  # fmt: skip
    runs = [run for _, run in read_runs(tmp_path / "out" / "runs.jsonl")]
    assert summary.written == 2 and [r.case_id for r in runs] == ["bad", "good"]
    good = runs[1]
    assert good.error is None and good.final == "good: shipped", good.error
    return runs


def test_python__os_exit_0_in_callable__crash_of_that_case_sample_only(tmp_path: Path) -> None:
    bad, _ = _run_two(tmp_path, "os_exit_agent")
    assert (bad.error or "").startswith("crash: the worker exited with code 0 before answering")
    assert error_class_of(bad.error) is ErrorClass.AGENT
    assert [c.name for c in bad.calls] == ["lookup_order"]  # the call before the exit is kept


@pytest.mark.parametrize("name", ["segfault_agent", "kill_segv_agent"])
def test_python__segfault_in_callable__crash_with_signal_recorded(
    tmp_path: Path, name: str
) -> None:
    bad, _ = _run_two(tmp_path, name)
    assert (bad.error or "").startswith("crash: the worker exited with code -11"), bad.error
    assert error_class_of(bad.error) is ErrorClass.AGENT


def test_python__sys_exit_in_callable__exception_error_worker_kept(tmp_path: Path) -> None:
    bad, _ = _run_two(tmp_path, "sys_exit_agent")
    assert (bad.error or "").startswith("exception: the callable raised SystemExit: 3"), bad.error
    assert error_class_of(bad.error) is ErrorClass.AGENT


def test_python__endless_loop__timeout_and_the_worker_killed(tmp_path: Path) -> None:
    t0 = time.monotonic()
    bad, _ = _run_two(tmp_path, "endless_agent", timeout_s=1)
    assert bad.error == "timeout: the callable did not call a tool or return within 1s (step 1)"
    assert time.monotonic() - t0 < 15


def test_python__prints_on_stdout__protocol_unharmed(tmp_path: Path) -> None:
    run = _run(tmp_path, "printing_agent")
    assert run.error is None and run.final == "shipped"


def test_python__callable__runs_outside_toolgate_process_on_a_reused_worker(
    tmp_path: Path,
) -> None:
    cfg = config(
        tmp_path,
        {"kind": "python", "callable": "agents_py:pid_agent", "path": [str(HERE)]},
        concurrency=1,
    )
    run_all(cfg, FakeDataset([case("a"), case("b"), case("c")]), tmp_path / "out", samples=2,
            shard=None, resume=False, progress=False)  # fmt: skip
    pids = {run.final for _, run in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert len(pids) == 1 and str(os.getpid()) not in pids  # one worker for all 6


def test_python__replacement_worker_cannot_start__start_error_is_infrastructure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGATE_TEST_ONCE", str(tmp_path / "imported-once"))
    cfg = config(
        tmp_path,
        {"kind": "python", "callable": "agents_py_once:crash_first", "path": [str(HERE)]},
        concurrency=1,
    )
    run_all(cfg, FakeDataset([case("bad"), case("good")]), tmp_path / "out", samples=1,
            shard=None, resume=False, progress=False)  # fmt: skip
    bad, good = (run for _, run in read_runs(tmp_path / "out" / "runs.jsonl"))
    assert (bad.error or "").startswith("crash: the worker exited with code 0")
    assert (good.error or "").startswith(
        "start: the worker importing 'agents_py_once:crash_first' did not start"
    ), good.error
    assert error_class_of(good.error) is ErrorClass.INFRASTRUCTURE


def test_python__import_exits_the_process__config_error_before_any_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported-once"
    marker.write_text("already", "utf-8")  # the module's import now ends the interpreter
    monkeypatch.setenv("TOOLGATE_TEST_ONCE", str(marker))
    cfg = config(
        tmp_path, {"kind": "python", "callable": "agents_py_once:crash_first", "path": [str(HERE)]}
    )
    with pytest.raises(ConfigError) as exc:
        run_all(cfg, FakeDataset([case("a")]), tmp_path / "out", samples=1, shard=None,
                resume=False, progress=False)  # fmt: skip
    assert exc.value.problems[0].field == "agent.callable"
    assert "exited with code 0" in exc.value.problems[0].message
    assert not (tmp_path / "out" / "runs.jsonl").exists() or not (
        tmp_path / "out" / "runs.jsonl"
    ).read_text("utf-8")


def test_python__agent_python_names_another_environment__workers_run_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agent.python``: the workers run in that interpreter — here a fresh virtualenv,
    which has no ToolGate — and the callable answers as in ToolGate's own."""
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)  # the workers start here: not in ToolGate's source tree

    env_dir = tmp_path / "agent-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    (tmp_path / "where_agent.py").write_text(
        "import sys\n\n"
        "def run(messages, tools, call_tool):\n"
        "    call_tool('lookup_order', {'order_id': 'ord_1'})\n"
        "    try:\n"
        "        import gate  # noqa: F401\n"
        "        toolgate = 'importable'\n"
        "    except ImportError:\n"
        "        toolgate = 'absent'\n"
        "    return sys.prefix + ' ' + toolgate\n"
    )
    run = _run(
        tmp_path,
        "run",
        callable="where_agent:run",
        path=[str(tmp_path)],
        python=str(env_dir / "bin" / "python"),
        timeout_s=20,
    )
    assert run.error is None, run.error
    assert run.final == f"{env_dir} absent"
    assert [c.name for c in run.calls] == ["lookup_order"]
