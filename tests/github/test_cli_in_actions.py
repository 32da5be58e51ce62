"""``toolgate check`` run by hand inside an Actions job (``GITHUB_ACTIONS=true``) says what
the Action says: a run that is not valid (exit 4) has the verdict ``error`` — never
``failed`` — no case is annotated as regressed and no gate as missed, and the ``summary``
output holds no control character. The CLI runs as a real process with a real agent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.github.test_cli import toolgate
from tests.reliability.helpers import case, project
from tests.reliability.test_recorded_depth import SCRIPT_AGENT

CALL = {"id": "x", "name": "lookup_order", "arguments": {"order_id": "ord_10482"}}


def outputs(path: Path) -> dict[str, str]:
    from tests.action.runner_contract import parse_key_values

    return dict(parse_key_values(path.read_text()))


def test_cli_in_actions__invalid_run__verdict_error_no_regression_annotations(
    tmp_path: Path,
) -> None:
    good = tmp_path / "script.json"
    good.write_text(
        json.dumps(
            {
                "replies": [
                    {"type": "tool_calls", "calls": [CALL]},
                    {"type": "final", "content": "done"},
                ]
            }
        )
    )
    agent = (
        "  kind: command\n"
        f"  command: {json.dumps([sys.executable, str(SCRIPT_AGENT)])}\n"
        "  workers: 1\n"
        "  timeout_s: 20\n"
        f"  env: {json.dumps({'SCRIPT': str(good)})}\n"
    )
    rows = [case(id=f"c{i}") for i in range(3)]
    project(tmp_path, rows, agent, samples=2)
    base = toolgate("check", "--config", "toolgate.yml", "--out", "base", cwd=tmp_path)
    assert base.returncode in (0, 1), base.stderr
    # the head's agent cannot start, and says so with control characters
    crash = tmp_path / "crash.py"
    crash.write_text(
        "import sys\nsys.stderr.write('\\x1b[31mboom\\x07\\x00 at\\rstart\\x1b[0m\\n')\n"
        "sys.exit(1)\n"
    )
    config = tmp_path / "toolgate.yml"
    config.write_text(
        config.read_text().replace(
            json.dumps([sys.executable, str(SCRIPT_AGENT)]),
            json.dumps([sys.executable, str(crash)]),
        )
    )
    out_file = tmp_path / "github_output"
    out_file.write_text("")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_OUTPUT": str(out_file),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    head = toolgate(
        "check", "--config", "toolgate.yml", "--out", "head",
        "--baseline", "base/results.json", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert head.returncode == 4, head.stdout[-2000:] + head.stderr[-2000:]
    got = outputs(out_file)
    assert (got["verdict"], got["passed"]) == ("error", "false")
    assert got["regressions"] == got["likely-regressions"] == "0"
    assert got["summary"].startswith("ERROR — ")
    assert all(ch.isprintable() for ch in got["summary"]), repr(got["summary"])
    annotations = [ln for ln in head.stdout.splitlines() if ln.startswith("::")]
    assert not [a for a in annotations if "regress" in a], annotations
    assert any(a.startswith("::error title=ToolGate run not valid::") for a in annotations)
