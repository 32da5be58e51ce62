"""GitHub Actions endpoints for the fake GitHub server (``tests/servers/github_server.py``).

Adds, with the server's auth, fault injection, call counting and logging::

    GET {prefix}/repos/{o}/{r}/actions/workflows/{id or file}            get_workflow
    GET {prefix}/repos/{o}/{r}/actions/workflows/{id or file}/runs       list_workflow_runs
        (?branch= &status= &head_sha= &event= &per_page= &page=; newest first)
    GET {prefix}/repos/{o}/{r}/actions/runs/{id}                         get_run
    GET {prefix}/repos/{o}/{r}/actions/runs/{id}/artifacts               list_run_artifacts
    GET {prefix}/repos/{o}/{r}/actions/artifacts  (?name=)               list_artifacts
    GET {prefix}/repos/{o}/{r}/actions/artifacts/{id}/zip                download_artifact
        → 302 to {prefix}/_blobs/artifacts/{id}.zip on the same server (as github.com
          redirects to short-lived storage URLs), which serves the zip bytes (blob)
    GET {prefix}/repos/{o}/{r}/commits/{sha}                             get_commit
    GET {prefix}/repos/{o}/{r}/commits/{sha}/pulls                       commit_pulls
    GET {prefix}/repos/{o}/{r}/pulls  (?state=)                          list_pulls

State lives in ``server.extra["actions"]`` (:class:`ActionsState`); build it with::

    gh = GitHubServer(register=[github_actions_routes.register])
    st = github_actions_routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    run = st.add_run(wf, head_sha="b" * 40, branch="main", event="push")
    st.add_artifact(run, "toolgate-results", {"results.json": data})

Pull requests are the server's own (``gh.add_pull``); ``commits/{sha}/pulls`` answers the
open PRs whose head is ``sha`` unless ``st.commit_pulls_empty`` is set (as GitHub may
answer for a fork's commit), so callers must also be able to fall back to listing PRs.
"""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.servers.github_server import GitHubServer, Request, Response

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
_T0 = 1_700_000_000


def iso(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@dataclass
class FakeWorkflow:
    id: int
    file: str
    name: str


@dataclass
class FakeRun:
    id: int
    run_number: int
    workflow: FakeWorkflow
    head_branch: str
    head_sha: str
    event: str
    conclusion: str | None
    created: int
    head_repository_id: int = 1
    """1 is the server's repository; anything else models a fork."""

    @property
    def status(self) -> str:
        return "completed" if self.conclusion is not None else "in_progress"


@dataclass
class FakeArtifact:
    id: int
    run: FakeRun
    name: str
    data: bytes
    created: int
    expired: bool = False
    declared_size: int | None = None
    """Size the API reports; defaults to ``len(data)`` (tests may lie to test caps)."""


@dataclass
class ActionsState:
    workflows: list[FakeWorkflow] = field(default_factory=list)
    runs: list[FakeRun] = field(default_factory=list)
    artifacts: list[FakeArtifact] = field(default_factory=list)
    commit_pulls_empty: bool = False
    _next: int = 5000

    def _id(self) -> int:
        self._next += 1
        return self._next

    def add_workflow(self, file: str, name: str) -> FakeWorkflow:
        wf = FakeWorkflow(self._id(), file, name)
        self.workflows.append(wf)
        return wf

    def add_run(
        self,
        workflow: FakeWorkflow,
        *,
        head_sha: str,
        branch: str = "main",
        event: str = "push",
        conclusion: str | None = "success",
        age_days: float = 1.0,
        now: int = _T0,
        head_repository_id: int = 1,
    ) -> FakeRun:
        number = 1 + sum(1 for r in self.runs if r.workflow is workflow)
        run = FakeRun(
            self._id(),
            number + 100,
            workflow,
            branch,
            head_sha,
            event,
            conclusion,
            int(now - age_days * 86400),
            head_repository_id,
        )
        self.runs.append(run)
        return run

    def add_artifact(
        self,
        run: FakeRun,
        name: str,
        files: dict[str, bytes] | None = None,
        *,
        data: bytes | None = None,
        expired: bool = False,
        declared_size: int | None = None,
    ) -> FakeArtifact:
        """An artifact holding ``files`` (zipped here) or the raw ``data`` given."""
        if data is None:
            data = make_zip(files or {})
        art = FakeArtifact(self._id(), run, name, data, run.created + 60, expired, declared_size)
        self.artifacts.append(art)
        return art

    def workflow(self, key: str) -> FakeWorkflow | None:
        for wf in self.workflows:
            if key in (str(wf.id), wf.file):
                return wf
        return None


def make_zip(files: dict[str, bytes]) -> bytes:
    """A zip as actions/upload-artifact makes it (deflated members, forward slashes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    return buf.getvalue()


def state(gh: GitHubServer) -> ActionsState:
    st = gh.extra.get("actions")
    assert isinstance(st, ActionsState), "register() was not called for this server"
    return st


def register(gh: GitHubServer) -> None:
    gh.extra["actions"] = ActionsState()
    add = gh.add_route
    add("GET", _REPO + r"/actions/workflows/(?P<wf>[^/]+)", _get_workflow, name="get_workflow")
    add(
        "GET",
        _REPO + r"/actions/workflows/(?P<wf>[^/]+)/runs",
        _list_runs,
        name="list_workflow_runs",
    )
    add("GET", _REPO + r"/actions/runs/(?P<rid>\d+)", _get_run, name="get_run")
    add(
        "GET",
        _REPO + r"/actions/runs/(?P<rid>\d+)/artifacts",
        _list_run_artifacts,
        name="list_run_artifacts",
    )
    add("GET", _REPO + r"/actions/artifacts", _list_artifacts, name="list_artifacts")
    add("GET", _REPO + r"/actions/artifacts/(?P<aid>\d+)/zip", _download, name="download_artifact")
    add("GET", r"/_blobs/artifacts/(?P<aid>\d+)\.zip", _blob, name="blob")
    add("GET", _REPO + r"/commits/(?P<sha>[0-9a-f]{40})", _get_commit, name="get_commit")
    add("GET", _REPO + r"/commits/(?P<sha>[0-9a-f]{40})/pulls", _commit_pulls, name="commit_pulls")
    add("GET", _REPO + r"/pulls", _list_pulls, name="list_pulls")


# ─── JSON shapes (the fields PyGithub reads) ──────────────────────────────────


def _repo_json(gh: GitHubServer, repo_id: int = 1) -> dict[str, Any]:
    owner = gh.owner if repo_id == 1 else f"fork{repo_id}"
    return {
        "id": repo_id,
        "name": gh.repo,
        "full_name": f"{owner}/{gh.repo}",
        "owner": gh.user_json(owner),
        "url": f"{gh.api_url}/repos/{owner}/{gh.repo}",
    }


def _workflow_json(gh: GitHubServer, wf: FakeWorkflow) -> dict[str, Any]:
    return {
        "id": wf.id,
        "name": wf.name,
        "path": f".github/workflows/{wf.file}",
        "state": "active",
        "url": f"{gh.repo_url()}/actions/workflows/{wf.id}",
        "html_url": f"https://github.test/{gh.owner}/{gh.repo}/actions/workflows/{wf.file}",
    }


def _run_json(gh: GitHubServer, run: FakeRun) -> dict[str, Any]:
    url = f"{gh.repo_url()}/actions/runs/{run.id}"
    return {
        "id": run.id,
        "name": run.workflow.name,
        "run_number": run.run_number,
        "run_attempt": 1,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": run.workflow.id,
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "path": f".github/workflows/{run.workflow.file}",
        "url": url,
        "html_url": f"https://github.test/{gh.owner}/{gh.repo}/actions/runs/{run.id}",
        "artifacts_url": f"{url}/artifacts",
        "workflow_url": f"{gh.repo_url()}/actions/workflows/{run.workflow.id}",
        "created_at": iso(run.created),
        "updated_at": iso(run.created + 300),
        "run_started_at": iso(run.created),
        "pull_requests": [],
        "head_repository": _repo_json(gh, run.head_repository_id),
        "repository": _repo_json(gh),
    }


def _artifact_json(gh: GitHubServer, art: FakeArtifact) -> dict[str, Any]:
    url = f"{gh.repo_url()}/actions/artifacts/{art.id}"
    return {
        "id": art.id,
        "node_id": f"MDg6QXJ0aWZhY3Q{art.id}",
        "name": art.name,
        "size_in_bytes": art.declared_size if art.declared_size is not None else len(art.data),
        "url": url,
        "archive_download_url": f"{url}/zip",
        "expired": art.expired,
        "created_at": iso(art.created),
        "updated_at": iso(art.created),
        "expires_at": iso(art.created + 90 * 86400),
        "workflow_run": {
            "id": art.run.id,
            "repository_id": 1,
            "head_repository_id": art.run.head_repository_id,
            "head_branch": art.run.head_branch,
            "head_sha": art.run.head_sha,
        },
    }


def _pull_json(gh: GitHubServer, number: int) -> dict[str, Any]:
    pr = gh.pulls[number]
    return {
        "number": number,
        "state": "open",
        "title": f"PR {number}",
        "url": f"{gh.repo_url()}/pulls/{number}",
        "issue_url": f"{gh.repo_url()}/issues/{number}",
        "html_url": f"https://github.test/{gh.owner}/{gh.repo}/pull/{number}",
        "base": {"sha": pr["base_sha"], "ref": "main"},
        "head": {"sha": pr["head_sha"], "ref": f"feature-{number}"},
    }


def _page(gh: GitHubServer, req: Request, path: str, items: list[Any], key: str | None) -> Response:
    per_page = max(1, min(100, int(req.query.get("per_page", "30"))))
    page = max(1, int(req.query.get("page", "1")))
    chunk = items[(page - 1) * per_page : page * per_page]
    last = max(1, -(-len(items) // per_page))
    keep = {k: v for k, v in req.query.items() if k not in ("page", "per_page")}
    links = []
    if page < last:
        nxt = urlencode({**keep, "per_page": per_page, "page": page + 1})
        end = urlencode({**keep, "per_page": per_page, "page": last})
        links += [
            f'<{gh.api_url}{path}?{nxt}>; rel="next"',
            f'<{gh.api_url}{path}?{end}>; rel="last"',
        ]
    headers = {"Link": ", ".join(links)} if links else {}
    body: Any = chunk if key is None else {"total_count": len(items), key: chunk}
    return Response(200, body, headers)


def _bad_repo(gh: GitHubServer, owner: str, repo: str) -> Response | None:
    if (owner, repo) != (gh.owner, gh.repo):
        return Response(404, {"message": "Not Found"})
    return None


# ─── handlers ─────────────────────────────────────────────────────────────────


def _get_workflow(gh: GitHubServer, req: Request, owner: str, repo: str, wf: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    found = state(gh).workflow(wf)
    if found is None:
        return Response(404, {"message": "Not Found"})
    return Response(200, _workflow_json(gh, found))


def _list_runs(gh: GitHubServer, req: Request, owner: str, repo: str, wf: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    st = state(gh)
    found = st.workflow(wf)
    if found is None:
        return Response(404, {"message": "Not Found"})
    q = req.query
    runs = [r for r in st.runs if r.workflow is found]
    if "branch" in q:
        runs = [r for r in runs if r.head_branch == q["branch"]]
    if "head_sha" in q:
        runs = [r for r in runs if r.head_sha == q["head_sha"]]
    if "event" in q:
        runs = [r for r in runs if r.event == q["event"]]
    if "status" in q:
        s = q["status"]
        runs = [r for r in runs if s in (r.status, r.conclusion)]
    runs.sort(key=lambda r: (r.created, r.id), reverse=True)
    path = req.path
    return _page(gh, req, path, [_run_json(gh, r) for r in runs], "workflow_runs")


def _get_run(gh: GitHubServer, req: Request, owner: str, repo: str, rid: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    run = next((r for r in state(gh).runs if r.id == int(rid)), None)
    if run is None:
        return Response(404, {"message": "Not Found"})
    return Response(200, _run_json(gh, run))


def _list_run_artifacts(
    gh: GitHubServer, req: Request, owner: str, repo: str, rid: str
) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    arts = [a for a in state(gh).artifacts if a.run.id == int(rid)]
    return _page(gh, req, req.path, [_artifact_json(gh, a) for a in arts], "artifacts")


def _list_artifacts(gh: GitHubServer, req: Request, owner: str, repo: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    arts = list(state(gh).artifacts)
    if "name" in req.query:
        arts = [a for a in arts if a.name == req.query["name"]]
    arts.sort(key=lambda a: (a.created, a.id), reverse=True)
    return _page(gh, req, req.path, [_artifact_json(gh, a) for a in arts], "artifacts")


def _find_artifact(gh: GitHubServer, aid: str) -> FakeArtifact | None:
    return next((a for a in state(gh).artifacts if a.id == int(aid)), None)


def _download(gh: GitHubServer, req: Request, owner: str, repo: str, aid: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    art = _find_artifact(gh, aid)
    if art is None:
        return Response(404, {"message": "Not Found"})
    if art.expired:
        return Response(410, {"message": "Artifact has expired"})
    return Response(302, None, {"Location": f"{gh.api_url}/_blobs/artifacts/{art.id}.zip"})


def _blob(gh: GitHubServer, req: Request, aid: str) -> Response:
    art = _find_artifact(gh, aid)
    if art is None:
        return Response(404, {"message": "BlobNotFound"})
    return Response(200, art.data)


def _get_commit(gh: GitHubServer, req: Request, owner: str, repo: str, sha: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    return Response(200, {"sha": sha, "url": f"{gh.repo_url()}/commits/{sha}", "files": []})


def _commit_pulls(gh: GitHubServer, req: Request, owner: str, repo: str, sha: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    numbers = (
        []
        if state(gh).commit_pulls_empty
        else sorted(n for n, pr in gh.pulls.items() if pr["head_sha"] == sha)
    )
    return _page(gh, req, req.path, [_pull_json(gh, n) for n in numbers], None)


def _list_pulls(gh: GitHubServer, req: Request, owner: str, repo: str) -> Response:
    if (bad := _bad_repo(gh, owner, repo)) is not None:
        return bad
    if req.query.get("state", "open") not in ("open", "all"):
        return _page(gh, req, req.path, [], None)
    numbers = sorted(gh.pulls, reverse=True)
    return _page(gh, req, req.path, [_pull_json(gh, n) for n in numbers], None)
