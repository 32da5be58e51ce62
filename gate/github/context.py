"""Everything ToolGate needs from the Actions environment, read once into one typed object.

``GitHubContext.from_environ(environ)`` reads (tests pass a dict; nothing else in ToolGate
reads these variables):

* ``GITHUB_ACTIONS`` — ``"true"`` when running in Actions;
* the token: ``TOOLGATE_GITHUB_TOKEN``, else ``GITHUB_TOKEN``, else ``INPUT_GITHUB-TOKEN``
  (the Action's ``github-token`` input) — hidden from ``repr``;
* ``GITHUB_REPOSITORY`` (``owner/name``), ``GITHUB_API_URL`` (GitHub Enterprise Server:
  ``https://ghe.example.com/api/v3``; default ``https://api.github.com``),
  ``GITHUB_SERVER_URL``, ``GITHUB_RUN_ID``, ``GITHUB_RUN_ATTEMPT``, ``GITHUB_SHA``;
* ``GITHUB_EVENT_NAME`` and ``GITHUB_EVENT_PATH``: for ``pull_request`` and
  ``pull_request_target`` the event payload gives the PR number and the base and head
  SHAs; for ``workflow_run`` the triggering run's head SHA (the PR number then comes from
  ``--pr``, saved by the first workflow);
* ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY``: the files outputs and the summary go to;
* ``TOOLGATE_COMMENT_LOGIN`` — the login the token comments as, when ``GET /user`` is
  forbidden (GitHub App installation tokens): default ``github-actions[bot]``, the login
  of ``GITHUB_TOKEN``; a custom app is ``<app-slug>[bot]``;
* ``TOOLGATE_GITHUB_BUDGET_S`` — the most seconds all GitHub API calls of one command may
  take together (default 60).

:func:`plan_comment` is the one pure "what do I do for this event" decision.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"
ACTIONS_BOT_LOGIN = "github-actions[bot]"
DEFAULT_BUDGET_S = 60.0


@dataclass(frozen=True, slots=True)
class GitHubContext:
    in_actions: bool = False
    token: str | None = field(default=None, repr=False)
    repository: str | None = None
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    event_name: str | None = None
    pr_number: int | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    workflow_run_head_sha: str | None = None
    run_id: str | None = None
    run_attempt: str | None = None
    sha: str | None = None
    output_path: Path | None = None
    step_summary_path: Path | None = None
    comment_login: str | None = None
    budget_s: float = DEFAULT_BUDGET_S
    problems: tuple[str, ...] = ()
    """What could not be read (an unreadable event file, a bad number): reported as
    warnings by the caller, never fatal."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GitHubContext:
        problems: list[str] = []
        token = (
            environ.get("TOOLGATE_GITHUB_TOKEN")
            or environ.get("GITHUB_TOKEN")
            or environ.get("INPUT_GITHUB-TOKEN")
            or None
        )
        event_name = environ.get("GITHUB_EVENT_NAME") or None
        payload: Mapping[str, Any] = {}
        event_path = environ.get("GITHUB_EVENT_PATH")
        if event_path:
            try:
                loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
                payload = loaded if isinstance(loaded, Mapping) else {}
            except (OSError, ValueError) as exc:
                problems.append(f"cannot read the event payload {event_path}: {exc}")
        pr_number = base_sha = head_sha = wr_sha = None
        if event_name in PR_EVENTS:
            pr = payload.get("pull_request")
            if isinstance(pr, Mapping):
                number = pr.get("number", payload.get("number"))
                pr_number = number if isinstance(number, int) and number > 0 else None
                base_sha = _sha(pr.get("base"))
                head_sha = _sha(pr.get("head"))
            if pr_number is None:
                problems.append(f"the {event_name} event payload has no pull request number")
        elif event_name == "workflow_run":
            run = payload.get("workflow_run")
            if isinstance(run, Mapping) and isinstance(run.get("head_sha"), str):
                wr_sha = run["head_sha"]
        budget = DEFAULT_BUDGET_S
        raw_budget = environ.get("TOOLGATE_GITHUB_BUDGET_S")
        if raw_budget:
            try:
                budget = float(raw_budget)
                # `inf` (or 1e999) would lift the bound on time spent on GitHub altogether.
                if not 0 < budget < float("inf"):
                    raise ValueError
            except ValueError:
                problems.append(
                    f"TOOLGATE_GITHUB_BUDGET_S={raw_budget!r} is not a positive number; "
                    f"using {DEFAULT_BUDGET_S:g}"
                )
                budget = DEFAULT_BUDGET_S
        return cls(
            in_actions=environ.get("GITHUB_ACTIONS") == "true",
            token=token,
            repository=environ.get("GITHUB_REPOSITORY") or None,
            api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
            event_name=event_name,
            pr_number=pr_number,
            base_sha=base_sha,
            head_sha=head_sha,
            workflow_run_head_sha=wr_sha,
            run_id=environ.get("GITHUB_RUN_ID") or None,
            run_attempt=environ.get("GITHUB_RUN_ATTEMPT") or None,
            sha=environ.get("GITHUB_SHA") or None,
            output_path=_path(environ.get("GITHUB_OUTPUT")),
            step_summary_path=_path(environ.get("GITHUB_STEP_SUMMARY")),
            comment_login=environ.get("TOOLGATE_COMMENT_LOGIN") or None,
            budget_s=budget,
            problems=tuple(problems),
        )

    @property
    def run_url(self) -> str | None:
        """The Actions run page (where the step summary and artifacts are)."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def _sha(ref: Any) -> str | None:
    if isinstance(ref, Mapping) and isinstance(ref.get("sha"), str):
        return str(ref["sha"])
    return None


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


# ─── what to do for this event ───────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class PostComment:
    """Upsert the sticky comment on this pull request."""

    repository: str
    pr_number: int
    expected_head_sha: str | None = None
    """For ``workflow_run``: the PR's head must be this commit, or the number (read from
    an artifact the PR itself produced) is not trusted."""


@dataclass(frozen=True, slots=True)
class SkipComment:
    """No comment, and why (``level``: ``notice`` or ``warning``)."""

    reason: str
    level: str = "notice"


CommentPlan = PostComment | SkipComment


def plan_comment(
    ctx: GitHubContext, *, enabled: bool = True, pr_override: int | None = None
) -> CommentPlan:
    """Decide, from the context alone, whether and where to comment."""
    if not enabled:
        return SkipComment("commenting is disabled (reporting.comment: false)")
    if not ctx.repository:
        return SkipComment("not commenting: GITHUB_REPOSITORY is not set (not in GitHub Actions?)")
    if not ctx.token:
        return SkipComment(
            "not commenting: no token (set GITHUB_TOKEN, or the action's github-token input)",
            "warning",
        )
    if pr_override is not None:
        if pr_override <= 0:
            return SkipComment(f"not commenting: --pr {pr_override} is not a PR number", "warning")
        expected = ctx.workflow_run_head_sha if ctx.event_name == "workflow_run" else None
        return PostComment(ctx.repository, pr_override, expected)
    if ctx.event_name not in PR_EVENTS:
        return SkipComment(
            f"not commenting: the {ctx.event_name or 'unknown'} event is not a pull request "
            "(comments are posted for pull_request and pull_request_target; for workflow_run "
            "pass --pr)"
        )
    if ctx.pr_number is None:
        return SkipComment(
            "not commenting: the event payload has no pull request number", "warning"
        )
    return PostComment(ctx.repository, ctx.pr_number)
