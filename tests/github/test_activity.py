"""``plan(ctx, inputs)``: what one invocation does, from the context alone — one row per
situation (mode × event × token), the whole activity compared."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gate.github.activity import (
    COMMENT_INPUT_OFF,
    Activity,
    AutoBaseline,
    Check,
    FileBaseline,
    Merge,
    NoBaseline,
    PostComment,
    RelayComment,
    RelayTarget,
    RunShard,
    SkipComment,
    plan,
)
from gate.github.artifacts import PullRequestRef
from gate.github.context import (
    ActionInputs,
    BaselineInput,
    BaselineKind,
    Event,
    GitHubContext,
    Mode,
    PullRequestEvent,
    WorkflowRunEvent,
)
from gate.model import Shard

REPO = "octo/agent"
PR = PullRequestEvent(7, "main", "b" * 40, "c" * 40)
PR_WITHOUT_BASE = PullRequestEvent(7, None, None, None)
RUN = WorkflowRunEvent("c" * 40, 41, "https://github.test/octo/agent/actions/runs/7741", "failure")
REF = PullRequestRef(7, "main", "b" * 40, "c" * 40)
NOT_A_PR = (
    "not commenting: the push event is not a pull request (comments are posted for "
    "pull_request and pull_request_target; for workflow_run use `mode: comment`, or "
    "`toolgate comment --pr`)"
)


def ctx(event_name: str, event: Event, *, token: str | None = "ghs_t") -> GitHubContext:
    return GitHubContext(
        in_actions=True, token=token, repository=REPO, event_name=event_name, event=event
    )


def inputs(**kw: object) -> ActionInputs:
    return replace(ActionInputs(), **kw)  # type: ignore[arg-type]


def check(**kw: object) -> Check:
    base: dict[str, object] = {
        "config": "toolgate.yml",
        "out": None,
        "samples": None,
        "shard": None,
        "baseline": AutoBaseline(REF, searchable=True),
        "comment": PostComment(REPO, 7),
    }
    return Check(**{**base, **kw})  # type: ignore[arg-type]


TABLE: list[tuple[str, GitHubContext, ActionInputs, Activity]] = [
    ("check__pull_request__auto_baseline_and_comment", ctx("pull_request", PR), inputs(), check()),
    (
        "check__pull_request_target__same_as_pull_request",
        ctx("pull_request_target", PR),
        inputs(),
        check(),
    ),
    (
        "check__push__no_pr_for_the_baseline_no_comment",
        ctx("push", None),
        inputs(),
        check(baseline=AutoBaseline(None, searchable=True), comment=SkipComment(NOT_A_PR)),
    ),
    (
        "check__push_to_a_branch__a_base_run_extending_its_own_latest_results",
        replace(ctx("push", None), ref="refs/heads/main", sha="d" * 40),
        inputs(),
        check(
            baseline=AutoBaseline(PullRequestRef(0, "main", "d" * 40, "d" * 40), searchable=True),
            comment=SkipComment(NOT_A_PR),
            base_run=True,
        ),
    ),
    (
        "check__push_of_a_tag__no_branch_no_baseline",
        replace(ctx("push", None), ref="refs/tags/v1", sha="d" * 40),
        inputs(),
        check(baseline=AutoBaseline(None, searchable=True), comment=SkipComment(NOT_A_PR)),
    ),
    (
        "check__no_token__no_search_and_a_warning",
        ctx("pull_request", PR, token=None),
        inputs(),
        check(
            baseline=AutoBaseline(REF, searchable=False),
            comment=SkipComment(
                "not commenting: no token (set the action's github-token input, or GITHUB_TOKEN)",
                "warning",
            ),
        ),
    ),
    (
        "check__pr_payload_without_base__auto_without_pr",
        ctx("pull_request", PR_WITHOUT_BASE),
        inputs(),
        check(baseline=AutoBaseline(None, searchable=True)),
    ),
    (
        "check__comment_false__skipped_naming_the_input",
        ctx("pull_request", PR),
        inputs(comment=False),
        check(comment=SkipComment(f"not commenting: {COMMENT_INPUT_OFF}")),
    ),
    (
        "check__baseline_none_and_file",
        ctx("pull_request", PR),
        inputs(baseline=BaselineInput(BaselineKind.NONE), samples=3, shard=Shard(2, 4), out="o"),
        check(baseline=NoBaseline(), samples=3, shard=Shard(2, 4), out="o"),
    ),
    (
        "check__baseline_file__kept_as_given",
        ctx("pull_request", PR),
        inputs(baseline=BaselineInput(BaselineKind.FILE, "base/results.json")),
        check(baseline=FileBaseline("base/results.json")),
    ),
    (
        "run__any_event__one_shard_no_baseline_no_comment",
        ctx("pull_request", PR),
        inputs(mode=Mode.RUN, shard=Shard(1, 2), samples=2, out="toolgate-out/shard-1"),
        RunShard("toolgate.yml", "toolgate-out/shard-1", 2, Shard(1, 2)),
    ),
    (
        "merge__pull_request__auto_baseline_and_comment",
        ctx("pull_request", PR),
        inputs(mode=Mode.MERGE, merge="shards", config="gate.yml"),
        Merge("gate.yml", None, "shards", AutoBaseline(REF, True), PostComment(REPO, 7)),
    ),
    (
        "merge__push__no_comment",
        ctx("push", None),
        inputs(mode=Mode.MERGE, merge="shards", baseline=BaselineInput(BaselineKind.NONE)),
        Merge("toolgate.yml", None, "shards", NoBaseline(), SkipComment(NOT_A_PR)),
    ),
    (
        "comment__workflow_run__relays_for_the_triggering_run",
        ctx("workflow_run", RUN),
        inputs(mode=Mode.COMMENT, out="toolgate-pr"),
        RelayComment(
            "toolgate-pr",
            RelayTarget(
                REPO, "c" * 40, 41, "https://github.test/octo/agent/actions/runs/7741", "failure"
            ),
        ),
    ),
    (
        "comment__default_folder__toolgate_out",
        ctx("workflow_run", RUN),
        inputs(mode=Mode.COMMENT),
        RelayComment(
            "toolgate-out",
            RelayTarget(
                REPO, "c" * 40, 41, "https://github.test/octo/agent/actions/runs/7741", "failure"
            ),
        ),
    ),
    (
        "comment__pull_request_event__nothing_to_find_the_pr_by",
        ctx("pull_request", PR),
        inputs(mode=Mode.COMMENT),
        RelayComment(
            "toolgate-out",
            SkipComment(
                "`mode: comment` runs on workflow_run events (this is 'pull_request'): there "
                "is no triggering run's head SHA to find the PR by; nothing posted."
            ),
        ),
    ),
    (
        "comment__no_token__warning",
        ctx("workflow_run", RUN, token=None),
        inputs(mode=Mode.COMMENT),
        RelayComment(
            "toolgate-out",
            SkipComment(
                "`mode: comment` needs a token and GITHUB_REPOSITORY; nothing posted.", "warning"
            ),
        ),
    ),
    (
        "comment__comment_false__skipped_naming_the_input",
        ctx("workflow_run", RUN),
        inputs(mode=Mode.COMMENT, comment=False),
        RelayComment("toolgate-out", SkipComment(f"not commenting: {COMMENT_INPUT_OFF}")),
    ),
]


@pytest.mark.parametrize(
    ("situation", "context", "given", "expected"), TABLE, ids=[t[0] for t in TABLE]
)
def test_plan__situation__activity(
    situation: str, context: GitHubContext, given: ActionInputs, expected: Activity
) -> None:
    assert plan(context, given) == expected


def test_plan__every_mode__has_a_row() -> None:
    assert {row[2].mode for row in TABLE} == set(Mode)


def test_plan__is_pure__same_answer_twice() -> None:
    c = ctx("pull_request", PR)
    assert plan(c, inputs()) == plan(c, inputs())
