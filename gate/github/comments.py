"""The sticky PR comment: find it again, edit it in place, never leave two.

docs/reports.md ("The sticky comment") gives the rules: which comment is ours (the gate's
marker **and** the token's own login, guessed for installation tokens and GitHub Apps),
the oldest of ours kept and edited, the others deleted, a list again after creating one
(a POST answered with a 5xx may have landed twice). Here besides: the author GitHub
reports for a created comment is the truth for the clean-up that follows, and a create
that "failed" is followed by one more list (it may have landed).

Every GitHub call goes through :meth:`gate.github.client.GitHubClient.call`; any failure
raises :class:`gate.github.client.GitHubApiError`, which callers report as a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gate.github.client import GitHubApiError, GitHubClient
from gate.github.context import ACTIONS_BOT_LOGIN


@dataclass(frozen=True, slots=True)
class UpsertResult:
    action: Literal["created", "updated", "unchanged"]
    comment_id: int
    url: str | None
    login: str
    removed_duplicates: int = 0
    warnings: tuple[str, ...] = field(default=())


def _whoami(client: GitHubClient, fallback: str | None) -> tuple[str, bool]:
    """The login, and whether GitHub said so (``False``: a guess for an installation
    token, ``TOOLGATE_COMMENT_LOGIN`` or ``github-actions[bot]``)."""
    try:
        login = client.call("GET /user", lambda: str(client.gh.get_user().login))
    except GitHubApiError as exc:
        if exc.status in (401, 403, 404) and not exc.rate_limited:
            return fallback or ACTIONS_BOT_LOGIN, fallback is not None
        raise
    return login, True


def _normalise(body: str | None) -> str:
    return (body or "").replace("\r\n", "\n").strip()


def _marked(client: GitHubClient, issue: Any, marker: str) -> list[Any]:
    """Every comment starting with ``marker``, oldest first."""
    comments: Sequence[Any] = client.call(
        f"GET comments of #{issue.number}", lambda: list(issue.get_comments())
    )
    marked = [c for c in comments if (c.body or "").lstrip("\ufeff \t\r\n").startswith(marker)]
    return sorted(marked, key=lambda c: (c.created_at, c.id))


def _author(comment: Any) -> str:
    return str(comment.user.login) if comment.user is not None else ""


def _by(comments: Sequence[Any], login: str) -> list[Any]:
    return [c for c in comments if _author(c).lower() == login.lower()]


def _ours(client: GitHubClient, issue: Any, marker: str, login: str) -> list[Any]:
    return _by(_marked(client, issue, marker), login)


def _adopt(
    client: GitHubClient, comments: Sequence[Any], body: str
) -> tuple[Any, Literal["updated", "unchanged"], str] | None:
    bots = [c for c in comments if c.user is not None and c.user.type == "Bot"]
    if not bots:
        return None
    first = bots[0]
    try:
        keep, action = _settle(client, first, body)
    except GitHubApiError as exc:
        if exc.forbidden or exc.status == 404:
            return None  # not ours after all
        raise
    if action == "unchanged":
        # Unchanged needs no edit, so GitHub has not confirmed it is ours: ask it with an
        # edit to the same body only if another bot could have written it.
        others = {_author(c).lower() for c in bots}
        if len(others) > 1:
            try:
                client.call(f"PATCH comment {first.id}", lambda: first.edit(first.body))
            except GitHubApiError as exc:
                if exc.forbidden or exc.status == 404:
                    return None
                raise
    return keep, action, _author(first)


def upsert_comment(
    client: GitHubClient,
    repository: str,
    number: int,
    body: str,
    *,
    marker: str,
    login_fallback: str | None = None,
    expected_head_sha: str | None = None,
) -> UpsertResult:
    """Create or update this gate's comment on PR ``number`` (see the module docstring)."""
    me, known = _whoami(client, login_fallback)
    repo = client.call(f"GET repository {repository}", lambda: client.gh.get_repo(repository))
    if expected_head_sha:
        pull = client.call(f"GET pull request #{number}", lambda: repo.get_pull(number))
        if pull.head.sha != expected_head_sha:
            raise GitHubApiError(
                f"check pull request #{number}",
                f"its head is {pull.head.sha[:12]}, not the commit of the triggering run "
                f"({expected_head_sha[:12]}); refusing to comment",
            )
    issue = client.call(f"GET issue #{number}", lambda: repo.get_issue(number))
    warnings: list[str] = []
    comments = _marked(client, issue, marker)
    mine = _by(comments, me)
    if not mine and not known:
        # A GitHub App's installation token cannot read its own login (GET /user is 403),
        # and its login is `<app-slug>[bot]`, not the default guess. Its earlier comment is
        # the oldest marked one by a bot account: taken when GitHub lets us edit it (a
        # human pasting the marker is never a bot; another app's comment refuses the edit).
        adopted = _adopt(client, comments, body)
        if adopted is not None:
            keep, action, me = adopted
            removed = _delete(client, _by(comments, me)[1:], warnings)
            return UpsertResult(action, keep.id, keep.html_url, me, removed, tuple(warnings))
    if mine:
        keep, action = _settle(client, mine[0], body)
        removed = _delete(client, mine[1:], warnings)
        return UpsertResult(action, keep.id, keep.html_url, me, removed, tuple(warnings))
    try:
        created = client.call(f"POST comment on #{number}", lambda: issue.create_comment(body))
    except GitHubApiError:
        # The create may have landed although we saw a failure; look before giving up.
        try:
            landed = [
                c
                for c in _ours(client, issue, marker, me)
                if _normalise(c.body) == _normalise(body)
            ]
        except GitHubApiError:
            landed = []
        if not landed:
            raise
        created = landed[0]
    author = created.user.login if created.user is not None else me
    me = author or me
    mine = _ours(client, issue, marker, me)
    if not mine:  # listing lags behind: trust the create
        return UpsertResult("created", created.id, created.html_url, me, 0, tuple(warnings))
    keep, action = _settle(client, mine[0], body)
    removed = _delete(client, mine[1:], warnings)
    return UpsertResult(
        "created" if keep.id == created.id or action == "unchanged" else action,
        keep.id,
        keep.html_url,
        me,
        removed,
        tuple(warnings),
    )


def _settle(
    client: GitHubClient, comment: Any, body: str
) -> tuple[Any, Literal["updated", "unchanged"]]:
    if _normalise(comment.body) == _normalise(body):
        return comment, "unchanged"
    client.call(f"PATCH comment {comment.id}", lambda: comment.edit(body))
    return comment, "updated"


def _delete(client: GitHubClient, extra: Sequence[Any], warnings: list[str]) -> int:
    removed = 0
    for c in extra:
        try:
            client.call(f"DELETE duplicate comment {c.id}", c.delete)
            removed += 1
        except GitHubApiError as exc:
            warnings.append(f"could not delete a duplicate ToolGate comment: {exc}")
    return removed
