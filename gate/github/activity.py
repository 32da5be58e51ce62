"""What this invocation does, decided from the context alone: :func:`plan` and
:func:`plan_comment` are pure (no I/O, no clock), so every branch is a row of a table test.

:func:`plan` maps the Action's inputs and the event to one :data:`Activity`, one class per
``mode`` (docs/action.md says what each does): :class:`Check`, :class:`RunShard`,
:class:`Merge`, :class:`RelayComment`. A ``check`` on a push, schedule or manual dispatch
of a branch is a base run that seeds the histories.

:func:`plan_comment` decides whether and where the comment goes for a run's own results
(``toolgate check``, ``toolgate comment`` and the Action's ``check`` and ``merge``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from gate.github.artifacts import PullRequestRef
from gate.github.context import (
    PR_EVENTS,
    ActionInputs,
    BaselineKind,
    GitHubContext,
    Mode,
)
from gate.model import Shard

COMMENT_INPUT_OFF = "the `comment` input is false"
DEFAULT_OUT = "toolgate-out"
"""Where ``mode: comment`` looks for the earlier run's output when ``out`` is empty."""

# ─── the comment ──────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class PostComment:
    """Upsert the sticky comment on this pull request."""

    repository: str
    pr_number: int
    expected_head_sha: str | None = None
    """For ``workflow_run``: the PR's head must be this commit, or the number (found
    for, or passed by, an earlier run) is not trusted."""


@dataclass(frozen=True, slots=True)
class SkipComment:
    """No comment, and why."""

    reason: str
    level: Literal["notice", "warning"] = "notice"


CommentPlan = PostComment | SkipComment


def plan_comment(
    ctx: GitHubContext, *, disabled_by: str | None = None, pr_override: int | None = None
) -> CommentPlan:
    """Whether and where to comment. ``disabled_by`` says which setting turned commenting
    off (``"the `comment` input is false"``, ``"reporting.comment is false"``,
    ``"--no-comment was given"``); ``pr_override`` is ``toolgate comment --pr N``."""
    if disabled_by is not None:
        return SkipComment(f"not commenting: {disabled_by}")
    if not ctx.repository:
        return SkipComment("not commenting: GITHUB_REPOSITORY is not set (not in GitHub Actions?)")
    if not ctx.token:
        return SkipComment(
            "not commenting: no token (set the action's github-token input, or GITHUB_TOKEN)",
            "warning",
        )
    if pr_override is not None:
        if pr_override <= 0:
            return SkipComment(f"not commenting: --pr {pr_override} is not a PR number", "warning")
        run = ctx.workflow_run
        return PostComment(ctx.repository, pr_override, run.head_sha if run else None)
    if ctx.event_name not in PR_EVENTS:
        return SkipComment(
            f"not commenting: the {ctx.event_name or 'unknown'} event is not a pull request "
            "(comments are posted for pull_request and pull_request_target; for workflow_run "
            "use `mode: comment`, or `toolgate comment --pr`)"
        )
    if ctx.pr_number is None:
        return SkipComment(
            "not commenting: the event payload has no pull request number", "warning"
        )
    return PostComment(ctx.repository, ctx.pr_number)


# ─── the baseline ─────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class AutoBaseline:
    """``baseline: auto``: the config's committed file, else the base branch's artifact
    (:func:`gate.github.artifacts.find_baseline`)."""

    pr: PullRequestRef | None
    """The change to find the base branch of (a PR, or a merge queue's group); ``None``
    when this run is for neither."""
    searchable: bool
    """A token and a repository to look for the artifact with."""


@dataclass(frozen=True, slots=True)
class FileBaseline:
    path: str
    """Relative to the working directory."""


@dataclass(frozen=True, slots=True)
class NoBaseline:
    """``baseline: none``."""


BaselinePlan = AutoBaseline | FileBaseline | NoBaseline


def plan_baseline(ctx: GitHubContext, inputs: ActionInputs) -> BaselinePlan:
    match inputs.baseline.kind:
        case BaselineKind.NONE:
            return NoBaseline()
        case BaselineKind.FILE:
            assert inputs.baseline.path is not None
            return FileBaseline(inputs.baseline.path)
        case BaselineKind.AUTO:
            pr, group = ctx.pull_request, ctx.merge_group
            ref = None
            if pr is not None and pr.base_ref and pr.base_sha and pr.head_sha:
                ref = PullRequestRef(pr.number, pr.base_ref, pr.base_sha, pr.head_sha)
            elif group is not None:
                # A merge queue gates the group's commit: compare it with the base branch
                # at the commit the queue built the group on, as a PR with its base.
                ref = PullRequestRef(None, group.base_ref, group.base_sha, group.head_sha)
            elif ctx.base_run_branch is not None and ctx.sha:
                # A run of the base branch itself (the baseline refresh): its baseline is
                # the branch's newest results, so the base history grows by every run.
                ref = PullRequestRef(0, ctx.base_run_branch, ctx.sha, ctx.sha)
            return AutoBaseline(ref, searchable=bool(ctx.token and ctx.repository))
        case _:
            assert_never(inputs.baseline.kind)


# ─── the activities ───────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Check:
    """``mode: check``."""

    config: str
    out: str | None
    """Relative to the working directory; ``None``: the config's ``reporting.out``."""
    samples: int | None
    shard: Shard | None
    baseline: BaselinePlan
    comment: CommentPlan
    base_run: bool = False
    """A run of a branch (a push, a schedule, a manual dispatch): it seeds every case's
    base history up to ``policy.min_history`` (``toolgate check --base-run``)."""
    require_baseline: bool = False
    """``require-baseline``: a run compared with nothing fails (never a base run)."""


@dataclass(frozen=True, slots=True)
class RunShard:
    """``mode: run``: one shard's results for a later ``mode: merge``."""

    config: str
    out: str | None
    samples: int | None
    shard: Shard | None


@dataclass(frozen=True, slots=True)
class Merge:
    """``mode: merge``."""

    config: str
    out: str | None
    folder: str
    """Holds one folder per shard, each with a results.json (relative to the working
    directory)."""
    baseline: BaselinePlan
    comment: CommentPlan
    require_baseline: bool = False


@dataclass(frozen=True, slots=True)
class RelayTarget:
    """Who to comment for: the PR is looked up by the triggering run's head SHA."""

    repository: str
    head_sha: str
    run_number: int | None
    run_url: str | None
    conclusion: str | None


@dataclass(frozen=True, slots=True)
class RelayComment:
    """``mode: comment``: the comment for the run that triggered this ``workflow_run``."""

    folder: str
    """The earlier run's output folder (downloaded artifact), relative to the working
    directory."""
    target: RelayTarget | SkipComment


Activity = Check | RunShard | Merge | RelayComment


def plan(ctx: GitHubContext, inputs: ActionInputs) -> Activity:
    """What this invocation does (the module docstring has the table)."""
    match inputs.mode:
        case Mode.CHECK:
            return Check(
                config=inputs.config,
                out=inputs.out,
                samples=inputs.samples,
                shard=inputs.shard,
                baseline=plan_baseline(ctx, inputs),
                comment=_own_comment(ctx, inputs),
                base_run=ctx.base_run_branch is not None,
                require_baseline=inputs.require_baseline and ctx.base_run_branch is None,
            )
        case Mode.RUN:
            return RunShard(
                config=inputs.config, out=inputs.out, samples=inputs.samples, shard=inputs.shard
            )
        case Mode.MERGE:
            assert inputs.merge is not None, "from_environ refuses `mode: merge` without `merge:`"
            return Merge(
                config=inputs.config,
                out=inputs.out,
                folder=inputs.merge,
                baseline=plan_baseline(ctx, inputs),
                comment=_own_comment(ctx, inputs),
                require_baseline=inputs.require_baseline and ctx.base_run_branch is None,
            )
        case Mode.COMMENT:
            return RelayComment(folder=inputs.out or DEFAULT_OUT, target=_relay_target(ctx, inputs))
        case _:
            assert_never(inputs.mode)


def _own_comment(ctx: GitHubContext, inputs: ActionInputs) -> CommentPlan:
    return plan_comment(ctx, disabled_by=None if inputs.comment else COMMENT_INPUT_OFF)


def _relay_target(ctx: GitHubContext, inputs: ActionInputs) -> RelayTarget | SkipComment:
    if not inputs.comment:
        return SkipComment(f"not commenting: {COMMENT_INPUT_OFF}")
    if not ctx.token or not ctx.repository:
        return SkipComment(
            "`mode: comment` needs a token and GITHUB_REPOSITORY; nothing posted.", "warning"
        )
    run = ctx.workflow_run
    if run is None:
        return SkipComment(
            f"`mode: comment` runs on workflow_run events (this is {ctx.event_name!r}): "
            "there is no triggering run's head SHA to find the PR by; nothing posted."
        )
    return RelayTarget(
        repository=ctx.repository,
        head_sha=run.head_sha,
        run_number=run.run_number,
        run_url=run.html_url,
        conclusion=run.conclusion,
    )
