"""Fixtures: a local GitHub API server with one PR, and fast clients for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gate.github.client import GitHubClient, RetryPolicy
from tests.servers.github_server import GitHubServer

USER_TOKEN = "tok-user-alice"
APP_TOKEN = "tok-app"
READONLY_TOKEN = "tok-readonly"
OTHER_TOKEN = "tok-mallory"
PR = 7

FAST = RetryPolicy(budget_s=10.0, request_timeout_s=2, backoff_s=0.05, backoff_max_s=0.2)


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        server.add_token(USER_TOKEN, "alice")
        server.add_token(APP_TOKEN, "github-actions[bot]", kind="app")
        server.add_token(READONLY_TOKEN, "github-actions[bot]", kind="app", read_only=True)
        server.add_token(OTHER_TOKEN, "mallory")
        server.add_pull(PR, base_sha="b" * 40, head_sha="h" * 40)
        yield server


ClientFor = Callable[..., GitHubClient]


@pytest.fixture
def client_for(gh: GitHubServer) -> ClientFor:
    def make(token: str = USER_TOKEN, policy: RetryPolicy = FAST) -> GitHubClient:
        return GitHubClient(token=token, api_url=gh.api_url, policy=policy, write_interval_s=0)

    return make
