"""The Action's entrypoint supervises the process that runs the gate: code from the pull
request that could end that process gives ``verdict: error`` and a red step, never a green
step without results; a ``python`` agent's ``os._exit(0)`` ends only its worker process."""

from __future__ import annotations

import json
from pathlib import Path

from gate.action import CHILD_ENV
from gate.errors import ExitCode
from tests.action.harness import mini_repo, run_action


def test_action__gate_process_exits_0_without_finishing__verdict_error_exit_4(
    tmp_path: Path,
) -> None:
    ws = mini_repo(tmp_path / "ws")
    # Python imports sitecustomize at start-up: in the gate's process (the supervisor's
    # child, which the done-file variable marks), it ends the interpreter with code 0.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import os\nif os.environ.get({CHILD_ENV!r}):\n    os._exit(0)\n", "utf-8"
    )
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"baseline": "none", "comment": "false"},
        timeout=120,
        extra_env={"PYTHONPATH": str(site)},
    )
    assert run.code == ExitCode.RUN_INVALID, (run.code, run.stdout[-2000:], run.stderr[-2000:])
    assert run.outputs["verdict"] == "error" and run.outputs["passed"] == "false"
    assert "ToolGate ended without finishing (exit code 0)" in run.stdout
    assert "✅" not in run.summary


def test_action__python_agent_calls_os_exit_0_in_one_case__that_case_fails_gate_decides(
    tmp_path: Path,
) -> None:
    ws = mini_repo(tmp_path / "ws")
    (ws / "bad_agent.py").write_text(
        "import os\n\n"
        "def run(messages, tools, call_tool, case_id):\n"
        "    if case_id == 'order-2':\n"
        "        os._exit(0)\n"
        "    n = case_id.split('-')[1]\n"
        "    call_tool('lookup_order', {'order_id': n})\n"
        "    return 'shipped'\n",
        "utf-8",
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
    # The worker's exit is that case-sample's crash: ToolGate goes on and decides.
    assert "ended without finishing" not in run.stdout
    assert run.outputs["verdict"] in ("passed", "failed"), run.stdout[-2000:]
    results = json.loads((ws / run.outputs["results-path"]).read_text("utf-8"))
    errors = {c["id"]: [s.get("error") for s in c["samples"]] for c in results["cases"]}
    assert all(
        e and e.startswith("crash: the worker exited with code 0") for e in errors["order-2"]
    )
    assert all(e is None for cid, es in errors.items() if cid != "order-2" for e in es)
    assert results.get("run_error") is None


def test_action__healthy_run__exit_code_of_the_finished_child(tmp_path: Path) -> None:
    ws = mini_repo(tmp_path / "ws")
    run = run_action(
        ws, tmp_path / "runner", inputs={"baseline": "none", "comment": "false"}, timeout=120
    )
    assert run.code == ExitCode.PASS, run.stderr[-2000:]
    assert run.outputs["verdict"] == "passed"
    assert "ended without finishing" not in run.stdout
