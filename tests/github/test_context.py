"""GitHubContext.from_environ (the run and the event) and the pure comment plan."""

from __future__ import annotations

import json
from pathlib import Path

from gate.github.activity import PostComment, SkipComment, plan_comment
from gate.github.context import GitHubContext, PullRequestEvent, WorkflowRunEvent


def event(tmp_path: Path, payload: object) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


def pr_payload(number: int = 12) -> dict[str, object]:
    return {
        "number": number,
        "pull_request": {"number": number, "base": {"sha": "b" * 40}, "head": {"sha": "h" * 40}},
    }


def env(tmp_path: Path, name: str, payload: object, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": "ghs_secretsecretsecretsecretsecret",
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": event(tmp_path, payload),
        **extra,
    }


def test_context__pull_request__number_and_shas_from_event(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(env(tmp_path, "pull_request", pr_payload()))
    assert ctx.event == PullRequestEvent(12, None, "b" * 40, "h" * 40)
    assert ctx.pr_number == 12 and ctx.workflow_run is None
    assert plan_comment(ctx) == PostComment("octo/agent", 12)


def test_context__pull_request_target__commented_too(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(env(tmp_path, "pull_request_target", pr_payload(3)))
    assert plan_comment(ctx) == PostComment("octo/agent", 3)


def test_context__push_event__comment_skipped_with_notice(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(env(tmp_path, "push", {"ref": "refs/heads/main"}))
    plan = plan_comment(ctx)
    assert isinstance(plan, SkipComment) and plan.level == "notice"
    assert "push event is not a pull request" in plan.reason


def test_context__workflow_run_with_pr_override__head_sha_required(tmp_path: Path) -> None:
    payload = {
        "workflow_run": {
            "head_sha": "c" * 40,
            "pull_requests": [],
            "run_number": 41,
            "html_url": "https://github.test/octo/agent/actions/runs/7741",
            "conclusion": "failure",
        }
    }
    ctx = GitHubContext.from_environ(env(tmp_path, "workflow_run", payload))
    assert ctx.event == WorkflowRunEvent(
        "c" * 40, 41, "https://github.test/octo/agent/actions/runs/7741", "failure"
    )
    assert plan_comment(ctx, pr_override=5) == PostComment("octo/agent", 5, "c" * 40)
    assert isinstance(plan_comment(ctx), SkipComment)


def test_context__token__hidden_from_repr(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(env(tmp_path, "pull_request", pr_payload()))
    assert "ghs_" not in repr(ctx) and ctx.token is not None


def test_context__enterprise_api_url__honoured(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(
        env(
            tmp_path,
            "pull_request",
            pr_payload(),
            GITHUB_API_URL="https://ghe.example.com/api/v3/",
            GITHUB_SERVER_URL="https://ghe.example.com",
            GITHUB_RUN_ID="99",
        )
    )
    assert ctx.api_url == "https://ghe.example.com/api/v3"
    assert ctx.run_url == "https://ghe.example.com/octo/agent/actions/runs/99"


def test_context__unreadable_event__problem_recorded_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    ctx = GitHubContext.from_environ(
        {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(bad)}
    )
    assert ctx.pr_number is None and not ctx.problems
    assert any("cannot read the event payload" in w for w in ctx.warnings)


def test_context__pull_request_without_number__warning_no_pr(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ(env(tmp_path, "pull_request", {"pull_request": {}}))
    assert ctx.event is None and ctx.warnings and not ctx.problems


def test_context__no_token__skip_is_a_warning(tmp_path: Path) -> None:
    e = env(tmp_path, "pull_request", pr_payload())
    del e["GITHUB_TOKEN"]
    plan = plan_comment(GitHubContext.from_environ(e))
    assert isinstance(plan, SkipComment) and plan.level == "warning"


def test_context__bad_budget__an_input_error_naming_the_variable(tmp_path: Path) -> None:
    ctx = GitHubContext.from_environ({"TOOLGATE_GITHUB_BUDGET_S": "soon"})
    assert [p.field for p in ctx.problems] == ["TOOLGATE_GITHUB_BUDGET_S"]


def test_context__disabled__skipped_naming_the_setting() -> None:
    plan = plan_comment(GitHubContext(), disabled_by="reporting.comment is false")
    assert plan == SkipComment("not commenting: reporting.comment is false")


def test_context__run_ids__whole_numbers_else_unknown() -> None:
    ctx = GitHubContext.from_environ({"GITHUB_RUN_ID": "991", "GITHUB_RUN_ATTEMPT": "x"})
    assert (ctx.run_id, ctx.run_attempt) == (991, None)


def test_context__merge_group__queue_base_and_group_commit(tmp_path: Path) -> None:
    import json

    from gate.github.activity import AutoBaseline, plan_baseline
    from gate.github.artifacts import PullRequestRef
    from gate.github.context import MergeGroupEvent
    from tests.action.harness import merge_group_event

    ev = tmp_path / "event.json"
    ev.write_text(json.dumps(merge_group_event("b" * 40, "c" * 40)))
    env = {
        "GITHUB_EVENT_NAME": "merge_group",
        "GITHUB_EVENT_PATH": str(ev),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_TOKEN": "t",
    }
    ctx = GitHubContext.from_environ(env)
    assert ctx.merge_group == MergeGroupEvent("main", "b" * 40, "c" * 40)
    assert ctx.warnings == ()
    plan = plan_baseline(ctx, ctx.inputs)
    assert plan == AutoBaseline(PullRequestRef(None, "main", "b" * 40, "c" * 40), True)
