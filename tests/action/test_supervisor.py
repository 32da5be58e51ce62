"""The Action's entrypoint supervises the process that runs the gate: code from the pull
request that ends that process (``os._exit(0)`` in a ``python`` agent) gives
``verdict: error`` and a red step, never a green step without results."""

from __future__ import annotations

from pathlib import Path

from gate.errors import ExitCode
from tests.action.harness import mini_repo, run_action


def test_action__python_agent_calls_os_exit_0__verdict_error_exit_4(tmp_path: Path) -> None:
    ws = mini_repo(tmp_path / "ws")
    (ws / "bad_agent.py").write_text(
        "import os\n\ndef run(messages, tools, call_tool):\n    os._exit(0)\n", "utf-8"
    )
    text = (ws / "toolgate.yml").read_text("utf-8")
    (ws / "toolgate.exit.yml").write_text(
        text.replace(
            "agent:\n  kind: replay\n  runs: runs.good.jsonl\n",
            'agent:\n  kind: python\n  callable: "bad_agent:run"\n  path: ["."]\n',
        ),
        "utf-8",
    )
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"config": "toolgate.exit.yml", "baseline": "none", "comment": "false"},
        timeout=120,
    )
    assert run.code == ExitCode.RUN_INVALID, (run.code, run.stdout[-2000:], run.stderr[-2000:])
    assert run.outputs["verdict"] == "error" and run.outputs["passed"] == "false"
    assert "ToolGate ended without finishing (exit code 0)" in run.stdout
    assert "✅" not in run.summary


def test_action__healthy_run__exit_code_of_the_finished_child(tmp_path: Path) -> None:
    ws = mini_repo(tmp_path / "ws")
    run = run_action(
        ws, tmp_path / "runner", inputs={"baseline": "none", "comment": "false"}, timeout=120
    )
    assert run.code == ExitCode.PASS, run.stderr[-2000:]
    assert run.outputs["verdict"] == "passed"
    assert "ended without finishing" not in run.stdout
