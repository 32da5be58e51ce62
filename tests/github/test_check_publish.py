"""``toolgate check`` on the example, in a simulated Actions job: a failing GitHub API
leaves the verdict and the exit code exactly as with a healthy one."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.github.conftest import PR, USER_TOKEN
from tests.github.test_cli import toolgate
from tests.github.test_workflow import parse_outputs
from tests.servers.github_server import Fault, GitHubServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def job_env(gh: GitHubServer, tmp: Path) -> dict[str, str]:
    ev = tmp / "event.json"
    ev.write_text(json.dumps({"number": PR, "pull_request": {"number": PR}}))
    for name in ("summary.md", "output"):
        (tmp / name).write_text("")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": USER_TOKEN,
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_API_URL": gh.api_url,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(ev),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "TOOLGATE_GITHUB_BUDGET_S": "4",
    }


@pytest.mark.parametrize(
    ("config", "verdict", "code"),
    [("toolgate.yml", "passed", 0), ("toolgate.regressed.yml", "failed", 1)],
)
def test_check__failing_github__same_verdict_and_exit_code(
    gh: GitHubServer, tmp_path: Path, config: str, verdict: str, code: int
) -> None:
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work)
    codes = {}
    for label in ("healthy", "failing"):
        run = tmp_path / label
        run.mkdir()
        if label == "failing":
            for route in ("get_user", "get_repo", "get_issue", "list_comments", "create_comment"):
                gh.inject(route, Fault(status=503))
        start = time.monotonic()
        proc = toolgate(
            "check", "--config", config, "--out", str(run / "out"), "--no-progress",
            env=job_env(gh, run), cwd=work,
        )  # fmt: skip
        elapsed = time.monotonic() - start
        codes[label] = proc.returncode
        outputs = parse_outputs((run / "output").read_text())
        assert outputs["verdict"] == verdict, proc.stdout + proc.stderr
        mark = "⚠️" if code == 0 else "❌"  # no baseline: passed, never green
        assert (
            (run / "summary.md")
            .read_text()
            .startswith(f"# {mark} ToolGate `support-agent` {verdict}")
        )
        assert (run / "out" / "comment.md").exists()
        if label == "failing":
            assert "could not post the ToolGate comment" in proc.stdout
            assert elapsed < 60
    assert codes == {"healthy": code, "failing": code}
    assert len(gh.comments_on(PR)) == 1  # posted by the healthy run only
