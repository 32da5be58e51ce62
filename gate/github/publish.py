"""Publishing one run's results to GitHub: outputs, step summary, annotations, comment.

:func:`publish` is what ``toolgate check`` calls at the end of a run in Actions, and what
the Action calls after ``check`` and ``merge``, in the order outputs, step summary,
annotations, then the PR comment (the Action writes its outputs itself, once, after
everything: ``outputs=False``). Nothing here raises: every failure (a file that cannot be
written, any GitHub API error) is returned and printed as a warning, and never changes
the verdict or the exit code. :func:`post_comment` alone is ``toolgate comment``.

Whether and where to comment is decided before, by the pure
:func:`gate.github.activity.plan_comment`; these functions carry the plan out.

When the token cannot comment (HTTP 403 — a pull request from a fork gets a read-only
``GITHUB_TOKEN``), the report goes to the step summary instead, with a warning explaining
the ``workflow_run`` pattern (docs/reports.md).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TextIO

from gate.github.activity import CommentPlan, SkipComment
from gate.github.client import ClientFactory, GitHubApiError, client_for
from gate.github.comments import upsert_comment
from gate.github.context import GitHubContext
from gate.github.workflow import (
    annotation,
    annotations_for,
    append_step_summary,
    outputs_for,
    step_summary_room,
    write_outputs,
)
from gate.report import marker, render_comment, render_markdown
from gate.report.comment import RelayedRun, render_relayed_comment
from gate.report.redact import Redactor
from gate.results import Results

FORK_HINT = (
    "Pull requests from forks get a read-only GITHUB_TOKEN, so the report is in this run's "
    "step summary instead. To comment on fork pull requests use the workflow_run pattern: "
    "this workflow uploads its toolgate output folder as an artifact, and a second workflow "
    "(on: workflow_run, with pull-requests: write and actions: read, never checking out the "
    "PR) downloads it and runs the ToolGate action with `mode: comment`, which finds the PR "
    "by the run's head commit (see docs/action.md, fork-safe.yml and fork-safe-comment.yml)."
)


@dataclass(frozen=True, slots=True)
class CommentOutcome:
    status: Literal["created", "updated", "unchanged", "skipped", "fallback", "failed"]
    message: str
    level: Literal["notice", "warning"] | None = None
    """How to report ``message`` (``None``: an ordinary log line)."""
    url: str | None = None


@dataclass
class PublishReport:
    comment: CommentOutcome | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    annotations: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def post_comment(
    results: Results,
    ctx: GitHubContext,
    plan: CommentPlan,
    *,
    redactor: Redactor,
    summary_fallback: bool = True,
    client_factory: ClientFactory = client_for,
) -> CommentOutcome:
    """Carry out ``plan``: upsert the sticky comment for ``results``."""
    if isinstance(plan, SkipComment):
        return CommentOutcome("skipped", plan.reason, plan.level)
    run = ctx.workflow_run
    if plan.expected_head_sha is not None and run is not None:
        # Another run's results (`toolgate comment --pr` on workflow_run): the verdict
        # shown is that run's conclusion, the results' own claim only a claim.
        relayed = RelayedRun(run.head_sha, run.conclusion, run.run_number, run.html_url)
        body = render_relayed_comment(results, relayed, redactor=redactor)
    else:
        body = render_comment(results, redactor=redactor, report_url=ctx.run_url)
    try:
        client = client_factory(ctx)
        result = upsert_comment(
            client,
            plan.repository,
            plan.pr_number,
            body,
            marker=marker(results.gate_name),
            login_fallback=ctx.comment_login,
            expected_head_sha=plan.expected_head_sha,
        )
    except Exception as exc:
        if not isinstance(exc, GitHubApiError):
            # PyGithub can raise more than GithubException (a proxy's HTML page fails JSON
            # decoding, say); the verdict and the exit code must not depend on it.
            return CommentOutcome(
                "failed",
                f"could not post the ToolGate comment on #{plan.pr_number}: unexpected "
                f"{type(exc).__name__}: {exc}. The verdict and the exit code are unaffected.",
                "warning",
            )
        if exc.forbidden:
            where = _fallback(ctx, body) if summary_fallback else "the step summary"
            return CommentOutcome(
                "fallback",
                f"could not comment on #{plan.pr_number} ({exc}). {FORK_HINT}"
                + (f" The comment was written to {where}." if summary_fallback else ""),
                "warning",
            )
        return CommentOutcome(
            "failed",
            f"could not post the ToolGate comment on #{plan.pr_number}: {exc}. "
            "The verdict and the exit code are unaffected; the report is in the step summary.",
            "warning",
        )
    extra = (
        f"; removed {result.removed_duplicates} duplicate(s)" if result.removed_duplicates else ""
    )
    where = result.url or f"comment {result.comment_id}"
    message = f"PR comment {result.action} on #{plan.pr_number} ({where}){extra}"
    for w in result.warnings:
        message += f"; warning: {w}"
    return CommentOutcome(
        result.action, message, "warning" if result.warnings else None, result.url
    )


def _fallback(ctx: GitHubContext, body: str) -> str:
    if ctx.step_summary_path is None:
        return "nowhere (GITHUB_STEP_SUMMARY is not set)"
    why = append_step_summary(ctx.step_summary_path, body)
    return (
        "the step summary"
        if why is None
        else f"nowhere (the step summary could not be written: {why})"
    )


def publish(
    results: Results,
    ctx: GitHubContext,
    *,
    comment: CommentPlan,
    redactor: Redactor,
    results_path: str,
    annotations: bool = True,
    outputs: bool = True,
    summary_notes: Sequence[str] = (),
    client_factory: ClientFactory = client_for,
    stream: TextIO | None = None,
) -> PublishReport:
    """Outputs (unless ``outputs`` is false), step summary (the report, then
    ``summary_notes``), annotations and the comment, in that order; never raises."""
    out = stream if stream is not None else sys.stdout
    report = PublishReport()
    if outputs and ctx.output_path is not None:
        report.outputs = outputs_for(results, results_path)
        try:
            write_outputs(ctx.output_path, report.outputs)
        except OSError as exc:
            report.warnings.append(f"could not write outputs: {exc.strerror or exc}")
    problem = write_step_summary(results, ctx, redactor=redactor, notes=summary_notes)
    if problem is not None:
        report.warnings.append(problem)
    if annotations and ctx.in_actions:
        # Keep warning slots for what this function itself may warn about.
        report.annotations = annotations_for(
            results,
            redact=redactor.redact,
            reserved_warnings=1 + len(report.warnings),
        )
        for line in report.annotations:
            out.write(line + "\n")
    report.comment = post_comment(
        results,
        ctx,
        comment,
        redactor=redactor,
        summary_fallback=False,  # the full report is in the step summary already
        client_factory=client_factory,
    )
    emit(out, ctx, report.comment.message, report.comment.level)
    for w in report.warnings:
        emit(out, ctx, w, "warning")
    out.flush()
    return report


def write_step_summary(
    results: Results, ctx: GitHubContext, *, redactor: Redactor, notes: Sequence[str] = ()
) -> str | None:
    """Append the report, then ``notes``, to the step summary within the room left under
    the runner's 1 MiB; returns what went wrong, if anything (never raises)."""
    if ctx.step_summary_path is None:
        return None
    extra = "".join(f"\n{n.rstrip()}\n" for n in notes if n.strip())
    room = step_summary_room(ctx.step_summary_path) - len(extra.encode("utf-8"))
    text = render_markdown(
        results, max_bytes=max(0, room), redactor=redactor, report_url=ctx.run_url
    )
    why = append_step_summary(ctx.step_summary_path, text + extra)
    return None if why is None else f"could not write the step summary: {why}"


def emit(out: TextIO, ctx: GitHubContext, message: str, level: str | None) -> None:
    """A log line: a workflow command in Actions, ``toolgate: <level>: …`` elsewhere."""
    if ctx.in_actions and level in ("notice", "warning", "error"):
        out.write(annotation(level, message, title="ToolGate") + "\n")
    else:
        out.write(f"toolgate: {level + ': ' if level else ''}{message}\n")
