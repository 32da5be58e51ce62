"""A small GitHub REST API on 127.0.0.1 for tests: real HTTP, in-memory state, faults.

It implements the endpoints PyGithub calls to upsert a sticky PR comment::

    GET    {prefix}/user                                   (403 for app/installation tokens)
    GET    {prefix}/repos/{owner}/{repo}
    GET    {prefix}/repos/{owner}/{repo}/pulls/{number}
    GET    {prefix}/repos/{owner}/{repo}/issues/{number}
    GET    {prefix}/repos/{owner}/{repo}/issues/{number}/comments   (Link-header pagination)
    POST   {prefix}/repos/{owner}/{repo}/issues/{number}/comments
    GET    {prefix}/repos/{owner}/{repo}/issues/comments/{id}
    PATCH  {prefix}/repos/{owner}/{repo}/issues/comments/{id}
    DELETE {prefix}/repos/{owner}/{repo}/issues/comments/{id}

``prefix`` is empty (github.com style) or e.g. ``/api/v3`` (GitHub Enterprise Server style),
so tests can check that ``GITHUB_API_URL`` is honoured.

Tokens. ``server.add_token(token, login, kind=...)``: ``"user"`` tokens can read ``/user``;
``"app"`` tokens (like ``GITHUB_TOKEN``) get ``403 Resource not accessible by integration``
there, as on github.com, and their comments are authored by ``login`` (e.g.
``github-actions[bot]``); ``read_only=True`` tokens (fork PRs) get 403 on every write.
An unknown token gets 401 ``Bad credentials``.

Faults, per route and per call count::

    server.inject("create_comment", Fault(status=502), calls=[1])       # 1st call fails
    server.inject("list_comments", Fault.secondary_rate_limit(retry_after=1), times=2)
    server.inject("get_issue", Fault(delay=5.0))                         # every call is slow
    server.inject("create_comment", Fault(status=502, apply=True), calls=[1])
        # the comment IS created, then a 502 is returned: what makes retried POSTs duplicate

Route names are the ``name`` of each :class:`Route` (see ``_BUILTIN_ROUTES``). Call counts
start at 1 per route and count every request the route received, failed or not
(``server.calls[name]``). Every request is logged in ``server.log`` as
``(method, path_with_query, status, monotonic_time)``, and the token it carried in
``server.tokens_seen`` as ``(route name, token)``.

Extending the route table. Other test modules add endpoints without touching this file:
a module such as ``tests/servers/github_actions_routes.py`` defines::

    def register(server: GitHubServer) -> None:
        server.add_route("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/actions/artifacts",
                         list_artifacts, name="list_artifacts")

where a handler is ``handler(server, request, **groups) -> Response`` (groups are the
regex's named groups, ``request`` a :class:`Request`). Extra state belongs in
``server.extra`` (a free dict). Added routes get the same auth, fault injection, call
counting and logging as the built-in ones. ``GitHubServer(register=[module.register])``
calls the registrations before the server starts.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
INTEGRATION_FORBIDDEN = "Resource not accessible by integration"


@dataclass
class Request:
    method: str
    path: str
    """Path without the API prefix and without the query string."""
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    """The decoded JSON body (``None`` when empty)."""
    token: str | None
    login: str | None


@dataclass
class Response:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[..., Response]


@dataclass
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    name: str
    write: bool = False


@dataclass
class Fault:
    """What to do instead of (or as well as) answering normally.

    ``status`` replaces the response (with ``body`` — JSON, or raw ``bytes`` — or a default
    message, and ``headers``);
    ``delay`` sleeps before answering (slow responses; with ``status=None`` the normal
    answer follows the sleep); ``apply`` runs the real handler first, so the state changes
    even though the client sees the failure.
    """

    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    apply: bool = False

    @classmethod
    def secondary_rate_limit(cls, retry_after: int | None = 1) -> Fault:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        headers["X-RateLimit-Remaining"] = "4000"
        return cls(status=403, body={"message": SECONDARY_RATE_LIMIT_MESSAGE}, headers=headers)


@dataclass
class _Injected:
    fault: Fault
    calls: frozenset[int] | None
    """Call numbers (1-based) this fault applies to; ``None`` = every call."""


@dataclass
class Token:
    login: str
    kind: str = "user"
    read_only: bool = False


@dataclass
class Comment:
    id: int
    number: int
    body: str
    login: str
    created_at: str
    updated_at: str


class GitHubServer:
    """The server; use as a context manager (``with GitHubServer() as gh: gh.api_url``)."""

    def __init__(
        self,
        *,
        prefix: str = "",
        owner: str = "octo",
        repo: str = "agent",
        register: Iterable[Callable[[GitHubServer], None]] = (),
    ) -> None:
        self.prefix = prefix.rstrip("/")
        self.owner = owner
        self.repo = repo
        self.tokens: dict[str, Token] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, Comment] = {}
        self.extra: dict[str, Any] = {}
        self.calls: dict[str, int] = {}
        self.log: list[tuple[str, str, int, float]] = []
        self.headers_seen: list[tuple[str, dict[str, str]]] = []
        """``(route name, request headers)`` of every request that reached a route."""
        self.tokens_seen: list[tuple[str, str | None]] = []
        """``(route name, token)`` of every request that reached a route, in order: which
        token each call carried (the ``Authorization`` header), known to the server or not."""
        self.lock = threading.RLock()
        self._next_id = 1000
        self._clock = 0
        self._faults: dict[str, list[_Injected]] = {}
        self._routes: list[Route] = []
        for method, pattern, handler, name, write in _BUILTIN_ROUTES:
            self.add_route(method, pattern, handler, name=name, write=write)
        for reg in register:
            reg(self)
        self._httpd: ThreadingHTTPServer | None = None
        self._root = ""
        self._thread: threading.Thread | None = None

    # ── setup ───────────────────────────────────────────────────────────────

    def add_route(
        self, method: str, pattern: str, handler: Handler, *, name: str, write: bool | None = None
    ) -> None:
        """Register an endpoint; ``pattern`` is matched in full against the path without the
        prefix. Later routes win over earlier ones with the same method and pattern."""
        is_write = method.upper() != "GET" if write is None else write
        self._routes.insert(0, Route(method.upper(), re.compile(pattern), handler, name, is_write))

    def add_token(
        self, token: str, login: str, *, kind: str = "user", read_only: bool = False
    ) -> None:
        self.tokens[token] = Token(login, kind, read_only)

    def add_pull(self, number: int, *, base_sha: str = "b" * 40, head_sha: str = "h" * 40) -> None:
        self.pulls[number] = {"base_sha": base_sha, "head_sha": head_sha}

    def add_comment(self, number: int, body: str, login: str) -> Comment:
        with self.lock:
            self._next_id += 1
            stamp = self._stamp()
            c = Comment(self._next_id, number, body, login, stamp, stamp)
            self.comments[c.id] = c
            return c

    def inject(
        self,
        route: str,
        fault: Fault,
        *,
        calls: Iterable[int] | None = None,
        times: int | None = None,
    ) -> None:
        """Make ``route`` misbehave: on the given 1-based call numbers, on the next
        ``times`` calls, or (neither given) on every call."""
        with self.lock:
            if times is not None:
                done = self.calls.get(route, 0)
                calls = range(done + 1, done + 1 + times)
            chosen = frozenset(calls) if calls is not None else None
            self._faults.setdefault(route, []).append(_Injected(fault, chosen))

    def clear_faults(self) -> None:
        with self.lock:
            self._faults.clear()

    # ── queries for assertions ──────────────────────────────────────────────

    def comments_on(self, number: int) -> list[Comment]:
        with self.lock:
            return sorted(
                (c for c in self.comments.values() if c.number == number), key=lambda c: c.id
            )

    def requests(self, method: str | None = None) -> list[tuple[str, str, int, float]]:
        return [r for r in self.log if method is None or r[0] == method]

    # ── lifecycle ───────────────────────────────────────────────────────────

    @property
    def root(self) -> str:
        assert self._root, "server not started"
        return self._root

    @property
    def api_url(self) -> str:
        """What ``GITHUB_API_URL`` should be set to."""
        return self.root + self.prefix

    def start(self) -> GitHubServer:
        server = self

        class _H(_RequestHandler):
            gh = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        host, port = self._httpd.server_address[:2]
        self._root = f"http://{host!s}:{port}"
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> GitHubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ── helpers for handlers ────────────────────────────────────────────────

    def _stamp(self) -> str:
        # A deterministic, strictly increasing clock: ordering by created_at is stable.
        self._clock += 1
        t = time.gmtime(1_700_000_000 + self._clock)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", t)

    def repo_url(self) -> str:
        return f"{self.api_url}/repos/{self.owner}/{self.repo}"

    def user_json(self, login: str) -> dict[str, Any]:
        is_bot = login.endswith("[bot]")
        return {
            "login": login,
            "id": zlib.crc32(login.encode()) % 10_000_000,
            "type": "Bot" if is_bot else "User",
            "url": f"{self.api_url}/users/{login}",
        }

    def comment_json(self, c: Comment) -> dict[str, Any]:
        return {
            "id": c.id,
            "node_id": f"IC_{c.id}",
            "url": f"{self.repo_url()}/issues/comments/{c.id}",
            "html_url": f"https://github.test/{self.owner}/{self.repo}/pull/{c.number}#issuecomment-{c.id}",
            "issue_url": f"{self.repo_url()}/issues/{c.number}",
            "body": c.body,
            "user": self.user_json(c.login),
            "created_at": c.created_at,
            "updated_at": c.updated_at,
        }

    def _match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self._routes:
            if route.method != method:
                continue
            m = route.pattern.fullmatch(path)
            if m:
                return route, m.groupdict()
        return None

    def _faults_for(self, route: str, call: int) -> Iterator[Fault]:
        for inj in self._faults.get(route, ()):
            if inj.calls is None or call in inj.calls:
                yield inj.fault


class _RequestHandler(BaseHTTPRequestHandler):
    gh: GitHubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; requests are in gh.log

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def _handle(self, method: str) -> None:
        gh = self.gh
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw.strip() else None
        path = parts.path
        if gh.prefix and path.startswith(gh.prefix):
            path = path[len(gh.prefix) :]
        elif gh.prefix:
            return self._send(method, Response(404, {"message": "Not Found"}))
        auth = self.headers.get("Authorization") or ""
        token = auth.split(None, 1)[1] if " " in auth else None
        tok = gh.tokens.get(token or "")
        request = Request(
            method, path, query, dict(self.headers.items()), body, token, tok.login if tok else None
        )
        found = gh._match(method, path)
        if found is None:
            return self._send(method, Response(404, {"message": "Not Found"}))
        route, groups = found
        with gh.lock:
            gh.tokens_seen.append((route.name, token))
            gh.headers_seen.append((route.name, dict(self.headers.items())))
            gh.calls[route.name] = call = gh.calls.get(route.name, 0) + 1
            faults = list(gh._faults_for(route.name, call))
        for f in faults:
            if f.delay:
                time.sleep(f.delay)
        failing = next((f for f in faults if f.status is not None), None)
        if failing is not None and not failing.apply:
            return self._send(method, _fault_response(failing))
        if tok is None:
            response = Response(401, {"message": "Bad credentials"})
        elif route.write and tok.read_only:
            response = Response(403, {"message": INTEGRATION_FORBIDDEN})
        else:
            with gh.lock:
                response = route.handler(gh, request, **groups)
        if failing is not None:
            response = _fault_response(failing)
        self._send(method, response)

    def _send(self, method: str, response: Response) -> None:
        if isinstance(response.body, bytes):  # raw bytes (an artifact zip, an HTML page)
            data = response.body
        else:
            data = b"" if response.body is None else json.dumps(response.body).encode()
        with self.gh.lock:
            self.gh.log.append((method, self.path, response.status, time.monotonic()))
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for k, v in response.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to answer


def _fault_response(f: Fault) -> Response:
    assert f.status is not None
    body = f.body if f.body is not None else {"message": f"Injected failure {f.status}"}
    return Response(f.status, body, dict(f.headers))


# ─── built-in routes ──────────────────────────────────────────────────────────

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


def _check_repo(gh: GitHubServer, owner: str, repo: str) -> Response | None:
    if (owner, repo) != (gh.owner, gh.repo):
        return Response(404, {"message": "Not Found"})
    return None


def _get_user(gh: GitHubServer, req: Request) -> Response:
    tok = gh.tokens[req.token or ""]
    if tok.kind != "user":
        return Response(403, {"message": INTEGRATION_FORBIDDEN})
    return Response(200, gh.user_json(tok.login))


def _get_repo(gh: GitHubServer, req: Request, owner: str, repo: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    return Response(
        200,
        {
            "id": 1,
            "name": repo,
            "full_name": f"{owner}/{repo}",
            "owner": gh.user_json(owner),
            "private": False,
            "url": gh.repo_url(),
            "html_url": f"https://github.test/{owner}/{repo}",
            "default_branch": "main",
        },
    )


def _get_pull(gh: GitHubServer, req: Request, owner: str, repo: str, number: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    pr = gh.pulls.get(int(number))
    if pr is None:
        return Response(404, {"message": "Not Found"})
    return Response(
        200,
        {
            "number": int(number),
            "url": f"{gh.repo_url()}/pulls/{number}",
            "issue_url": f"{gh.repo_url()}/issues/{number}",
            "state": "open",
            "title": f"PR {number}",
            "base": {"sha": pr["base_sha"], "ref": "main"},
            "head": {"sha": pr["head_sha"], "ref": f"feature-{number}"},
        },
    )


def _get_issue(gh: GitHubServer, req: Request, owner: str, repo: str, number: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    if int(number) not in gh.pulls:
        return Response(404, {"message": "Not Found"})
    return Response(
        200,
        {
            "number": int(number),
            "url": f"{gh.repo_url()}/issues/{number}",
            "comments_url": f"{gh.repo_url()}/issues/{number}/comments",
            "state": "open",
            "title": f"PR {number}",
            "pull_request": {"url": f"{gh.repo_url()}/pulls/{number}"},
            "comments": len(gh.comments_on(int(number))),
        },
    )


def _list_comments(gh: GitHubServer, req: Request, owner: str, repo: str, number: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    if int(number) not in gh.pulls:
        return Response(404, {"message": "Not Found"})
    per_page = max(1, min(100, int(req.query.get("per_page", "30"))))
    page = max(1, int(req.query.get("page", "1")))
    items = gh.comments_on(int(number))
    chunk = items[(page - 1) * per_page : page * per_page]
    last = max(1, -(-len(items) // per_page))
    base = f"{gh.repo_url()}/issues/{number}/comments"
    links = []
    if page < last:
        links.append(f'<{base}?{urlencode({"per_page": per_page, "page": page + 1})}>; rel="next"')
        links.append(f'<{base}?{urlencode({"per_page": per_page, "page": last})}>; rel="last"')
    if page > 1:
        links.append(f'<{base}?{urlencode({"per_page": per_page, "page": page - 1})}>; rel="prev"')
        links.append(f'<{base}?{urlencode({"per_page": per_page, "page": 1})}>; rel="first"')
    headers = {"Link": ", ".join(links)} if links else {}
    return Response(200, [gh.comment_json(c) for c in chunk], headers)


def _create_comment(gh: GitHubServer, req: Request, owner: str, repo: str, number: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    if int(number) not in gh.pulls:
        return Response(404, {"message": "Not Found"})
    body = (req.body or {}).get("body")
    if not isinstance(body, str):
        return Response(422, {"message": "Validation Failed"})
    if len(body) > 65_536:
        return Response(
            422,
            {
                "message": "Validation Failed",
                "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
            },
        )
    assert req.login is not None
    c = gh.add_comment(int(number), body, req.login)
    return Response(201, gh.comment_json(c))


def _get_comment(gh: GitHubServer, req: Request, owner: str, repo: str, cid: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    c = gh.comments.get(int(cid))
    if c is None:
        return Response(404, {"message": "Not Found"})
    return Response(200, gh.comment_json(c))


def _edit_comment(gh: GitHubServer, req: Request, owner: str, repo: str, cid: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    c = gh.comments.get(int(cid))
    if c is None:
        return Response(404, {"message": "Not Found"})
    if c.login != req.login:
        # Editing someone else's comment needs write access to the repo; the tokens
        # here model the usual PR bot, which is not allowed to.
        return Response(403, {"message": INTEGRATION_FORBIDDEN})
    body = (req.body or {}).get("body")
    if not isinstance(body, str):
        return Response(422, {"message": "Validation Failed"})
    if len(body) > 65_536:
        return Response(422, {"message": "Validation Failed"})
    c.body = body
    c.updated_at = gh._stamp()
    return Response(200, gh.comment_json(c))


def _delete_comment(gh: GitHubServer, req: Request, owner: str, repo: str, cid: str) -> Response:
    if (bad := _check_repo(gh, owner, repo)) is not None:
        return bad
    c = gh.comments.get(int(cid))
    if c is None:
        return Response(404, {"message": "Not Found"})
    if c.login != req.login:
        return Response(403, {"message": INTEGRATION_FORBIDDEN})
    del gh.comments[c.id]
    return Response(204, None)


_BUILTIN_ROUTES: list[tuple[str, str, Handler, str, bool]] = [
    ("GET", r"/user", _get_user, "get_user", False),
    ("GET", _REPO, _get_repo, "get_repo", False),
    ("GET", _REPO + r"/pulls/(?P<number>\d+)", _get_pull, "get_pull", False),
    ("GET", _REPO + r"/issues/(?P<number>\d+)", _get_issue, "get_issue", False),
    ("GET", _REPO + r"/issues/(?P<number>\d+)/comments", _list_comments, "list_comments", False),
    ("POST", _REPO + r"/issues/(?P<number>\d+)/comments", _create_comment, "create_comment", True),
    ("GET", _REPO + r"/issues/comments/(?P<cid>\d+)", _get_comment, "get_comment", False),
    ("PATCH", _REPO + r"/issues/comments/(?P<cid>\d+)", _edit_comment, "edit_comment", True),
    ("DELETE", _REPO + r"/issues/comments/(?P<cid>\d+)", _delete_comment, "delete_comment", True),
]
