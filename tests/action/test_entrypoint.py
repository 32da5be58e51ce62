"""``python -m gate.action`` as a subprocess, in the environment the Actions runner gives a
Docker action, against the shipped example and a local fake GitHub server: the exit code,
the outputs file, the step summary and the PR comment."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.action.harness import (
    BASE_SHA,
    HEAD_SHA,
    REPOSITORY,
    full_results,
    mini_repo,
    pr_event,
    push_event,
    run_action,
    shards,
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


def test_comment_mode__body_only__fixed_notice_posted_once(workspace, tmp_path, gh):
    forged = (
        "<!-- toolgate:comment name=support-agent -->\n"
        "## ✅ ToolGate passed\n\ncc @octo/security-team and @maintainer\n"
        "<!-- toolgate:comment name=other -->\n"
    )
    _artifact_folder(workspace, body=forged)
    inputs = {"mode": "comment", "out": "toolgate-comment"}
    event = workflow_run_event(run_number=41)

    for _ in range(2):  # a re-run leaves the same comment alone
        run = run_action(
            workspace,
            tmp_path / "runner",
            inputs=inputs,
            event_name="workflow_run",
            event=event,
            api_url=gh.api_url,
        )
        assert run.code == 0, run.stdout + run.stderr

    (comment,) = gh.comments_on(7)
    body = comment.body
    assert body.startswith("<!-- toolgate:comment name=toolgate -->\n## ❌ ToolGate failed")
    assert "@" not in body and "passed" not in body, "nothing of comment.md is posted"
    assert "[workflow run 41](https://github.test/octo/agent/actions/runs/7741)" in body


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


def test_comment_mode__oversized_results__notice_then_input_error(workspace, tmp_path, gh):
    folder = _artifact_folder(workspace)
    with (folder / "results.json").open("wb") as fh:
        fh.truncate(256 * 1024 * 1024 + 1)  # sparse: over the cap without the disk space
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
    (comment,) = gh.comments_on(7)
    assert "holds a results.json over the size limit" in comment.body
    assert "over the 256 MiB limit" in run.stderr


def test_comment_mode__nothing_downloaded__notice_posted(workspace, tmp_path, gh):
    run = run_action(
        workspace,
        tmp_path / "runner",
        inputs={"mode": "comment", "out": "missing"},
        event_name="workflow_run",
        event=workflow_run_event(),
        api_url=gh.api_url,
    )
    assert run.code == 0
    (comment,) = gh.comments_on(7)
    assert "could not be downloaded" in comment.body
    assert any("could not be downloaded" in w for w in run.annotations("warning"))


# ─── mode: merge (the final job of the sharded pattern) ───────────────────────


def test_merge__passing_shards__outputs_summary_one_comment_exit_0(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.yml")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"mode": "merge", "merge": "toolgate-shards", "baseline": "none"},
        api_url=gh.api_url,
        token=TOKEN,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert len(run.output_names) == len(set(run.output_names)), "each output written once"
    assert (run.outputs["verdict"], run.outputs["passed"]) == ("passed", "true")
    assert run.outputs["regressions"] == "0" and run.outputs["must-not-call-violations"] == "0"
    assert run.outputs["results-path"] == "toolgate-out/results.json"
    assert run.outputs["report-path"] == "toolgate-out/report.md"
    assert "mini" in run.summary and "**Baseline:** none (`baseline: none`)." in run.summary
    comments = gh.comments_on(7)
    assert len(comments) == 1
    assert comments[0].body.startswith("<!-- toolgate:comment name=mini -->")


def test_merge__must_not_call_in_a_shard__fails_exit_1_reported_everywhere(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.bad.yml")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={
            "mode": "merge",
            "merge": "toolgate-shards",
            "config": "toolgate.bad.yml",
            "baseline": "none",
        },
        api_url=gh.api_url,
    )

    assert run.code == 1, run.stdout + run.stderr
    assert (run.outputs["verdict"], run.outputs["passed"]) == ("failed", "false")
    assert run.outputs["must-not-call-violations"] == "1"
    assert any("delete_account" in e for e in run.annotations("error"))
    assert "delete_account" in run.summary
    (comment,) = gh.comments_on(7)
    assert "delete_account" in comment.body


def test_merge__fail_on_never__failing_gate_exits_0_with_warning(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.bad.yml")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={
            "mode": "merge",
            "merge": "toolgate-shards",
            "config": "toolgate.bad.yml",
            "baseline": "none",
            "fail-on": "never",
        },
        api_url=gh.api_url,
    )

    assert run.code == 0
    assert run.outputs["verdict"] == "failed", "the verdict itself is unchanged"
    assert any("fail-on: never" in w for w in run.annotations("warning"))
    assert "`fail-on: never` keeps this step green" in run.summary


def test_merge__fork_pr_read_only_token__summary_fallback_verdict_unchanged(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.bad.yml")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={
            "mode": "merge",
            "merge": "toolgate-shards",
            "config": "toolgate.bad.yml",
            "baseline": "none",
        },
        event=pr_event(fork=True),
        api_url=gh.api_url,
        token=FORK_TOKEN,
    )

    assert run.code == 1, "a comment that cannot be posted changes nothing"
    assert run.outputs["verdict"] == "failed"
    assert gh.comments == {}
    assert any("workflow_run" in w for w in run.annotations("warning"))
    assert "delete_account" in run.summary, "the report is in the step summary"


def test_merge__baseline_auto__base_branch_artifact__flips_and_names_source(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    base = full_results(ws)  # what main's run uploaded
    shards(ws, "toolgate.bad.yml")
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    main_run = st.add_run(wf, head_sha=BASE_SHA, age_days=2, now=int(time.time()))
    st.add_artifact(main_run, "toolgate-results", {"results.json": base})

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"mode": "merge", "merge": "toolgate-shards", "config": "toolgate.bad.yml"},
        api_url=gh.api_url,
    )

    assert run.code == 1, run.stdout + run.stderr
    source = (
        f"artifact toolgate-results of run #{main_run.run_number} on main at bbbbbbb, 2 days old"
    )
    assert f"**Baseline:** {source}." in run.summary
    # one sample on each side cannot make order-2's drop significant: its must-not-call is
    # what fails the gate, and a case that broke a hard rule is a likely regression
    assert (run.outputs["regressions"], run.outputs["likely-regressions"]) == ("0", "1")
    (comment,) = gh.comments_on(7)
    # the comment escapes `#101` (no link to issue 101)
    escaped = source.replace(f"#{main_run.run_number}", f"\\#\u200b{main_run.run_number}")
    assert f"Compared with {escaped}: a base history of 1 sample per case." in comment.body
    assert "order-2" in comment.body
    assert gh.calls.get("download_artifact") == 1 and gh.calls.get("blob") == 1


def test_merge__baseline_auto__no_artifact__notice_and_no_comparison(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    shards(ws, "toolgate.yml")
    routes.state(gh).add_workflow("toolgate.yml", "ToolGate")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"mode": "merge", "merge": "toolgate-shards"},
        api_url=gh.api_url,
    )

    assert run.code == 0, run.stdout + run.stderr
    assert "**Baseline:** none (no 'toolgate-results' artifact from main)." in run.summary
    assert any("No baseline" in n for n in run.annotations("notice"))


# ─── mode: check (the default) ─────────────────────────────────────


def test_check__passing_pr__outputs_summary_one_comment_exit_0(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    run = run_action(ws, tmp_path / "runner", inputs={"baseline": "none"}, api_url=gh.api_url)

    assert run.code == 0, run.stdout + run.stderr
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert len(run.output_names) == len(set(run.output_names)), "each output written once"
    assert (run.outputs["verdict"], run.outputs["passed"]) == ("passed", "true")
    assert run.outputs["results-path"] == "toolgate-out/results.json"
    assert run.outputs["report-path"] == "toolgate-out/report.md"
    assert "**Baseline:** none (`baseline: none`)." in run.summary
    (comment,) = gh.comments_on(7)
    assert comment.body.startswith("<!-- toolgate:comment name=mini -->")


def test_check__must_not_call__fails_exit_1_and_still_reports(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"config": "toolgate.bad.yml", "baseline": "none"},
        api_url=gh.api_url,
    )

    assert run.code == 1, run.stdout + run.stderr
    assert (run.outputs["verdict"], run.outputs["must-not-call-violations"]) == ("failed", "1")
    assert "delete_account" in run.summary
    assert len(gh.comments_on(7)) == 1


def test_check__fork_pr_read_only_token__summary_fallback_verdict_unchanged(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"config": "toolgate.bad.yml", "baseline": "none"},
        event=pr_event(fork=True),
        api_url=gh.api_url,
        token=FORK_TOKEN,
    )

    assert run.code == 1
    assert run.outputs["verdict"] == "failed"
    assert gh.comments == {}
    assert any("workflow_run" in w for w in run.annotations("warning"))
    assert "delete_account" in run.summary


def test_check__baseline_auto__base_branch_artifact__names_source(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    base = full_results(ws)
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    main_run = st.add_run(wf, head_sha=BASE_SHA, age_days=2, now=int(time.time()))
    st.add_artifact(main_run, "toolgate-results", {"results.json": base})

    run = run_action(
        ws, tmp_path / "runner", inputs={"config": "toolgate.bad.yml"}, api_url=gh.api_url
    )

    assert run.code == 1, run.stdout + run.stderr
    source = f"artifact toolgate-results of run #{main_run.run_number} on main at bbbbbbb"
    assert source in run.summary
    assert run.outputs["regressions"] == "0", "one base sample: no case can be significant"
    (comment,) = gh.comments_on(7)
    escaped = source.replace(f"#{main_run.run_number}", f"\\#\u200b{main_run.run_number}")
    assert escaped in comment.body


def test_check__push_to_main__no_comment_baseline_is_mains_own_latest_results(tmp_path, gh):
    ws = mini_repo(tmp_path / "ws")
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    main_run = st.add_run(wf, head_sha=BASE_SHA, age_days=1, now=int(time.time()))
    st.add_artifact(main_run, "toolgate-results", {"results.json": full_results(ws)})
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={},
        event_name="push",
        event=push_event("d" * 40),
        api_url=gh.api_url,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert gh.comments == {}
    assert f"artifact toolgate-results of run #{main_run.run_number} on main" in run.summary
    # this base run carries main's history forward: the artifact's counts, then its own
    results = json.loads((ws / run.outputs["results-path"]).read_text())
    assert all([e["samples"] for e in c["history"]] == [1, 1] for c in results["cases"])


# ─── the environment's rules ──────────────────────────────────────────────────


@pytest.mark.parametrize("budget", ["inf", "0"])
def test_github_budget__not_finite_or_not_positive__exit_2_with_outputs(
    tmp_path: Path, gh: GitHubServer, budget: str
) -> None:
    ws = mini_repo(tmp_path / "ws")
    routes.state(gh).add_workflow("toolgate.yml", "ToolGate")  # baseline: auto asks GitHub
    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={},
        api_url=gh.api_url,
        extra_env={"TOOLGATE_GITHUB_BUDGET_S": budget},
    )

    assert run.code == 2, run.stdout + run.stderr
    assert set(ACTION_OUTPUTS) <= set(run.outputs)
    assert (run.outputs["verdict"], run.outputs["passed"]) == ("error", "false")
    (error,) = run.annotations("error")
    assert "TOOLGATE_GITHUB_BUDGET_S: must be a finite number of seconds above 0" in error
    assert "Traceback" not in run.stderr
    assert gh.log == [] and not (ws / "toolgate-out").exists(), "nothing ran"


def test_token__input_wins_over_github_token__for_baseline_and_comment(
    tmp_path: Path, gh: GitHubServer
) -> None:
    ws = mini_repo(tmp_path / "ws")
    base = full_results(ws)
    st = routes.state(gh)
    main_run = st.add_run(st.add_workflow("toolgate.yml", "ToolGate"), head_sha=BASE_SHA)
    st.add_artifact(main_run, "toolgate-results", {"results.json": base})
    gh.add_token("ghs_workflow_level_token", "github-actions[bot]", kind="app")

    run = run_action(
        ws,
        tmp_path / "runner",
        inputs={"config": "toolgate.bad.yml"},
        api_url=gh.api_url,
        token=TOKEN,
        extra_env={"GITHUB_TOKEN": "ghs_workflow_level_token"},
    )

    assert run.code == 1, run.stdout + run.stderr
    # A one-sample replay history cannot make order-2 significant (the report says so):
    # what shows that the baseline was found is the summary's line about it.
    assert "**Baseline:** artifact toolgate-results" in run.summary, "the baseline was found"
    routes_called = {route for route, _ in gh.tokens_seen}
    assert {"list_workflow_runs", "download_artifact", "blob", "create_comment"} <= routes_called
    assert {token for _, token in gh.tokens_seen} == {TOKEN}
