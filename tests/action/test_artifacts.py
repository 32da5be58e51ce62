"""``baseline: auto``: the committed file, the base branch's artifact, or none — against a
real HTTP server speaking GitHub's REST API (tests/servers), through PyGithub."""

from __future__ import annotations

import io
import random
import threading
import zipfile
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from github import Auth, Github

from gate.config import Config
from gate.errors import GitHubError, ResultsFileError
from gate.github.artifacts import (
    ArtifactSearch,
    BaselineChoice,
    PullRequestRef,
    extract_results,
    find_baseline,
    unsafe_member,
)
from gate.github.client import GitHubClient, RetryPolicy
from gate.results import DatasetInfo, Results, ShardInfo
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import Fault, GitHubServer

TOKEN = "ghs_test_token_for_artifacts"
BASE_SHA = "b" * 40
HEAD_SHA = "c" * 40
DATASET_SHA = "d" * 64
NOW = datetime.fromtimestamp(1_700_000_000, UTC)
PR = PullRequestRef(number=7, base_ref="main", base_sha=BASE_SHA, head_sha=HEAD_SHA)


def results_bytes(
    *, gate: str = "support-agent", sha: str = DATASET_SHA, shard: bool = False
) -> bytes:
    r = Results(
        toolgate_version="0.1.0",
        gate_name=gate,
        dataset=DatasetInfo(path="dataset.jsonl", version="1", sha256=sha, cases=0),
        agent={"kind": "replay"},
        samples=1,
        seed=0,
        shard=ShardInfo(index=1, count=4) if shard else None,
        metrics={},
        cases=[],
    )
    return r.model_dump_json().encode()


def make_config(tmp_path: Path, **baseline: Any) -> Config:
    cfg = Config.model_validate(
        {
            "name": "support-agent",
            "dataset": {"path": "dataset.jsonl"},
            "agent": {"kind": "replay", "runs": "runs.jsonl"},
            "baseline": baseline,
        }
    )
    return cfg.model_copy(update={"source": tmp_path / "toolgate.yml"})


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    server = GitHubServer(register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    with server:
        yield server


def repo_of(gh: GitHubServer) -> Any:
    client = Github(
        auth=Auth.Token(TOKEN),
        base_url=gh.api_url,
        retry=None,
        timeout=5,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    return client.get_repo(f"{gh.owner}/{gh.repo}")


def search_for(gh: GitHubServer, **kw: Any) -> Any:
    def build(pr: PullRequestRef) -> ArtifactSearch:
        return ArtifactSearch(
            repo=repo_of(gh),
            pr=pr,
            artifact_name=kw.pop("artifact_name", "toolgate-results"),
            workflow_file=kw.pop("workflow_file", "toolgate.yml"),
            token=TOKEN,
            now=lambda: NOW,
            **kw,
        )

    return build


def auto(
    gh: GitHubServer, tmp_path: Path, config: Config | None = None, **kw: Any
) -> BaselineChoice:
    return find_baseline(
        config or make_config(tmp_path),
        dest=tmp_path / "baseline" / "results.json",
        pr=PR,
        dataset_sha256=kw.pop("dataset_sha256", DATASET_SHA),
        search=search_for(gh, **kw),
        now=lambda: NOW,
    )


# ─── source 2: this workflow's artifact on the base branch ────────────────────


def test_auto__artifact_at_base_sha__is_used_and_named_in_source(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    newer = st.add_run(wf, head_sha="e" * 40, age_days=0.5)
    st.add_artifact(newer, "toolgate-results", {"results.json": results_bytes()})
    at_base = st.add_run(wf, head_sha=BASE_SHA, age_days=2)
    st.add_artifact(at_base, "toolgate-results", {"results.json": results_bytes()})

    choice = auto(gh, tmp_path)

    assert choice.source == (
        f"artifact toolgate-results of run #{at_base.run_number} on main at bbbbbbb, 2 days old"
    )
    assert choice.path == tmp_path / "baseline" / "results.json"
    assert choice.results is not None and choice.results.dataset.sha256 == DATASET_SHA
    assert choice.warnings == () and choice.notices == ()
    # the zip came through the API's 302 to the storage URL, then the blob
    names = [n for n in ("download_artifact", "blob") if gh.calls.get(n)]
    assert names == ["download_artifact", "blob"]


def test_auto__no_run_at_base_sha__takes_newest_and_says_so(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    older = st.add_run(wf, head_sha="1" * 40, age_days=5)
    st.add_artifact(older, "toolgate-results", {"results.json": results_bytes()})
    newest = st.add_run(wf, head_sha="2" * 40, age_days=3)
    st.add_artifact(newest, "toolgate-results", {"results.json": results_bytes()})

    choice = auto(gh, tmp_path)

    assert choice.source == (
        f"artifact toolgate-results of run #{newest.run_number} on main at 2222222, 3 days old"
    )
    assert choice.results is not None
    assert len(choice.notices) == 1 and "base bbbbbbb" in choice.notices[0]
    assert choice.warnings == ()  # 3 days is within max_age_days (14)


def test_auto__newest_artifact_older_than_max_age__warns_stale(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha="1" * 40, age_days=20),
        "toolgate-results",
        {"results.json": results_bytes()},
    )

    choice = auto(gh, tmp_path, make_config(tmp_path, max_age_days=7))

    assert choice.results is not None and "20 days old" in choice.source
    assert len(choice.warnings) == 1
    assert "older than baseline.max_age_days (7 days)" in choice.warnings[0]


def test_auto__pull_request_runs_named_like_base__are_ignored(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    # a fork's PR from its own `main`: same branch name, not the base branch's results
    fork = st.add_run(wf, head_sha=BASE_SHA, event="pull_request", head_repository_id=99)
    st.add_artifact(fork, "toolgate-results", {"results.json": results_bytes()})
    failed = st.add_run(wf, head_sha=BASE_SHA, conclusion="failure")
    st.add_artifact(failed, "toolgate-results", {"results.json": results_bytes()})

    choice = auto(gh, tmp_path)

    assert choice.path is None and choice.results is None
    assert choice.source == "none (no 'toolgate-results' artifact from main)"
    assert "no successful run of workflow toolgate.yml on main" in choice.notices[0]


def test_auto__expired_artifact__skipped_for_an_older_live_one(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    live = st.add_run(wf, head_sha="1" * 40, age_days=4)
    st.add_artifact(live, "toolgate-results", {"results.json": results_bytes()})
    gone = st.add_run(wf, head_sha="2" * 40, age_days=1)
    st.add_artifact(gone, "toolgate-results", {"results.json": results_bytes()}, expired=True)

    choice = auto(gh, tmp_path)

    assert f"run #{live.run_number} " in choice.source


def test_auto__artifact_of_another_workflow__found_through_repository_artifacts(gh, tmp_path):
    st = routes.state(gh)
    st.add_workflow("toolgate.yml", "ToolGate")  # the PR's workflow: never ran on main
    refresh = st.add_workflow("baseline-refresh.yml", "ToolGate baseline")
    run = st.add_run(refresh, head_sha=BASE_SHA, age_days=1, event="schedule")
    st.add_artifact(run, "toolgate-results", {"results.json": results_bytes()})

    choice = auto(gh, tmp_path)

    assert choice.source == (
        f"artifact toolgate-results of run #{run.run_number} of workflow ToolGate baseline "
        "on main at bbbbbbb, 1 day old"
    )
    assert choice.results is not None


# ─── what makes an artifact unusable ──────────────────────────────────────────


def test_auto__dataset_hash_differs__used_each_case_compared_by_its_own_hash(gh, tmp_path):
    """A pull request that edits the dataset is compared case by case, as with
    ``--baseline FILE``: the artifact of another dataset version is used, with a notice."""
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": results_bytes(sha="9" * 64)},
    )

    choice = auto(gh, tmp_path)

    assert choice.results is not None and choice.path == tmp_path / "baseline" / "results.json"
    assert choice.missing is None
    assert choice.source.startswith("artifact toolgate-results of run #")
    (notice,) = choice.notices
    assert "another version of the dataset (sha256 999999999999…, this run dddddddddddd…)" in (
        notice
    )
    assert "each case is compared by its own hash" in notice


def test_auto__results_of_another_gate__used_the_source_says_whose(gh, tmp_path):
    """A renamed gate (``name:``) keeps its baseline: the artifact is used and the source
    line names the gate that made it."""
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": results_bytes(gate="other-gate")},
    )

    choice = auto(gh, tmp_path)

    assert choice.results is not None and choice.results.gate_name == "other-gate"
    assert choice.source.endswith(", made by the gate 'other-gate' (this gate is 'support-agent')")


def test_auto__results_of_one_shard__compare_nothing_and_say_why(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": results_bytes(shard=True)},
    )

    choice = auto(gh, tmp_path)

    assert choice.results is None and "holds shard 1/4 only" in choice.source
    assert choice.missing is not None and "holds shard 1/4 only" in choice.missing
    assert not (tmp_path / "baseline" / "results.json").exists()


def test_auto__no_artifact__missing_says_why_for_the_first_line(gh, tmp_path):
    st = routes.state(gh)
    st.add_workflow("toolgate.yml", "ToolGate")

    choice = auto(gh, tmp_path)

    assert choice.path is None
    assert choice.missing == "no 'toolgate-results' artifact from main yet"


def test_auto__invalid_results_in_artifact__warns_and_runs_without(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": b'{"schema_version": 1, "cases": "nope"}'},
    )

    choice = auto(gh, tmp_path)

    assert choice.results is None and choice.path is None
    assert "is not a valid results file" in choice.warnings[0]


def test_auto__zip_with_path_traversal__refused_whole(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": results_bytes(), "../../.bashrc": b"echo pwned"},
    )

    choice = auto(gh, tmp_path)

    assert choice.results is None
    assert "member '../../.bashrc' has a '..' segment" in choice.warnings[0]
    assert not (tmp_path / ".bashrc").exists()


def test_auto__declared_size_over_cap__not_downloaded(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA),
        "toolgate-results",
        {"results.json": results_bytes()},
        declared_size=10**9,
    )

    choice = auto(gh, tmp_path, max_zip_bytes=1024 * 1024)

    assert choice.results is None and "over the 1.0 MiB limit" in choice.warnings[0]
    assert gh.calls.get("download_artifact", 0) == 0 and gh.calls.get("blob", 0) == 0


def test_auto__received_bytes_over_cap__download_stopped(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    big = routes.make_zip(
        {"results.json": results_bytes(), "noise.bin": random.Random(0).randbytes(200_000)}
    )
    # the API claims a small size; the bytes say otherwise
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", data=big, declared_size=100
    )

    choice = auto(gh, tmp_path, max_zip_bytes=64 * 1024)

    assert choice.results is None and "download stopped" in choice.warnings[0]


def test_auto__zip_bomb__stopped_at_the_uncompressed_cap(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    bomb = b"{" + b" " * (8 * 1024 * 1024) + b"}"  # compresses ~1000:1
    st.add_artifact(st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": bomb})

    choice = auto(gh, tmp_path, max_results_bytes=1024 * 1024)

    assert choice.results is None and "over the 1.0 MiB limit" in choice.warnings[0]


# ─── GitHub failing, or absent ────────────────────────────────────────────────


def test_auto__api_error__warns_and_runs_without_baseline(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": results_bytes()}
    )
    gh.inject("list_workflow_runs", Fault(status=500))

    choice = auto(gh, tmp_path)

    assert choice.results is None
    assert choice.source == "none (the base branch's results could not be fetched)"
    assert "looking for the baseline artifact failed" in choice.warnings[0]


def test_auto__blob_storage_error__warns_and_runs_without_baseline(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": results_bytes()}
    )
    gh.inject("blob", Fault(status=503))

    choice = auto(gh, tmp_path)

    assert choice.results is None and "answered HTTP 503" in choice.warnings[0]


def test_auto__not_a_pull_request__no_baseline_with_notice(tmp_path):
    choice = find_baseline(
        make_config(tmp_path), dest=tmp_path / "b.json", pr=None, dataset_sha256=None, search=None
    )
    assert choice.path is None and choice.source == "none (not a pull request)"
    assert choice.notices


def test_auto__no_token__no_baseline_with_notice(tmp_path):
    choice = find_baseline(
        make_config(tmp_path), dest=tmp_path / "b.json", pr=PR, dataset_sha256=None, search=None
    )
    assert choice.path is None and "no GitHub token" in choice.notices[0]


# ─── source 1: a committed file ───────────────────────────────────────────────


def test_auto__committed_baseline_path__used_without_asking_github(gh, tmp_path):
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "main.json").write_bytes(results_bytes())
    cfg = make_config(tmp_path, path="baselines/main.json")

    choice = auto(gh, tmp_path, cfg)

    assert choice.source == "committed file baselines/main.json"
    assert choice.path == (tmp_path / "baselines" / "main.json").resolve()
    assert gh.log == []  # not one request


def test_auto__committed_baseline_path_missing__is_an_input_error(tmp_path):
    cfg = make_config(tmp_path, path="baselines/gone.json")
    with pytest.raises(ResultsFileError) as err:
        find_baseline(cfg, dest=tmp_path / "b.json", pr=PR, dataset_sha256=None, search=None)
    assert err.value.problems[0].field == "baseline.path"
    assert "'baselines/gone.json' does not exist" in err.value.problems[0].message


# ─── the redirect leaves the API host: no token follows it ────────────────────


class _Storage(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []
    payload = b""

    def do_GET(self) -> None:
        type(self).seen.append(dict(self.headers.items()))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, *args: Any) -> None:
        pass


def test_download__redirect_to_another_host__token_not_sent(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    art = st.add_artifact(st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {})
    _Storage.seen = []
    _Storage.payload = routes.make_zip({"results.json": results_bytes()})
    storage = ThreadingHTTPServer(("127.0.0.1", 0), _Storage)
    threading.Thread(target=storage.serve_forever, daemon=True).start()
    try:
        blob = f"http://127.0.0.1:{storage.server_address[1]}/container/{art.id}.zip?sig=x"
        gh.add_route(
            "GET",
            r"/repos/[^/]+/[^/]+/actions/artifacts/\d+/zip",
            lambda _gh, _req: routes.Response(302, None, {"Location": blob}),
            name="download_artifact",
        )
        choice = auto(gh, tmp_path)
    finally:
        storage.shutdown()
        storage.server_close()
    assert choice.results is not None
    assert len(_Storage.seen) == 1
    assert "Authorization" not in _Storage.seen[0]


# ─── the zip reader alone ─────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("results.json", None),
        ("out/results.json", None),
        ("../results.json", "a '..' segment"),
        ("a/../../results.json", "a '..' segment"),
        ("/etc/results.json", "an absolute path"),
        ("C:/results.json", "an absolute path"),
        ("a\\..\\results.json", "a backslash"),
        ("", "an empty name"),
    ],
)
def test_unsafe_member__names(name, why):
    assert unsafe_member(name) == why


def _zip(files: dict[str, bytes]) -> io.BytesIO:
    return io.BytesIO(routes.make_zip(files))


def test_extract_results__takes_the_shallowest_results_json(tmp_path):
    dest = tmp_path / "r.json"
    extract_results(_zip({"deep/results.json": b"deep", "results.json": b"top"}), dest)
    assert dest.read_bytes() == b"top"


def test_extract_results__two_at_the_same_depth__refused(tmp_path):
    with pytest.raises(GitHubError, match=r"2 results\.json files at the same level"):
        extract_results(_zip({"a/results.json": b"1", "b/results.json": b"2"}), tmp_path / "r")


def test_extract_results__none_inside__names_what_is(tmp_path):
    with pytest.raises(GitHubError, match=r"holds no results.json \(it holds report.md\)"):
        extract_results(_zip({"report.md": b"x"}), tmp_path / "r")


def test_extract_results__not_a_zip__clear_error(tmp_path):
    with pytest.raises(GitHubError, match="not a zip archive"):
        extract_results(io.BytesIO(b"<html>rate limited</html>"), tmp_path / "r")


def test_extract_results__header_lies_about_size__stopped_while_copying(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("results.json", b"x" * 5000)
    data = bytearray(buf.getvalue())
    # patch the central directory's uncompressed size (offset 24 in the entry) to 10 bytes
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    with pytest.raises(GitHubError):
        extract_results(io.BytesIO(bytes(data)), tmp_path / "r", max_bytes=100)
    assert not (tmp_path / "r").exists()


# ─── zip bombs by ratio, retries, the fallback after a 404 ────────────────────


def test_auto__member_inflating_1000_times_under_the_cap__refused_as_a_zip_bomb(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    bomb = b"{" + b" " * (8 * 1024 * 1024) + b"}"  # ~1000:1, far beyond any results file
    st.add_artifact(st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": bomb})

    choice = auto(gh, tmp_path, max_results_bytes=64 * 1024 * 1024)

    assert choice.results is None
    assert "beyond the 200:1 a results file reaches; refused as a zip bomb" in choice.warnings[0]


def test_extract_results__real_results_ratio__accepted(tmp_path):
    # A real results file (1.4 MB, 35:1 for the shipped example) is far from the limit.
    big = b"[" + b",".join([results_bytes()] * 1500) + b"]"
    ratio = len(big) / len(zlib.compress(big))
    assert 10 < ratio < 200, ratio
    extract_results(io.BytesIO(routes.make_zip({"results.json": big})), tmp_path / "r.json")
    assert (tmp_path / "r.json").read_bytes() == big


def _client(gh: GitHubServer) -> GitHubClient:
    policy = RetryPolicy(budget_s=20.0, request_timeout_s=5, backoff_s=0.05, backoff_max_s=0.1)
    return GitHubClient(token=TOKEN, api_url=gh.api_url, policy=policy, write_interval_s=0)


def test_auto__storage_503_then_ok__download_retried_within_the_budget(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": results_bytes()}
    )
    gh.inject("blob", Fault(status=503), calls=[1])
    client = _client(gh)

    choice = auto(gh, tmp_path, call=client.call)

    assert choice.results is not None, choice.warnings
    assert gh.calls["blob"] == 2 and gh.calls["download_artifact"] == 2


def test_auto__storage_always_503__gives_up_with_a_warning(gh, tmp_path):
    st = routes.state(gh)
    wf = st.add_workflow("toolgate.yml", "ToolGate")
    st.add_artifact(
        st.add_run(wf, head_sha=BASE_SHA), "toolgate-results", {"results.json": results_bytes()}
    )
    gh.inject("blob", Fault(status=503))

    choice = auto(gh, tmp_path, call=_client(gh).call)

    assert choice.results is None and "answered HTTP 503" in choice.warnings[0]
    assert gh.calls["blob"] == RetryPolicy().max_attempts


def test_auto__own_workflow_404__falls_back_to_other_workflows_artifacts(gh, tmp_path):
    st = routes.state(gh)
    other = st.add_workflow("baseline-refresh.yml", "ToolGate baseline")
    st.add_artifact(
        st.add_run(other, head_sha=BASE_SHA), "toolgate-results", {"results.json": results_bytes()}
    )

    choice = auto(gh, tmp_path, workflow_file="renamed.yml")

    assert choice.results is not None, choice.warnings + choice.notices
    assert "of workflow ToolGate baseline" in choice.source
