"""The sticky comment against a real local GitHub API (tests/servers/github_server.py)."""

from __future__ import annotations

import time

import pytest

from gate.github.client import GitHubApiError, RetryPolicy
from gate.github.comments import _whoami, upsert_comment
from gate.report import marker
from tests.github.conftest import APP_TOKEN, FAST, PR, ClientFor
from tests.servers.github_server import Fault, GitHubServer

MARK = marker("support-agent")


def body(text: str) -> str:
    return f"{MARK}\n## report\n{text}\n"


def test_upsert__two_runs__exactly_one_marked_comment_with_newer_content(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    first = upsert_comment(client_for(), "octo/agent", PR, body("run 1"), marker=MARK)
    second = upsert_comment(client_for(), "octo/agent", PR, body("run 2"), marker=MARK)
    comments = gh.comments_on(PR)
    assert [c.body for c in comments] == [body("run 2")]
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment_id == second.comment_id == comments[0].id


def test_upsert__same_body__left_alone(gh: GitHubServer, client_for: ClientFor) -> None:
    upsert_comment(client_for(), "octo/agent", PR, body("same"), marker=MARK)
    result = upsert_comment(client_for(), "octo/agent", PR, body("same"), marker=MARK)
    assert result.action == "unchanged"
    assert gh.calls.get("edit_comment", 0) == 0


def test_upsert__marker_pasted_by_another_user__not_edited(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    forged = gh.add_comment(PR, body("look, I pasted the marker"), "mallory")
    result = upsert_comment(client_for(), "octo/agent", PR, body("real"), marker=MARK)
    assert gh.comments[forged.id].body == body("look, I pasted the marker")
    assert result.action == "created" and result.comment_id != forged.id
    assert [c.login for c in gh.comments_on(PR)] == ["mallory", "alice"]


def test_upsert__marker_quoted_mid_comment__not_ours(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.add_comment(PR, f"> quoting the bot\n> {MARK}", "alice")
    upsert_comment(client_for(), "octo/agent", PR, body("x"), marker=MARK)
    assert len(gh.comments_on(PR)) == 2


def test_upsert__other_gate_name__separate_comments(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    other = marker("other-gate")
    upsert_comment(client_for(), "octo/agent", PR, body("a"), marker=MARK)
    upsert_comment(client_for(), "octo/agent", PR, f"{other}\nb", marker=other)
    upsert_comment(client_for(), "octo/agent", PR, body("a2"), marker=MARK)
    assert sorted(c.body.splitlines()[0] for c in gh.comments_on(PR)) == sorted([MARK, other])


def test_upsert__hundreds_of_comments__ours_found_on_a_later_page(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    for i in range(120):
        gh.add_comment(PR, f"chatter {i}", "bob")
    ours = gh.add_comment(PR, body("old"), "alice")
    for i in range(130):
        gh.add_comment(PR, f"more chatter {i}", "bob")
    result = upsert_comment(client_for(), "octo/agent", PR, body("new"), marker=MARK)
    assert result.comment_id == ours.id and result.action == "updated"
    assert gh.comments[ours.id].body == body("new")
    assert len(gh.comments_on(PR)) == 251
    assert all(
        "per_page=100" in path
        for m, path, *_ in gh.log
        if "/issues/7/comments" in path and m == "GET"
    )


def test_upsert__post_answered_502_but_executed__retried_then_deduplicated(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("create_comment", Fault(status=502, apply=True), calls=[1])
    result = upsert_comment(client_for(), "octo/agent", PR, body("once"), marker=MARK)
    comments = gh.comments_on(PR)
    assert gh.calls["create_comment"] == 2  # the retry POSTed again: two were created
    assert [c.body for c in comments] == [body("once")]
    assert result.removed_duplicates == 1
    assert comments[0].id == result.comment_id == min(gh.comments)  # the oldest is kept


def test_upsert__every_post_fails_but_landed__found_and_kept_once(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("create_comment", Fault(status=500, apply=True))
    result = upsert_comment(client_for(), "octo/agent", PR, body("landed"), marker=MARK)
    assert [c.body for c in gh.comments_on(PR)] == [body("landed")]
    assert result.removed_duplicates == FAST.max_attempts - 1


def test_upsert__existing_duplicates__oldest_kept_rest_deleted(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    a = gh.add_comment(PR, body("a"), "alice")
    gh.add_comment(PR, body("b"), "alice")
    gh.add_comment(PR, body("c"), "alice")
    result = upsert_comment(client_for(), "octo/agent", PR, body("d"), marker=MARK)
    assert [(c.id, c.body) for c in gh.comments_on(PR)] == [(a.id, body("d"))]
    assert result.removed_duplicates == 2


def test_whoami__installation_token__falls_back_to_actions_bot(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    # GET /user is refused for an installation token: the login is a guess (not known).
    assert _whoami(client_for(APP_TOKEN), None) == ("github-actions[bot]", False)
    assert _whoami(client_for(APP_TOKEN), "my-app[bot]") == ("my-app[bot]", True)


def test_upsert__installation_token__updates_its_own_comment(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    upsert_comment(client_for(APP_TOKEN), "octo/agent", PR, body("1"), marker=MARK)
    upsert_comment(client_for(APP_TOKEN), "octo/agent", PR, body("2"), marker=MARK)
    assert [(c.login, c.body) for c in gh.comments_on(PR)] == [("github-actions[bot]", body("2"))]


def test_upsert__wrong_fallback_login__creator_login_used_for_cleanup(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("create_comment", Fault(status=502, apply=True), calls=[1])
    upsert_comment(
        client_for(APP_TOKEN), "octo/agent", PR, body("x"), marker=MARK, login_fallback="wrong[bot]"
    )
    assert len(gh.comments_on(PR)) == 1


def test_upsert__enterprise_prefix__api_url_honoured(client_for: ClientFor) -> None:
    with GitHubServer(prefix="/api/v3") as ghes:
        ghes.add_token("t", "alice")
        ghes.add_pull(3)
        from gate.github.client import GitHubClient

        client = GitHubClient(token="t", api_url=ghes.api_url, policy=FAST, write_interval_s=0)
        upsert_comment(client, "octo/agent", 3, body("ghes"), marker=MARK)
        assert [c.body for c in ghes.comments_on(3)] == [body("ghes")]
        assert all(path.startswith("/api/v3/") for _, path, *_ in ghes.log)


def test_upsert__workflow_run_head_mismatch__refused(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    with pytest.raises(GitHubApiError, match="refusing to comment"):
        upsert_comment(
            client_for(), "octo/agent", PR, body("x"), marker=MARK, expected_head_sha="f" * 40
        )
    assert gh.comments_on(PR) == []
    upsert_comment(
        client_for(), "octo/agent", PR, body("x"), marker=MARK, expected_head_sha="h" * 40
    )
    assert len(gh.comments_on(PR)) == 1


# ─── retries and the time bound ──────────────────────────────────────────────


def test_client__5xx_then_ok__retried(gh: GitHubServer, client_for: ClientFor) -> None:
    gh.inject("list_comments", Fault(status=500), calls=[1])
    gh.inject("list_comments", Fault(status=502), calls=[2])
    upsert_comment(client_for(), "octo/agent", PR, body("x"), marker=MARK)
    assert len(gh.comments_on(PR)) == 1
    assert gh.calls["list_comments"] >= 3


def test_client__secondary_rate_limit__waits_retry_after(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("get_issue", Fault.secondary_rate_limit(retry_after=1), calls=[1])
    start = time.monotonic()
    upsert_comment(client_for(), "octo/agent", PR, body("x"), marker=MARK)
    assert time.monotonic() - start >= 1.0
    gets = [t for m, p, status, t in gh.log if p.endswith("/issues/7") and m == "GET"]
    assert len(gets) == 2 and gets[1] - gets[0] >= 1.0


def test_client__retry_after_beyond_budget__gives_up_at_once(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("get_issue", Fault.secondary_rate_limit(retry_after=3600))
    start = time.monotonic()
    with pytest.raises(
        GitHubApiError, match=r"secondary rate limit.*beyond the GitHub time budget"
    ):
        upsert_comment(client_for(), "octo/agent", PR, body("x"), marker=MARK)
    assert time.monotonic() - start < 2.0


def test_client__secondary_limit_without_retry_after__not_waited_out_forever(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("get_issue", Fault.secondary_rate_limit(retry_after=None))
    start = time.monotonic()
    with pytest.raises(GitHubApiError) as info:
        upsert_comment(client_for(), "octo/agent", PR, body("x"), marker=MARK)
    assert info.value.rate_limited and info.value.status == 403
    assert time.monotonic() - start < 2.0


def test_client__slow_responses__total_time_bounded(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("get_repo", Fault(delay=5.0))
    policy = RetryPolicy(budget_s=3.0, request_timeout_s=1, backoff_s=0.05)
    start = time.monotonic()
    with pytest.raises(GitHubApiError, match="no answer within 1 s"):
        upsert_comment(client_for(policy=policy), "octo/agent", PR, body("x"), marker=MARK)
    assert time.monotonic() - start <= 3.0 + 0.5


def test_client__always_500__gives_up_within_budget(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.inject("get_repo", Fault(status=500))
    policy = RetryPolicy(budget_s=2.0, request_timeout_s=1, backoff_s=0.2, max_attempts=50)
    start = time.monotonic()
    with pytest.raises(GitHubApiError) as info:
        upsert_comment(client_for(policy=policy), "octo/agent", PR, body("x"), marker=MARK)
    assert time.monotonic() - start <= 2.0 + 0.5
    assert info.value.attempts >= 2


def test_client__404__not_retried(gh: GitHubServer, client_for: ClientFor) -> None:
    with pytest.raises(GitHubApiError) as info:
        upsert_comment(client_for(), "octo/agent", 999, body("x"), marker=MARK)
    assert info.value.status == 404 and info.value.attempts == 1
    assert gh.calls["get_issue"] == 1


def test_client__repr__hides_token(client_for: ClientFor) -> None:
    assert "tok-" not in repr(client_for())


def test_upsert__github_app_token_without_login_setting__finds_its_comment_no_churn(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.add_token("tok-my-app", "my-app[bot]", kind="app")
    for n in (1, 2, 3):
        upsert_comment(client_for("tok-my-app"), "octo/agent", PR, body(str(n)), marker=MARK)
    assert [(c.login, c.body) for c in gh.comments_on(PR)] == [("my-app[bot]", body("3"))]
    assert gh.calls["create_comment"] == 1, "one comment, created once"
    assert gh.calls.get("delete_comment", 0) == 0, "never a create-then-delete"


def test_upsert__app_token__another_apps_marked_comment__left_alone(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    gh.add_token("tok-my-app", "my-app[bot]", kind="app")
    theirs = gh.add_comment(PR, body("other app"), "other-app[bot]")
    result = upsert_comment(client_for("tok-my-app"), "octo/agent", PR, body("1"), marker=MARK)
    assert result.action == "created"
    assert [(c.login, c.body) for c in gh.comments_on(PR)] == [
        ("other-app[bot]", body("other app")),
        ("my-app[bot]", body("1")),
    ]
    assert gh.comments[theirs.id].body == body("other app")


def test_client__every_request__sends_accept_and_api_version(
    gh: GitHubServer, client_for: ClientFor
) -> None:
    upsert_comment(client_for(), "octo/agent", PR, body("1"), marker=MARK)
    upsert_comment(client_for(APP_TOKEN), "octo/agent", PR, body("2"), marker=MARK)
    assert gh.headers_seen
    for route, headers in gh.headers_seen:
        assert headers.get("Accept") == "application/vnd.github+json", route
        assert headers.get("X-GitHub-Api-Version") == "2022-11-28", route
