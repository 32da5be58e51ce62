"""The GitHub REST client: PyGithub, with our own retries inside a bounded total time.

PyGithub's default ``GithubRetry`` waits out rate limits for as long as GitHub asks — a CI
step could hang for an hour on a secondary rate limit. ToolGate builds ``Github`` with
``retry=None`` (no retry below us) and retries here instead, around whole operations:

* what is retried and how long it waits: docs/reports.md ("Failures never change the
  verdict"); also the artifact download from its storage host
  (:class:`~gate.errors.TransientGitHubError`); past the waits GitHub names, exponential
  backoff ``backoff_s × 2^(attempt-1)``, at most ``backoff_max_s``;
* the bound: one **deadline** for the whole client (``budget_s`` from its creation). No
  attempt starts unless a whole request (``request_timeout_s``) still fits before the
  deadline, and no wait is started that would not leave room for one — such a wait gives
  up at once with a :class:`GitHubApiError` instead. Requests are capped by
  ``request_timeout_s`` (a socket timeout). So every operation of one command ends within
  ``budget_s`` plus PyGithub's write spacing (``write_interval_s``) — also when a server
  trickles its answer a byte at a time (each call runs in a helper thread that is waited
  for only until the deadline).

Everything else (401, 403 without rate-limit signs, 404, 422) fails at once. Callers turn
any :class:`GitHubApiError` into a warning: a GitHub failure never changes the verdict.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException

from gate.errors import GitHubApiError as GitHubApiError  # re-exported: callers catch it here
from gate.errors import TransientGitHubError
from gate.github.context import GitHubContext

T = TypeVar("T")

SECONDARY_DEFAULT_WAIT_S = 60.0


API_VERSION = "2022-11-28"
"""The REST API version ToolGate is written against (``X-GitHub-Api-Version``)."""
API_ACCEPT = "application/vnd.github+json"


class ApiToken(Auth.Token):
    """The token, plus the two headers GitHub asks every REST request to send: ``Accept:
    application/vnd.github+json`` and ``X-GitHub-Api-Version``. PyGithub calls
    :meth:`authentication` for every request it makes, so this is the one place they are
    added (PyGithub's own defaults differ across its versions; some endpoints of it send
    an old preview media type)."""

    def authentication(self, headers: dict[str, str]) -> None:
        super().authentication(headers)
        headers["Accept"] = API_ACCEPT
        headers["X-GitHub-Api-Version"] = API_VERSION


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    budget_s: float = 60.0
    request_timeout_s: int = 10
    backoff_s: float = 1.0
    backoff_max_s: float = 16.0
    max_attempts: int = 5


@dataclass(frozen=True, slots=True)
class _Failure:
    retryable: bool
    wait_s: float | None
    status: int | None
    message: str
    rate_limited: bool = False


class GitHubClient:
    """A PyGithub ``Github`` plus :meth:`call`, which runs one operation under the policy."""

    def __init__(
        self,
        *,
        token: str,
        api_url: str,
        policy: RetryPolicy | None = None,
        write_interval_s: float = 1.0,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.deadline = time.monotonic() + self.policy.budget_s
        self.timeout_s = max(1, min(self.policy.request_timeout_s, int(self.policy.budget_s)))
        self.gh = Github(
            auth=ApiToken(token),
            base_url=api_url,
            timeout=self.timeout_s,
            retry=None,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=write_interval_s or None,
        )
        self.calls = 0
        """HTTP attempts made through :meth:`call` (for tests and the log)."""

    def __repr__(self) -> str:
        return f"GitHubClient(base_url={self.gh.requester.base_url!r})"

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def call(self, what: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` (one or more requests), retrying as the module docstring says."""
        attempt = 0
        while True:
            attempt += 1
            left = self.remaining_s()
            if left < self.timeout_s if attempt > 1 else left <= 0:
                raise GitHubApiError(
                    what,
                    f"out of time (the GitHub budget is {self.policy.budget_s:g} s)",
                    attempts=attempt - 1,
                )
            self.calls += 1
            try:
                return self._within_budget(what, fn, attempt)
            except GithubException as exc:
                failure = self._classify(exc)
            except TransientGitHubError as exc:
                failure = _Failure(True, None, exc.status, str(exc))
            except requests.exceptions.Timeout:
                failure = _Failure(True, None, None, f"no answer within {self.timeout_s} s")
            except requests.exceptions.RequestException as exc:
                failure = _Failure(True, None, None, f"connection failed: {type(exc).__name__}")
            if not failure.retryable or attempt >= self.policy.max_attempts:
                raise GitHubApiError(
                    what,
                    failure.message,
                    status=failure.status,
                    attempts=attempt,
                    rate_limited=failure.rate_limited,
                )
            wait = failure.wait_s
            if wait is None:
                wait = min(self.policy.backoff_max_s, self.policy.backoff_s * 2 ** (attempt - 1))
            if self.remaining_s() - wait < self.timeout_s:
                raise GitHubApiError(
                    what,
                    f"{failure.message}; retrying would need a {wait:g} s wait, beyond the "
                    f"GitHub time budget ({self.policy.budget_s:g} s)",
                    status=failure.status,
                    attempts=attempt,
                    rate_limited=failure.rate_limited,
                )
            time.sleep(wait)

    def _within_budget(self, what: str, fn: Callable[[], T], attempt: int) -> T:
        """``fn()`` in a helper thread, waited for until the budget's deadline: requests'
        timeout bounds each socket read, not a server that trickles a byte at a time. An
        overdue call is abandoned (its daemon thread ends with its socket, or the process)."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # re-raised below, in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=target, name="toolgate-github", daemon=True)
        worker.start()
        worker.join(max(self.remaining_s(), 0.0) + 1.0)
        if worker.is_alive():
            raise GitHubApiError(
                what,
                "no complete answer before the GitHub time budget "
                f"({self.policy.budget_s:g} s) ran out",
                attempts=attempt,
            )
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]

    def _classify(self, exc: GithubException) -> _Failure:
        status = exc.status
        headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
        message = _message(exc.data) or str(exc)
        if status is not None and status >= 500:
            return _Failure(True, _retry_after(headers, time.time), status, message)
        if status in (403, 429):
            lowered = message.lower()
            secondary = "secondary rate limit" in lowered or lowered.endswith(
                (
                    "please retry your request again later.",
                    "please wait a few minutes before you try again.",
                )
            )
            primary = headers.get("x-ratelimit-remaining") == "0" or lowered.startswith(
                "api rate limit exceeded"
            )
            wait = _retry_after(headers, time.time)
            if wait is not None or secondary or primary or status == 429:
                if wait is None and primary and headers.get("x-ratelimit-reset", "").isdigit():
                    wait = max(0.0, int(headers["x-ratelimit-reset"]) - time.time()) + 1.0
                if wait is None:
                    wait = SECONDARY_DEFAULT_WAIT_S
                kind = "secondary rate limit" if secondary else "rate limit"
                return _Failure(True, wait, status, f"{kind}: {message}", rate_limited=True)
        return _Failure(False, None, status, message)


ClientFactory = Callable[[GitHubContext], "GitHubClient"]
"""Builds the client for one GitHub operation (the Action and tests pass their own)."""


def client_for(ctx: GitHubContext) -> GitHubClient:
    """The client of the context's token (the one token rule: :mod:`gate.github.context`),
    API URL and time budget."""
    if not ctx.token:
        raise GitHubApiError("authenticate", "no token (the github-token input or GITHUB_TOKEN)")
    return GitHubClient(
        token=ctx.token, api_url=ctx.api_url, policy=RetryPolicy(budget_s=ctx.budget_s)
    )


def _message(data: Any) -> str:
    if isinstance(data, Mapping):
        msg = data.get("message")
        errors = data.get("errors")
        text = str(msg) if msg else ""
        if isinstance(errors, list) and errors:
            details = "; ".join(
                str(e.get("message") or e.get("code") or e) if isinstance(e, Mapping) else str(e)
                for e in errors[:3]
            )
            text = f"{text} ({details})" if text else details
        return text
    return str(data) if data else ""


def _retry_after(headers: Mapping[str, str], wall: Callable[[], float]) -> float | None:
    """Seconds from a ``Retry-After`` header: an integer, or an HTTP date."""
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - wall())
