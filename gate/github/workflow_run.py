"""``mode: comment``: post the comment for a run that could not post it itself.

A PR from a fork runs with a read-only token, so its workflow uploads its output folder as
an artifact; a second workflow, on ``workflow_run`` (trusted code, a write token),
downloads it and runs this mode. The folder came from code the PR controls, so it is
untrusted:

* the PR number is looked up from the API by the head SHA GitHub put in the
  ``workflow_run`` event (:func:`find_pr_by_head_sha`) — never read from the artifact —
  and the PR's head must still be that commit when the comment is posted;
* ``results.json`` (preferred) is size-capped, validated, and the comment rendered from it
  by this (trusted) code, so every string in it is escaped; without it, ``comment.md`` is
  size-capped, must be UTF-8, any sticky marker in it is dropped and @-mentions are
  neutralised (:func:`untrusted_body`);
* a note in the step summary says which PR and which run the comment came from.

Posting goes through the one upsert (:func:`gate.github.comments.upsert_comment`) with one
client for the lookup and the post (one time budget). A GitHub failure is a warning and
changes nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import unquote

from gate.errors import GitHubError, InputError, Problem
from gate.github.activity import PostComment, RelayComment, RelayTarget, SkipComment
from gate.github.client import ClientFactory, GitHubApiError, GitHubClient
from gate.github.comments import upsert_comment
from gate.github.context import INPUTS_FILE, GitHubContext
from gate.github.publish import emit, post_comment
from gate.report import marker
from gate.report.redact import Redactor
from gate.results import read_results

RESULTS_FILE = "results.json"
COMMENT_FILE = "comment.md"
MAX_COMMENT_BYTES = 256 * 1024
"""Largest comment.md taken from an earlier run's artifact."""
MAX_ARTIFACT_RESULTS_BYTES = 256 * 1024 * 1024
"""Largest results.json taken from an earlier run's artifact."""
GITHUB_COMMENT_LIMIT = 65_536


@dataclass(frozen=True, slots=True)
class RelayOutcome:
    """What ``mode: comment`` did, for the step summary."""

    status: Literal["posted", "skipped", "failed"]
    summary_notes: tuple[str, ...] = field(default=())


def relay_comment(
    activity: RelayComment,
    ctx: GitHubContext,
    *,
    workdir: Path,
    redactor: Redactor,
    client_factory: ClientFactory,
    stream: TextIO,
) -> RelayOutcome:
    """Carry out ``activity`` (the module docstring). Bad input (no output folder, an
    oversized or invalid file) raises :class:`~gate.errors.InputError`."""
    folder = (workdir / activity.folder).resolve()
    results_file, body_file = folder / RESULTS_FILE, folder / COMMENT_FILE
    if not results_file.is_file() and not body_file.is_file():
        raise InputError(
            Problem(
                INPUTS_FILE,
                None,
                "out",
                f"neither {RESULTS_FILE} nor {COMMENT_FILE} in {folder}: download the "
                "earlier run's artifact there",
            )
        )
    target = activity.target
    if isinstance(target, SkipComment):
        emit(stream, ctx, target.reason, target.level)
        return RelayOutcome("skipped")
    short = target.head_sha[:7]
    try:
        client = client_factory(ctx)
        number = find_pr_by_head_sha(client, target.repository, target.head_sha)
    except GitHubError as exc:
        emit(stream, ctx, f"Looking up the PR of {short} failed: {exc}", "warning")
        return RelayOutcome("failed")
    if number is None:
        emit(stream, ctx, f"No open PR has head {short}; nothing posted.", "notice")
        return RelayOutcome("skipped")

    plan = PostComment(target.repository, number, expected_head_sha=target.head_sha)
    if results_file.is_file():
        if results_file.stat().st_size > MAX_ARTIFACT_RESULTS_BYTES:
            limit = MAX_ARTIFACT_RESULTS_BYTES // (1024 * 1024)
            raise InputError(Problem(str(results_file), None, None, f"over {limit} MiB; refused"))
        results = read_results(results_file)
        done = post_comment(
            results, ctx, plan, redactor=redactor, client_factory=lambda _ctx: client
        )
        emit(stream, ctx, done.message, done.level)
        posted = done.status in ("created", "updated", "unchanged")
    else:
        text = _read_capped_text(body_file)
        posted = _post_body(
            ctx, client, plan, _gate_name(text), untrusted_body(text, target), stream
        )
    origin = f"run #{target.run_number}" if target.run_number else "the run"
    source = RESULTS_FILE if results_file.is_file() else COMMENT_FILE
    note = (
        f"**Comment:** for PR #{number} (found by its head {short}), from the output of "
        f"{origin}, rendered from its {source}."
    )
    return RelayOutcome("posted" if posted else "failed", (note,))


def find_pr_by_head_sha(client: GitHubClient, repository: str, head_sha: str) -> int | None:
    """The open PR whose head is ``head_sha``: the commit's pulls first, then the open
    PRs themselves (the first list can be empty for a fork's commit)."""
    repo = client.call("GET repository", lambda: client.gh.get_repo(repository))

    def by_commit() -> int | None:
        for pr in _take(repo.get_commit(head_sha).get_pulls(), 50):
            if pr.state == "open" and pr.head.sha == head_sha:
                return int(pr.number)
        return None

    def by_listing() -> int | None:
        for pr in _take(repo.get_pulls(state="open", sort="updated", direction="desc"), 300):
            if pr.head.sha == head_sha:
                return int(pr.number)
        return None

    found: int | None = client.call(f"GET pulls of commit {head_sha[:7]}", by_commit)
    if found is None:
        found = client.call("GET open pull requests", by_listing)
    return found


# ─── comment.md, the fallback ─────────────────────────────────────────────────

_MARKER = re.compile(r"<!--\s*toolgate:comment\b.*?-->\n?", re.DOTALL)
_NAME_IN_MARKER = re.compile(r"\A\s*<!--\s*toolgate:comment name=([A-Za-z0-9._%-]{1,200})\s*-->")
_MENTION = re.compile(r"(?<![\w`/@])@(?=[A-Za-z0-9])")


def untrusted_body(text: str, target: RelayTarget) -> str:
    """An artifact's ``comment.md`` made safe to post: no sticky marker of its own (ours
    is added), no @-mentions that ping (a zero-width space follows the ``@``), within
    GitHub's size limit, and a footer saying where it came from."""
    body = _MENTION.sub("@\u200b", _MARKER.sub("", text))
    origin = (
        f"run [#{target.run_number}]({target.run_url})"
        if target.run_number and target.run_url
        else "an earlier run"
    )
    footer = (
        f"\n\n<sub>Posted by the `workflow_run` job from the output of {origin}; the verdict "
        "of record is that run's check.</sub>\n"
    )
    room = GITHUB_COMMENT_LIMIT - 512 - len(footer)
    if len(body) > room:
        body = body[:room] + "\n\n… (shortened to fit GitHub's comment limit)"
    return body.rstrip("\n") + footer


def _gate_name(text: str) -> str:
    m = _NAME_IN_MARKER.match(text)
    name = unquote(m.group(1)) if m else "toolgate"
    return name if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name) else "toolgate"


def _post_body(
    ctx: GitHubContext,
    client: GitHubClient,
    plan: PostComment,
    gate_name: str,
    body: str,
    stream: TextIO,
) -> bool:
    mark = marker(gate_name)
    try:
        result = upsert_comment(
            client,
            plan.repository,
            plan.pr_number,
            f"{mark}\n{body}",
            marker=mark,
            login_fallback=ctx.comment_login,
            expected_head_sha=plan.expected_head_sha,
        )
    except GitHubApiError as exc:
        emit(stream, ctx, f"Posting the PR comment failed: {exc}. Nothing else changes.", "warning")
        return False
    emit(stream, ctx, f"PR comment {result.action} on #{plan.pr_number} ({result.url})", None)
    return True


def _read_capped_text(path: Path) -> str:
    with path.open("rb") as fh:
        raw = fh.read(MAX_COMMENT_BYTES + 1)
    if len(raw) > MAX_COMMENT_BYTES:
        raise InputError(
            Problem(str(path), None, None, f"over {MAX_COMMENT_BYTES // 1024} KiB; refused")
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), None, None, f"not UTF-8 ({exc.reason})")) from None


def _take(items: Any, limit: int) -> Iterator[Any]:
    for n, item in enumerate(items):
        if n >= limit:
            return
        yield item
