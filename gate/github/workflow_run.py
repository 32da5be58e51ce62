"""``mode: comment``: post the comment for a run that could not post it itself.

A PR from a fork runs with a read-only token, so its workflow uploads its output folder as
an artifact; a second workflow, on ``workflow_run`` (trusted code, a write token),
downloads it and runs this mode. The folder came from code the PR controls: docs/action.md
("Pull requests from forks") says what is taken from it and what never is.

Posting goes through the one upsert (:func:`gate.github.comments.upsert_comment`) with one
client for the lookup and the post (one time budget). A GitHub failure is a warning and
changes nothing else; an oversized or invalid ``results.json`` is bad input (exit 2),
reported after the notice is posted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Literal, TextIO

from github.PaginatedList import PaginatedList
from github.PullRequest import PullRequest

from gate.errors import GitHubError, InputError, Problem
from gate.github.activity import RelayComment, RelayTarget, SkipComment
from gate.github.client import ClientFactory, GitHubApiError, GitHubClient
from gate.github.comments import upsert_comment
from gate.github.context import GitHubContext
from gate.github.publish import emit
from gate.report import marker
from gate.report.comment import (
    RELAY_NOTICE_GATE,
    RelayedRun,
    RelayProblem,
    render_relay_notice,
    render_relayed_comment,
)
from gate.report.redact import Redactor
from gate.results import Results, read_results

RESULTS_FILE = "results.json"
MAX_PULLS_BY_COMMIT = 50
MAX_OPEN_PULLS = 300


@dataclass(frozen=True, slots=True)
class RelayOutcome:
    """What ``mode: comment`` did, for the step summary and the exit code."""

    status: Literal["posted", "skipped", "failed"]
    summary_notes: tuple[str, ...] = field(default=())
    error: InputError | None = None
    """The artifact's results.json was bad input (exit 2), found after posting the notice."""


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What the triggering run left in the folder: its results, or why there are none."""

    results: Results | None
    problem: RelayProblem | None = None
    error: InputError | None = None


def read_run_output(folder: Path, *, max_bytes: int) -> RunOutput:
    """The folder's results.json — a regular file, not a link — size-capped
    (``TOOLGATE_ARTIFACT_MAX_MB``) and validated; never raises."""
    if not folder.is_dir():
        return RunOutput(None, RelayProblem.NOT_DOWNLOADED)
    path = folder / RESULTS_FILE
    if path.is_symlink():
        # The PR's code wrote the folder: a link could point at any file on the runner.
        error = _about(path, "is a symbolic link; only a regular file is read")
        return RunOutput(None, RelayProblem.INVALID, error)
    if not path.is_file():
        return RunOutput(None, RelayProblem.MISSING)
    size = path.stat().st_size
    if size > max_bytes:
        limit = max_bytes // (1024 * 1024)
        error = _about(path, f"is {size:,} bytes, over the {limit} MiB limit")
        return RunOutput(None, RelayProblem.TOO_LARGE, error)
    try:
        return RunOutput(read_results(path))
    except InputError as exc:
        return RunOutput(None, RelayProblem.INVALID, exc)


def _about(path: Path, message: str) -> InputError:
    return InputError(Problem(str(path), None, None, message))


def relay_comment(
    activity: RelayComment,
    ctx: GitHubContext,
    *,
    workdir: Path,
    redactor: Redactor,
    client_factory: ClientFactory,
    stream: TextIO,
) -> RelayOutcome:
    """Carry out ``activity`` (the module docstring)."""
    target = activity.target
    if isinstance(target, SkipComment):
        emit(stream, ctx, target.reason, target.level)
        return RelayOutcome("skipped")
    folder = (workdir / activity.folder).resolve()
    output = read_run_output(folder, max_bytes=ctx.artifact_max_bytes)
    run = RelayedRun(target.head_sha, target.conclusion, target.run_number, target.run_url)
    if output.results is not None:
        body = render_relayed_comment(output.results, run, redactor=redactor)
        mark = marker(output.results.gate_name)
        source = f"rendered from its {RESULTS_FILE}"
    else:
        assert output.problem is not None
        body = redactor.redact(render_relay_notice(run, output.problem))
        mark = marker(RELAY_NOTICE_GATE)
        source = f"a notice: the output {output.problem.value}"
        level = "notice" if output.problem is RelayProblem.MISSING else "warning"
        emit(
            stream,
            ctx,
            f"{folder} {output.problem.value}: posting a notice instead of a report.",
            level,
        )
    status, number = _post(ctx, target, body, mark, client_factory, stream)
    notes: tuple[str, ...] = ()
    if status == "posted":
        origin = f"run {target.run_number}" if target.run_number else "the run"
        notes = (
            f"**Comment:** for PR #{number} (found by its head {target.head_sha[:7]}), "
            f"from the output of {origin} (concluded `{target.conclusion or 'nothing yet'}`), "
            f"{source}.",
        )
    return RelayOutcome(status, notes, output.error)


def _post(
    ctx: GitHubContext,
    target: RelayTarget,
    body: str,
    mark: str,
    client_factory: ClientFactory,
    stream: TextIO,
) -> tuple[Literal["posted", "skipped", "failed"], int | None]:
    short = target.head_sha[:7]
    try:
        client = client_factory(ctx)
        number = find_pr_by_head_sha(client, target.repository, target.head_sha)
    except GitHubError as exc:
        emit(stream, ctx, f"Looking up the PR of {short} failed: {exc}", "warning")
        return "failed", None
    if number is None:
        emit(stream, ctx, f"No open PR has head {short}; nothing posted.", "notice")
        return "skipped", None
    try:
        result = upsert_comment(
            client,
            target.repository,
            number,
            body,
            marker=mark,
            login_fallback=ctx.comment_login,
            expected_head_sha=target.head_sha,
        )
    except GitHubApiError as exc:
        emit(stream, ctx, f"Posting the PR comment failed: {exc}. Nothing else changes.", "warning")
        return "failed", number
    emit(stream, ctx, f"PR comment {result.action} on #{number} ({result.url})", None)
    return "posted", number


def find_pr_by_head_sha(client: GitHubClient, repository: str, head_sha: str) -> int | None:
    """The open PR whose head is ``head_sha``: the commit's pull requests first, then the
    open PRs themselves (the first list can be empty for a fork's commit).

    Only the two pull-request lists are requested — not the repository, not the commit
    (which needs ``contents: read``, a permission the comment job does not have) — and a
    403 or 404 on the commit's list falls back to the open PRs."""
    requester = client.gh.requester
    base = f"/repos/{repository}"

    def pulls(path: str, params: dict[str, Any] | None) -> PaginatedList[PullRequest]:
        return PaginatedList(PullRequest, requester, base + path, params)

    def by_commit() -> int | None:
        for pr in islice(pulls(f"/commits/{head_sha}/pulls", None), MAX_PULLS_BY_COMMIT):
            if pr.state == "open" and pr.head.sha == head_sha:
                return int(pr.number)
        return None

    def by_listing() -> int | None:
        params = {"state": "open", "sort": "updated", "direction": "desc"}
        for pr in islice(pulls("/pulls", params), MAX_OPEN_PULLS):
            if pr.head.sha == head_sha:
                return int(pr.number)
        return None

    try:
        found: int | None = client.call(f"GET pulls of commit {head_sha[:7]}", by_commit)
    except GitHubApiError as exc:
        if exc.status not in (403, 404) or exc.rate_limited:
            raise
        found = None  # not allowed to see the commit (or it is a fork's): list the PRs
    if found is None:
        found = client.call("GET open pull requests", by_listing)
    return found
