"""``python -m gate.action`` as a subprocess, in the environment the Actions runner gives a
Docker action, against the shipped example and a local fake GitHub server: the exit code,
the outputs file, the step summary and the PR comment."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.action.harness import (
    BASE_SHA,
    HEAD_SHA,
    REPOSITORY,
    pr_event,
    push_event,
    run_action,
    workflow_run_event,
)
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import GitHubServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support-agent"
TOKEN = "ghs_action_token"
FORK_TOKEN = "ghs_fork_read_only"
ACTION_OUTPUTS = tuple(YAML(typ="safe").load((ROOT / "action.yml").read_text("utf-8"))["outputs"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checked-out repository holding the example under examples/support-agent."""
    ws = tmp_path / "workspace"
    shutil.copytree(
        EXAMPLE,
        ws / "examples" / "support-agent",
        ignore=shutil.ignore_patterns("toolgate-out", "__pycache__", ".toolgate*"),
    )
    return ws


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_token(FORK_TOKEN, "github-actions[bot]", kind="app", read_only=True)
    server.add_pull(7, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    with server:
        yield server


@pytest.fixture(scope="module")
def example_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results.json of the example agent (toolgate run + score), made once."""
    out = tmp_path_factory.mktemp("example-results")
    for argv in (
        ["run", "--config", "toolgate.yml", "--out", str(out)],
        ["score", "--config", "toolgate.yml", "--runs", str(out / "runs.jsonl"), "--out", str(out)],
    ):
        subprocess.run(
            [sys.executable, "-m", "gate", *argv], cwd=EXAMPLE, check=True, capture_output=True
        )
    return out / "results.json"


# ─── mode: run (one shard, no gate) ───────────────────────────────────────────


def test_run_mode__one_shard__writes_results_outputs_and_summary(workspace, tmp_path):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={
            "mode": "run",
            "shard": "1/2",
            "working-directory": "examples/support-agent",
            "out": "toolgate-out/shard-1",
        },
    )

    assert run.code == 0, run.stderr
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert run.outputs["verdict"] == "not-gated"
    assert run.outputs["passed"] == "false"
    rel = "examples/support-agent/toolgate-out/shard-1/results.json"
    assert run.outputs["results-path"] == rel
    assert (workspace / rel).is_file()
    assert '"index": 1' in (workspace / rel).read_text("utf-8")  # the shard is recorded
    assert run.summary.strip(), "the shard's report belongs in the step summary"


def test_every_output__written_even_when_input_is_bad(workspace, tmp_path):
    run = run_action(workspace, tmp_path / "runner", inputs={"fail-on": "sometimes"})

    assert run.code == 2
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert run.outputs["verdict"] == "error" and run.outputs["passed"] == "false"
    errors = run.annotations("error")
    assert errors and "fail-on: must be `gate` or `never`, not 'sometimes'" in errors[0]


def test_missing_config__input_error_exit_2(workspace, tmp_path):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"working-directory": "examples/support-agent", "config": "nope.yml"},
    )
    assert run.code == 2
    assert run.outputs["verdict"] == "error"
    assert "nope.yml" in run.stderr


def test_working_directory_outside_workspace__refused(workspace, tmp_path):
    run = run_action(workspace, tmp_path / "runner", inputs={"working-directory": "../.."})
    assert run.code == 2
    assert any("leaves the workspace" in a for a in run.annotations("error"))


# ─── mode: comment (the fork-PR workflow_run pattern) ─────────────────────────


def _artifact_folder(
    workspace: Path, *, results: Path | None = None, body: str | None = None
) -> Path:
    folder = workspace / "toolgate-comment"
    folder.mkdir(parents=True)
    if results is not None:
        shutil.copy(results, folder / "results.json")
    if body is not None:
        (folder / "comment.md").write_text(body, "utf-8")
    # What a malicious artifact might add: a PR number of its choosing. Never read.
    (folder / "pr_number.txt").write_text("1\n", "utf-8")
    return folder


def test_comment_mode__results_artifact__renders_and_posts_on_pr_found_by_head_sha(
    workspace, tmp_path, gh, example_results
):
    gh.add_pull(1, base_sha=BASE_SHA, head_sha="1" * 40)  # the number the artifact claims
    _artifact_folder(workspace, results=example_results)

    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "toolgate-comment"},
        event_name="workflow_run",
        event=workflow_run_event(),
        api_url=gh.api_url,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["verdict"] == "not-gated"
    assert gh.comments_on(1) == []
    comments = gh.comments_on(7)
    assert len(comments) == 1
    assert comments[0].body.startswith("<!-- toolgate:comment name=support-agent -->")
    assert comments[0].login == "github-actions[bot]"
    assert gh.calls.get("commit_pulls") == 1


def test_comment_mode__commit_pulls_empty__falls_back_to_open_pulls(
    workspace, tmp_path, gh, example_results
):
    routes.state(gh).commit_pulls_empty = True
    _artifact_folder(workspace, results=example_results)

    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "toolgate-comment"},
        event_name="workflow_run",
        event=workflow_run_event(),
        api_url=gh.api_url,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert len(gh.comments_on(7)) == 1
    assert gh.calls.get("list_pulls") == 1


def test_comment_mode__body_only__sanitised_and_posted_once(workspace, tmp_path, gh):
    forged = (
        "<!-- toolgate:comment name=support-agent -->\n"
        "## ✅ ToolGate passed\n\ncc @octo/security-team and @maintainer\n"
        "<!-- toolgate:comment name=other -->\n"
    )
    _artifact_folder(workspace, body=forged)
    inputs = {"mode": "comment", "out": "toolgate-comment"}
    event = workflow_run_event(run_number=41)

    for _ in range(2):  # a re-run edits the same comment
        run = run_action(
            workspace,
            tmp_path / "runner",
            inputs=inputs,
            event_name="workflow_run",
            event=event,
            api_url=gh.api_url,
        )
        assert run.code == 0, run.stdout + run.stderr

    comments = gh.comments_on(7)
    assert len(comments) == 1
    body = comments[0].body
    assert body.startswith("<!-- toolgate:comment name=support-agent -->\n")
    assert body.count("toolgate:comment") == 1, "the artifact's own markers are dropped"
    assert "@\u200bocto/security-team" in body and "@\u200bmaintainer" in body
    assert "@octo" not in body and "@maintainer" not in body
    assert "run [#41](https://github.test/octo/agent/actions/runs/7741)" in body


def test_comment_mode__no_open_pr_with_that_head__posts_nothing(workspace, tmp_path, gh):
    _artifact_folder(workspace, body="hello")
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "toolgate-comment"},
        event_name="workflow_run",
        event=workflow_run_event(head_sha="9" * 40),
        api_url=gh.api_url,
    )
    assert run.code == 0
    assert gh.comments == {}
    assert any("No open PR has head 9999999" in n for n in run.annotations("notice"))


def test_comment_mode__oversized_body__refused(workspace, tmp_path, gh):
    _artifact_folder(workspace, body="x" * (300 * 1024))
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "toolgate-comment"},
        event_name="workflow_run",
        event=workflow_run_event(),
        api_url=gh.api_url,
    )
    assert run.code == 2
    assert run.outputs["verdict"] == "error"
    assert gh.comments == {}
    assert "over 256 KiB; refused" in run.stderr


def test_comment_mode__nothing_downloaded__input_error(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "missing"},
        event_name="workflow_run",
        event=workflow_run_event(),
        api_url=gh.api_url,
    )
    assert run.code == 2
    assert any("neither results.json nor comment.md" in e for e in run.annotations("error"))


# ─── mode: check (needs `toolgate check`) ─────────────────────────────────────


def _check_available() -> bool:
    from gate.action import _cli_accepts

    return _cli_accepts("check", "--config")


needs_check = pytest.mark.skipif(
    not _check_available(), reason="`toolgate check` is not available in this build yet"
)


@needs_check
def test_check__passing_pr__outputs_summary_one_comment_exit_0(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"working-directory": "examples/support-agent", "baseline": "none"},
        api_url=gh.api_url,
        token=TOKEN,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert run.outputs["verdict"] == "passed" and run.outputs["passed"] == "true"
    assert run.outputs["regressions"] == "0"
    assert run.outputs["must-not-call-violations"] == "0"
    assert run.outputs["results-path"] == "examples/support-agent/toolgate-out/results.json"
    assert run.outputs["report-path"] == "examples/support-agent/toolgate-out/report.md"
    assert "support-agent" in run.summary
    assert "**Baseline:** none (`baseline: none`)." in run.summary
    comments = gh.comments_on(7)
    assert len(comments) == 1
    assert comments[0].body.startswith("<!-- toolgate:comment name=support-agent -->")


@needs_check
def test_check__regressed_agent__fails_with_exit_1_and_still_reports(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={
            "working-directory": "examples/support-agent",
            "config": "toolgate.regressed.yml",
            "baseline": "none",
        },
        api_url=gh.api_url,
    )

    assert run.code == 1, run.stdout + run.stderr
    assert run.outputs["verdict"] == "failed" and run.outputs["passed"] == "false"
    assert run.summary.strip()
    assert len(gh.comments_on(7)) == 1
    assert run.annotations("error"), "the failures are annotated"


@needs_check
def test_check__fail_on_never__failing_gate_exits_0_with_warning(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={
            "working-directory": "examples/support-agent",
            "config": "toolgate.regressed.yml",
            "baseline": "none",
            "fail-on": "never",
        },
        api_url=gh.api_url,
    )

    assert run.code == 0
    assert run.outputs["verdict"] == "failed", "the verdict itself is unchanged"
    assert any("fail-on: never" in w for w in run.annotations("warning"))
    assert "`fail-on: never` keeps this step green" in run.summary


@needs_check
def test_check__fork_pr_read_only_token__summary_fallback_verdict_unchanged(
    workspace, tmp_path, gh
):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"working-directory": "examples/support-agent", "baseline": "none"},
        event=pr_event(fork=True),
        api_url=gh.api_url,
        token=FORK_TOKEN,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["verdict"] == "passed"
    assert gh.comments == {}
    assert any("workflow_run" in w for w in run.annotations("warning"))
    assert "support-agent" in run.summary


@needs_check
def test_check__baseline_auto__uses_base_branch_artifact_and_names_it(
    workspace, tmp_path, gh, example_results
):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    run_on_main = st.add_run(wf, head_sha=BASE_SHA, age_days=2, now=_now())
    st.add_artifact(run_on_main, "toolgate-results", {"results.json": example_results.read_bytes()})

    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"working-directory": "examples/support-agent"},
        api_url=gh.api_url,
    )

    assert run.code == 0, run.stdout + run.stderr
    source = f"artifact toolgate-results of run #{run_on_main.run_number} on main at bbbbbbb"
    assert source in run.summary
    assert gh.calls.get("blob") == 1
    assert source in gh.comments_on(7)[0].body


@needs_check
def test_check__push_to_main__no_pr_no_comment_no_baseline(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"working-directory": "examples/support-agent"},
        event_name="push",
        event=push_event(),
        api_url=gh.api_url,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert gh.comments == {}
    assert "none (not a pull request)" in run.summary


def _now() -> int:
    import time

    return int(time.time())
