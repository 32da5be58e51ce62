"""The fake GitHub server itself speaks what PyGithub expects (so other tests can trust it)."""

from __future__ import annotations

import github
import pytest
from github import Auth, Github

from tests.servers.github_server import Fault, GitHubServer


def _client(api_url: str, token: str = "tok-user") -> Github:
    return Github(
        auth=Auth.Token(token),
        base_url=api_url,
        retry=None,
        per_page=100,
        seconds_between_requests=0,
        seconds_between_writes=0,
        timeout=5,
    )


@pytest.fixture
def gh() -> GitHubServer:
    with GitHubServer(prefix="/api/v3") as server:
        server.add_token("tok-user", "alice")
        server.add_token("tok-app", "github-actions[bot]", kind="app")
        server.add_pull(7)
        yield server


def test_server__pygithub_round_trip__create_list_edit_delete(gh: GitHubServer) -> None:
    g = _client(gh.api_url)
    assert g.get_user().login == "alice"
    issue = g.get_repo("octo/agent").get_issue(7)
    c = issue.create_comment("hello")
    assert c.user.login == "alice"
    c.edit("edited")
    assert [x.body for x in issue.get_comments()] == ["edited"]
    c.delete()
    assert gh.comments_on(7) == []


def test_server__many_comments__paginated_with_link_header(gh: GitHubServer) -> None:
    for i in range(250):
        gh.add_comment(7, f"c{i}", "bob")
    issue = _client(gh.api_url).get_repo("octo/agent").get_issue(7)
    bodies = [c.body for c in issue.get_comments()]
    assert bodies == [f"c{i}" for i in range(250)]
    assert gh.calls["list_comments"] == 3


def test_server__app_token__user_endpoint_forbidden(gh: GitHubServer) -> None:
    with pytest.raises(github.GithubException) as info:
        _client(gh.api_url, "tok-app").get_user().login  # noqa: B018 - the call is the test
    assert info.value.status == 403


def test_server__injected_faults__apply_per_call_count(gh: GitHubServer) -> None:
    gh.inject("get_repo", Fault(status=500), calls=[1])
    gh.inject("get_repo", Fault.secondary_rate_limit(retry_after=3), calls=[2])
    g = _client(gh.api_url)
    with pytest.raises(github.GithubException) as first:
        g.get_repo("octo/agent")
    assert first.value.status == 500
    with pytest.raises(github.RateLimitExceededException) as second:
        g.get_repo("octo/agent")
    assert second.value.headers is not None
    assert second.value.headers.get("retry-after") == "3"
    assert g.get_repo("octo/agent").full_name == "octo/agent"


def test_server__apply_then_fail__state_changes_but_client_sees_error(gh: GitHubServer) -> None:
    gh.inject("create_comment", Fault(status=502, apply=True), calls=[1])
    issue = _client(gh.api_url).get_repo("octo/agent").get_issue(7)
    with pytest.raises(github.GithubException):
        issue.create_comment("x")
    assert [c.body for c in gh.comments_on(7)] == ["x"]


def test_server__extra_routes__registered_by_other_modules() -> None:
    from tests.servers.github_server import Response

    def register(server: GitHubServer) -> None:
        server.add_route("GET", r"/ping", lambda s, r: Response(200, {"ok": True}), name="ping")

    with GitHubServer(register=[register]) as server:
        server.add_token("t", "alice")
        g = _client(server.api_url, "t")
        _, data = g.requester.requestJsonAndCheck("GET", "/ping")
        assert data["ok"] is True
        server.inject("ping", Fault(status=404, body={"message": "Not Found"}))
        with pytest.raises(github.GithubException):
            g.requester.requestJsonAndCheck("GET", "/ping")
