"""An agent that cannot start, or cannot speak the protocol, is an error the first line
names — never a regression, never a failing agent — and a sample the agent failed earns
nothing.

Real processes: ``toolgate validate`` and ``toolgate check`` as subprocesses, command
agents written here (one that imports a module nobody installed, one that never echoes
the ids, one that crashes on one case only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.errors import ExitCode
from gate.results import read_results
from tests.reliability import helpers as h
from tests.reliability.helpers import TOOL, fault_case, project

IMPORTS_MISSING = """\
import json, sys
import toolgate_test_sdk_not_installed  # the agent's SDK, not installed where it runs
"""

NO_IDS = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "start":
        print(json.dumps({"type": "final", "content": "done"}), flush=True)
    elif "FAULT=chat" in msg["messages"][-1]["content"]:
        print(json.dumps({"type": "final", "content": "hello"}), flush=True)
    else:
        call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
        print(json.dumps({"type": "tool_calls", "calls": [call]}), flush=True)
"""

CRASHES_ON_ONE_CASE = """\
import json, sys
ids = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        text = msg["messages"][-1]["content"]
        if "FAULT=crash" in text:
            sys.stderr.write("RuntimeError: the model client is not configured\\n")
            sys.exit(1)
        if "FAULT=chat" in text:
            print(json.dumps({"type": "final", **ids, "content": "hello"}), flush=True)
            continue
        call = {"id": "c1", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}
        print(json.dumps({"type": "tool_calls", **ids, "calls": [call]}), flush=True)
    else:
        print(json.dumps({"type": "final", **ids, "content": "shipped"}), flush=True)
"""

GATES = (
    "gates:\n  - metric: tool_selection_f1\n    min: 0.9\n"
    "  - metric: call_accuracy\n    min: 0.9\n"
    "  - metric: unnecessary_call_rate\n    max: 0.1\n"
)


def chat_case(n: int) -> dict[str, Any]:
    """A case that needs no tool."""
    return {
        "id": f"chat-{n}",
        "user_input": "Thanks, that's all! FAULT=chat",
        "available_tools": [TOOL],
        "expected_tool_calls": [],
        "expected_no_tool": True,
    }


def assert_exit(proc: Any, code: int) -> None:
    """Exit ``code``; the only traceback is the agent's own (quoted), none of ToolGate's."""
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    both = proc.stdout + proc.stderr
    frames = [ln for ln in both.splitlines() if ln.strip().startswith("File ")]
    assert all("agent.py" in ln for ln in frames), frames


def agent_project(tmp_path: Path, script: str, rows: list[dict[str, Any]], **kw: Any) -> Path:
    (tmp_path / "agent.py").write_text(script)
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, 'agent.py'])}\n"
        "  workers: 2\n  timeout_s: 10\n"
    )
    return project(tmp_path, rows, agent, extra=GATES, **kw)


def test_validate__agent_import_error__exit_2_naming_the_module(tmp_path: Path) -> None:
    cfg = agent_project(tmp_path, IMPORTS_MISSING, [fault_case("ok", 0), chat_case(0)])
    proc = h.toolgate("validate", "--config", cfg, cwd=tmp_path)
    assert_exit(proc, ExitCode.BAD_INPUT)
    assert proc.stderr.startswith(
        "toolgate: error: toolgate.yml:7: agent.command: the agent could not start on the "
        "first case ('ok-0'): ModuleNotFoundError: No module named "
        "'toolgate_test_sdk_not_installed'\n"
    ), proc.stderr
    assert "    import toolgate_test_sdk_not_installed" in proc.stderr  # its first error lines
    assert "install: requirements.txt" in proc.stderr and "agent.python" in proc.stderr
    skipped = h.toolgate("validate", "--config", cfg, "--no-agent", cwd=tmp_path)
    h.assert_clean_exit(skipped, ExitCode.PASS)


def test_check__agent_import_error__verdict_error_exit_4_its_words_first_no_gate_named(
    tmp_path: Path,
) -> None:
    rows = [fault_case("ok", n) for n in range(3)] + [chat_case(n) for n in range(2)]
    cfg = agent_project(tmp_path, IMPORTS_MISSING, rows)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    assert_exit(proc, ExitCode.RUN_INVALID)
    words = "No module named 'toolgate_test_sdk_not_installed'"
    first = proc.stdout.splitlines()[0]
    assert first == (
        f"ToolGate faults: ERROR — the agent could not start: ModuleNotFoundError: {words}"
    )
    assert proc.stdout.splitlines()[1].startswith(
        "What to do: The agent's packages are not installed where it runs"
    )
    comment = (tmp_path / "out" / "comment.md").read_text()
    report = (tmp_path / "out" / "report.md").read_text()
    heading = "the agent could not start: ModuleNotFoundError: No module named " + (
        "'toolgate\\_test\\_sdk\\_not\\_installed'"
    )
    assert comment.splitlines()[1] == f"## ⛔ ToolGate `faults` error — {heading}"
    assert report.splitlines()[0] == f"# ⛔ ToolGate `faults` error — {heading}"
    for text in (proc.stdout, comment, report):
        for word in ("missed", "tool_selection_f1", "Regressions", "regressed", "gates ("):
            assert word not in text, (word, text[:3000])
    results = read_results(tmp_path / "out" / "results.json")
    assert results.verdict is not None and list(results.verdict.gates) == []
    assert results.run_error is not None and results.run_error.hint is not None


def test_check__replies_without_ids_on_every_sample__exit_4_with_the_hint(tmp_path: Path) -> None:
    """Tool calls on some cases, a final answer on others, never an id: the same protocol
    failure whatever the reply — the run is an error, not a failing agent (exit 1)."""
    rows = [fault_case("ok", n) for n in range(2)] + [chat_case(n) for n in range(2)]
    cfg = agent_project(tmp_path, NO_IDS, rows)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    h.assert_clean_exit(proc, ExitCode.RUN_INVALID)
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        "ToolGate faults: ERROR — the agent does not speak the protocol: its replies carry no "
        "case_id and sample (every case-sample, 8)"
    )
    assert lines[1] == (
        "What to do: Echo the case_id and sample of the start message in every reply, or set "
        "agent.reply_ids: optional."
    )
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "agent.reply\\_ids: optional" in comment and "missed" not in comment


def test_check__agent_crashes_on_one_case__its_samples_earn_nothing_listed_apart(
    tmp_path: Path,
) -> None:
    """The crashed samples are failures of the check ``agent_error`` with every metric
    n/a (no ``no_tool_respected`` for making no call, no selection score); the case is
    listed apart from the cases the agent answered wrongly."""
    rows = [fault_case("ok", 0), fault_case("crash", 0), chat_case(0)]
    rows[1]["expected_no_tool"] = True
    rows[1]["expected_tool_calls"] = []
    rows[1].pop("tool_responses")
    cfg = agent_project(tmp_path, CRASHES_ON_ONE_CASE, rows)
    proc = h.toolgate("check", "--config", cfg, "--out", "out", "--no-progress", cwd=tmp_path)
    # without a baseline a failing case is a known failure (the gates hold on the others)
    h.assert_clean_exit(proc, ExitCode.PASS)
    results = read_results(tmp_path / "out" / "results.json")
    names = results.metric_names
    crash = next(c for c in results.cases if c.id == "crash-0")
    for s in crash.samples:
        by_name = dict(zip(names, s.scores, strict=True))
        assert by_name["agent_error_rate"] == 1.0 and by_name["case_passed"] == 0.0
        assert {k for k, v in by_name.items() if v is not None} == {
            "agent_error_rate",
            "case_passed",
        }
        assert s.failed_checks == ["agent_error"]
    # the dataset's means: the crashed no-tool case earned no credit
    assert results.metrics["no_tool_respected"].mean == 1.0  # chat-0 only
    assert results.metrics["no_tool_respected"].n == 1
    assert results.metrics["agent_error_rate"].mean == pytest.approx(1 / 3)
    assert "⚠️ No answer (1 case) — every sample failed before an answer" in proc.stdout
    assert "  crash-0 (line 2)  2  crash: the worker exited with code 1 before answering" in (
        proc.stdout
    )
    failing = proc.stdout.split("failing cases", 1)
    assert len(failing) == 1 or "crash-0" not in failing[1].split("\n\n")[0]
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "### ⚠️ No answer (1 case) — every sample failed before an answer" in comment
