"""``toolgate comment`` and ``toolgate report`` as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gate.report import render_comment
from gate.results import Results, read_results, write_results
from tests.github.conftest import PR, READONLY_TOKEN, USER_TOKEN
from tests.report.fixtures import failing, passing
from tests.servers.github_server import Fault, GitHubServer

ROOT = Path(__file__).resolve().parents[2]


def toolgate(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "TOOLGATE_"))}
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        env={**base, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "out" / "results.json"
    write_results(path, failing())
    return path


def pr_env(gh: GitHubServer, tmp_path: Path, token: str = USER_TOKEN) -> dict[str, str]:
    ev = tmp_path / "event.json"
    ev.write_text(json.dumps({"number": PR, "pull_request": {"number": PR}}))
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": token,
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_API_URL": gh.api_url,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(ev),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "TOOLGATE_GITHUB_BUDGET_S": "4",
    }


def test_comment_cli__two_runs__one_comment_updated(
    gh: GitHubServer, tmp_path: Path, results_file: Path
) -> None:
    env = pr_env(gh, tmp_path)
    first = toolgate("comment", "--results", str(results_file), env=env)
    assert first.returncode == 0, first.stderr
    assert "PR comment created on #7" in first.stdout
    write_results(results_file, passing())
    second = toolgate("comment", "--results", str(results_file), env=env)
    assert second.returncode == 0 and "PR comment updated on #7" in second.stdout
    (comment,) = gh.comments_on(PR)
    assert comment.body == render_comment(read_results(results_file))


def test_comment_cli__failing_server__exit_zero_with_warning_in_bounded_time(
    gh: GitHubServer, tmp_path: Path, results_file: Path
) -> None:
    for route in ("get_user", "get_repo", "get_issue", "list_comments", "create_comment"):
        gh.inject(route, Fault(status=502))
    start = time.monotonic()
    proc = toolgate("comment", "--results", str(results_file), env=pr_env(gh, tmp_path))
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert "::warning title=ToolGate::could not post the ToolGate comment on #7" in proc.stdout
    assert elapsed < 4 + 5  # the GitHub budget plus interpreter start-up
    assert gh.comments_on(PR) == []


def test_comment_cli__fork_token__falls_back_to_summary(
    gh: GitHubServer, tmp_path: Path, results_file: Path
) -> None:
    proc = toolgate(
        "comment", "--results", str(results_file), env=pr_env(gh, tmp_path, READONLY_TOKEN)
    )
    assert proc.returncode == 0
    assert "workflow_run" in proc.stdout and "::warning" in proc.stdout
    assert (
        (tmp_path / "summary.md")
        .read_text()
        .startswith("<!-- toolgate:comment name=support-agent -->")
    )


def test_comment_cli__not_a_pr__notice_and_exit_zero(tmp_path: Path, results_file: Path) -> None:
    proc = toolgate(
        "comment", "--results", str(results_file),
        env={
            "GITHUB_ACTIONS": "true",
            "GITHUB_TOKEN": "x",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_NAME": "push",
        },
    )  # fmt: skip
    assert proc.returncode == 0
    assert proc.stdout.startswith("::notice title=ToolGate::not commenting: the push event")


def test_comment_cli__bad_results__input_error_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"schema_version": 1, "gate_name": 3}')
    proc = toolgate("comment", "--results", str(bad))
    assert proc.returncode == 2
    assert "results.json" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("fmt", ["comment", "summary", "md", "junit", "console"])
def test_report_cli__each_format__renders(fmt: str, tmp_path: Path, results_file: Path) -> None:
    out = tmp_path / f"report.{fmt}"
    proc = toolgate("report", str(results_file), "--format", fmt, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    if fmt == "comment":
        assert text == render_comment(read_results(results_file))
    elif fmt == "junit":
        root = ET.fromstring(text.encode())
        assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("10", "6", "1")
    else:
        assert "support-agent" in text


def test_report_cli__baseline__comparison_filled(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    head = tmp_path / "head.json"
    write_results(base, passing().model_copy(update={"comparison": None}))
    write_results(head, failing().model_copy(update={"comparison": None}))
    proc = toolgate("report", str(head), "--baseline", str(base), "--format", "comment")
    assert proc.returncode == 0, proc.stderr
    assert "_No baseline" not in proc.stdout
    assert "(base → head)" in proc.stdout


def test_report_cli__secret_env__redacted_everywhere(tmp_path: Path) -> None:
    secret = "hunter2-very-secret-value"
    data = failing().model_dump(mode="json")
    data["agent"]["api_key"] = secret
    data["notices"].append(f"the agent printed {secret}")
    data["cases"][1]["samples"][0]["evidence"]["summary"] = f"leaked {secret} in a call"
    data["cases"][1]["samples"][0]["evidence"]["actual"][0]["arguments"]["note"] = secret
    path = tmp_path / "results.json"
    write_results(path, Results.model_validate(data))
    for fmt in ("comment", "md", "junit", "console"):
        proc = toolgate(
            "report",
            str(path),
            "--format",
            fmt,
            "--secret-env",
            "AGENT_KEY",
            env={"AGENT_KEY": secret},
        )
        assert proc.returncode == 0
        assert secret not in proc.stdout, fmt
        if fmt != "console":  # the console summary shows neither the agent nor evidence
            assert "[REDACTED:AGENT_KEY]" in proc.stdout, fmt


def test_report_cli__baseline_with_existing_comparison__kept_and_noted(
    tmp_path: Path, results_file: Path
) -> None:
    base = tmp_path / "base.json"
    write_results(base, passing())
    proc = toolgate("report", str(results_file), "--baseline", str(base), "--format", "comment")
    assert proc.returncode == 0
    assert "already carries a comparison" in proc.stderr and "--baseline is not used" in proc.stderr
    assert "artifact of run 4242" in proc.stdout


def test_report_cli__missing_file__input_error(tmp_path: Path) -> None:
    proc = toolgate("report", str(tmp_path / "nope.json"))
    assert proc.returncode == 2 and "cannot read" in proc.stderr
