"""End of a run: outputs, step summary, annotations and the comment — a GitHub failure
is a warning and changes nothing else."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from gate.github.activity import plan_comment
from gate.github.client import GitHubClient, RetryPolicy
from gate.github.context import GitHubContext
from gate.github.publish import FORK_HINT, post_comment, publish
from gate.report import Redactor, marker, render_comment
from tests.github.conftest import APP_TOKEN, PR, READONLY_TOKEN, USER_TOKEN
from tests.github.test_workflow import parse_outputs
from tests.report.fixtures import failing
from tests.servers.github_server import Fault, GitHubServer


def actions_env(gh: GitHubServer, tmp_path: Path, token: str = USER_TOKEN) -> dict[str, str]:
    ev = tmp_path / "event.json"
    ev.write_text(json.dumps({"number": PR, "pull_request": {"number": PR}}))
    (tmp_path / "summary.md").write_text("")
    (tmp_path / "output").write_text("")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": token,
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_API_URL": gh.api_url,
        "GITHUB_SERVER_URL": "https://github.test",
        "GITHUB_RUN_ID": "4242",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(ev),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


def fast(ctx: GitHubContext) -> GitHubClient:
    assert ctx.token
    policy = RetryPolicy(budget_s=3.0, request_timeout_s=1, backoff_s=0.05, backoff_max_s=0.2)
    return GitHubClient(token=ctx.token, api_url=ctx.api_url, policy=policy, write_interval_s=0)


def test_publish__healthy_server__everything_written_and_comment_posted(
    gh: GitHubServer, tmp_path: Path
) -> None:
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path))
    out = io.StringIO()
    report = publish(
        failing(),
        ctx,
        comment=plan_comment(ctx),
        redactor=Redactor(),
        results_path="out/results.json",
        client_factory=fast,
        stream=out,
    )
    assert report.comment is not None and report.comment.status == "created"
    outputs = parse_outputs((tmp_path / "output").read_text())
    assert outputs["verdict"] == "failed" and outputs["must-not-call-violations"] == "3"
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# ❌ ToolGate `support-agent` failed")
    log = out.getvalue()
    assert log.index("::error file=evals/support.jsonl,line=3") < log.index("PR comment created")
    (comment,) = gh.comments_on(PR)
    assert comment.body.startswith(marker("support-agent"))
    assert comment.body == render_comment(
        failing(),
        redactor=Redactor(),
        report_url="https://github.test/octo/agent/actions/runs/4242",
    )


def test_publish__failing_server__verdict_outputs_unchanged_and_warning(
    gh: GitHubServer, tmp_path: Path
) -> None:
    for route in ("get_repo", "get_issue", "list_comments", "create_comment"):
        gh.inject(route, Fault(status=500))
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path))
    results = failing()
    before = results.model_dump()
    out = io.StringIO()
    start = time.monotonic()
    report = publish(
        results,
        ctx,
        comment=plan_comment(ctx),
        redactor=Redactor(),
        results_path="r.json",
        client_factory=fast,
        stream=out,
    )
    assert time.monotonic() - start < 3.0 + 1.0
    assert results.model_dump() == before
    assert report.comment is not None and report.comment.status == "failed"
    assert "::warning title=ToolGate::could not post the ToolGate comment" in out.getvalue()
    assert "The verdict and the exit code are unaffected" in out.getvalue()
    assert parse_outputs((tmp_path / "output").read_text())["verdict"] == "failed"
    assert (tmp_path / "summary.md").read_text().startswith("# ❌ ToolGate")
    assert gh.comments_on(PR) == []


def test_publish__rate_limited_for_an_hour__gives_up_at_once(
    gh: GitHubServer, tmp_path: Path
) -> None:
    gh.inject("create_comment", Fault.secondary_rate_limit(retry_after=3600))
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path))
    start = time.monotonic()
    report = publish(
        failing(),
        ctx,
        comment=plan_comment(ctx),
        redactor=Redactor(),
        results_path="r.json",
        client_factory=fast,
        stream=io.StringIO(),
    )
    assert time.monotonic() - start < 2.0
    assert report.comment is not None and report.comment.status == "failed"
    assert "secondary rate limit" in report.comment.message


def test_post_comment__fork_pr_read_only_token__falls_back_to_summary(
    gh: GitHubServer, tmp_path: Path
) -> None:
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path, READONLY_TOKEN))
    outcome = post_comment(
        failing(), ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast
    )
    assert outcome.status == "fallback" and outcome.level == "warning"
    assert FORK_HINT in outcome.message and "workflow_run" in outcome.message
    assert (tmp_path / "summary.md").read_text().startswith(marker("support-agent"))
    assert gh.comments_on(PR) == []


def test_post_comment__installation_token__comment_updated_in_place(
    gh: GitHubServer, tmp_path: Path
) -> None:
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path, APP_TOKEN))
    first = post_comment(
        failing(), ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast
    )
    data = failing().model_dump(mode="json")
    data["hard_failures"][0]["message"] = "second run"  # shown in the comment's table
    from gate.results import Results

    second = post_comment(
        Results.model_validate(data),
        ctx,
        plan_comment(ctx),
        redactor=Redactor(),
        client_factory=fast,
    )
    assert (first.status, second.status) == ("created", "updated")
    (comment,) = gh.comments_on(PR)
    assert "second run" in comment.body


def test_post_comment__push_event__skipped_with_notice(gh: GitHubServer, tmp_path: Path) -> None:
    env = actions_env(gh, tmp_path)
    env["GITHUB_EVENT_NAME"] = "push"
    ctx = GitHubContext.from_environ(env)
    outcome = post_comment(
        failing(), ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast
    )
    assert outcome.status == "skipped" and outcome.level == "notice"
    assert gh.log == []


def test_post_comment__garbage_from_a_proxy__warning_not_a_crash(
    gh: GitHubServer, tmp_path: Path
) -> None:
    gh.inject("get_repo", Fault(status=200, body=b"{<html>proxy error"))
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path))
    outcome = post_comment(
        failing(), ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast
    )
    assert outcome.status == "failed" and outcome.level == "warning"
    assert "unexpected" in outcome.message
    assert "verdict and the exit code are unaffected" in outcome.message


def test_post_comment__rerun_with_other_timing__comment_not_edited(
    gh: GitHubServer, tmp_path: Path
) -> None:
    ctx = GitHubContext.from_environ(actions_env(gh, tmp_path))
    slow = failing().model_copy(update={"timing": {"wall_s": 812.5, "latency_ms": {"p95": 9.0}}})
    first = post_comment(
        failing(), ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast
    )
    second = post_comment(slow, ctx, plan_comment(ctx), redactor=Redactor(), client_factory=fast)
    assert (first.status, second.status) == ("created", "unchanged")
    assert gh.calls.get("edit_comment", 0) == 0
    assert "wall_s" not in gh.comments_on(PR)[0].body


def test_post_comment__workflow_run_with_pr__heading_from_the_runs_conclusion(
    gh: GitHubServer, tmp_path: Path
) -> None:
    """``toolgate comment --pr N`` on a workflow_run event posts another run's results:
    the heading says what that run's check concluded, the results' claim only a claim."""
    env = actions_env(gh, tmp_path)
    ev = tmp_path / "wr.json"
    ev.write_text(
        json.dumps(
            {
                "workflow_run": {
                    "head_sha": "h" * 40,
                    "run_number": 41,
                    "conclusion": "success",
                    "html_url": "https://github.test/octo/agent/actions/runs/77",
                }
            }
        )
    )
    env |= {"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(ev)}
    ctx = GitHubContext.from_environ(env)
    done = post_comment(
        failing(), ctx, plan_comment(ctx, pr_override=PR), redactor=Redactor(), client_factory=fast
    )
    assert done.status == "created", done.message
    body = gh.comments_on(PR)[0].body
    assert body.splitlines()[1].startswith("## ✅ ToolGate `support-agent` passed — the check of")
    assert "says **failed**, but its check concluded `success`" in body
