"""``mode: comment`` with a hostile artifact: the trusted ``workflow_run`` job posts only
what ToolGate renders itself, and nothing of it renders active on GitHub.

The artifact was written by the fork's code. It tries everything a comment could carry:
a forged "✅ passed" heading, a tracking image, phishing and ``javascript:`` links,
cross-references (``#12``, ``owner/repo#12``, ``GH-12``), a re-created sticky marker,
HTML comments and nested markers, autolinks, ``<details>`` tricks, over-long lines. The
posted body is parsed with GitHub's own cmark-gfm (``cmarkgfm``, raw HTML allowed as
GitHub's parser sees it) and must hold no link but the one to the triggering run, no
image, no HTML but the report's own, no mention and no issue reference outside code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from gate.github.workflow_run import read_run_output
from gate.report.comment import RelayedRun, RelayProblem, render_relay_notice
from gate.results import Results, write_results
from tests.action.harness import BASE_SHA, HEAD_SHA, REPOSITORY, workflow_run_event
from tests.action.test_inprocess import TOKEN, act
from tests.report.fixtures import failing, passing
from tests.report.test_golden import check_golden
from tests.report.test_injection import CORPUS
from tests.servers import github_actions_routes as routes
from tests.servers.github_server import Fault, GitHubServer

RUN_URL = f"https://github.test/{REPOSITORY}/actions/runs/7741"

HOSTILE: list[str] = [
    *CORPUS,
    "## ✅ ToolGate `support-agent` passed — all gates hold",
    "<h2>✅ ToolGate passed</h2>",
    "![](https://track.evil.example/pixel.gif?pr=7)",
    '<img src="https://track.evil.example/p.gif">',
    "[Re-run the checks here](https://evil.example/login)",
    "[click](javascript:alert(document.cookie))",
    "<a href='javascript:alert(1)'>details</a>",
    "<https://evil.example/autolink> and <mailto:a@evil.example>",
    "see #12, octo/agent#12, GH-12 and gh-12",
    "<!-- toolgate:comment name=support-agent -->",
    "<!-- <!-- toolgate:comment name=support-agent --> -->",
    "<!-- toolgate:comment <!-- toolgate:comment name=support-agent --> name=x -->",
    "<details open><summary>✅ All checks passed</summary>hidden</details>",
    "</summary></details><details><summary>",
    "[ref]: https://evil.example/ref\n[ref]",
    "y" * 70_000,
]


# ─── what renders ─────────────────────────────────────────────────────────────


class _Active(HTMLParser):
    """What GitHub would show as live: tags, link targets, images, comments, prose."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.images = 0
        self.comments: list[str] = []
        self.headings: list[str] = []
        self.prose: list[str] = []
        self._code = 0
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
        if tag == "img":
            self.images += 1
        if tag in ("code", "pre"):
            self._code += 1
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._code -= 1
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)
        if not self._code:
            self.prose.append(data)


def rendered(markdown: str) -> _Active:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    p = _Active()
    p.feed(html)
    p.close()
    return p


def assert_nothing_active(body: str, *, gate: str, conclusion_word: str) -> None:
    p = rendered(body)
    allowed = {
        "h2", "h3", "p", "em", "strong", "code", "pre", "table", "thead", "tbody", "tr",
        "th", "td", "ul", "li", "details", "summary", "sub", "br", "blockquote", "a",
    }  # fmt: skip
    assert set(p.tags) <= allowed, f"HTML from the artifact: {set(p.tags) - allowed}"
    assert p.hrefs and set(p.hrefs) == {RUN_URL}, f"a link that is not ours: {set(p.hrefs)}"
    assert p.images == 0
    assert p.tags.count("details") == p.tags.count("summary")
    assert p.comments == [f" toolgate:comment name={gate} "], "one marker, ours"
    assert body.startswith(f"<!-- toolgate:comment name={gate} -->\n")
    assert p.headings[0].startswith(f"{conclusion_word} ToolGate ")
    ours = (
        "🛑 Hard failures", "Metrics", "🔻 Regressions", "🔧 Tool-definition drift",
        "✅ Fixed", "🎲 Flaky", "New and removed", "Per-tool recall", "⚖️ Judge scores",
        "Failing cases", "⚠️ No answer",
    )  # fmt: skip
    for h in p.headings[1:]:
        assert h.startswith(ours), f"a heading that is not the report's own: {h!r}"
    prose = "".join(p.prose)
    assert not re.search(r"@[\w-]", prose), "a mention"
    assert not re.search(r"#\d|(?i:\bGH-\d)", prose), "an issue reference"
    assert "://" not in prose.replace(RUN_URL, "") and "www." not in prose.lower()
    assert "javascript:" not in body.replace("javascript\\:", "")
    for n, line in enumerate(body.splitlines()):
        assert len(line) < 5_000, "an over-long line"
        assert n == 1 or not line.startswith(("✅", "## ", "# ")), "a verdict line not ours"


# ─── the hostile artifact ─────────────────────────────────────────────────────


def hostile_results(claim_passed: bool) -> dict[str, Any]:
    """The failing fixture with every data string replaced by a hostile one; its verdict
    claims ``passed`` when ``claim_passed``."""
    data = failing().model_dump(mode="json")
    it = iter(HOSTILE * 400)

    def swap(v: Any) -> Any:
        if isinstance(v, str):
            return next(it)
        if isinstance(v, list):
            return [swap(x) for x in v]
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        return v

    for i, case in enumerate(data["cases"]):
        case["id"] = HOSTILE[i % len(HOSTILE)][:300] + f" {i}"
        for s in case["samples"]:
            s["reasons"] = {k: next(it) for k in s["reasons"]}
            s["evidence"] = swap(s["evidence"])
    for h in data["hard_failures"]:
        h["case_id"], h["message"] = next(it), next(it)
    cmp = data["comparison"]
    cmp["source"] = "<!-- toolgate:comment name=support-agent --> #12 GH-12"
    for j, f in enumerate(cmp["flips"]):
        f["case_id"] = data["cases"][j % len(data["cases"])]["id"]
        f["reason"] = next(it)
    data["notices"] = list(HOSTILE)
    data["verdict"]["summary"] = "\n".join(HOSTILE[:20])
    data["verdict"]["reasons"] = list(HOSTILE)
    data["verdict"]["passed"] = claim_passed
    data["agent"] = {"command": HOSTILE[:12]}
    Results.model_validate(data)  # still a valid results file: only strings changed
    return data


@pytest.fixture
def gh() -> Iterator[GitHubServer]:
    owner, repo = REPOSITORY.split("/")
    server = GitHubServer(owner=owner, repo=repo, register=[routes.register])
    server.add_token(TOKEN, "github-actions[bot]", kind="app")
    server.add_pull(7, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    server.add_pull(12, base_sha=BASE_SHA, head_sha="1" * 40)
    with server:
        yield server


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in (
        "GIT_CONFIG_COUNT",
        *(f"GIT_CONFIG_{k}_{i}" for k in ("KEY", "VALUE") for i in range(4)),
    ):
        monkeypatch.delenv(name, raising=False)


def artifact(ws: Path, *, results: dict[str, Any] | str | None, comment_md: bool = True) -> None:
    folder = ws / "toolgate-pr"
    folder.mkdir(parents=True)
    if comment_md:  # what older ToolGate versions posted; never read now
        (folder / "comment.md").write_text(
            "<!-- toolgate:comment name=support-agent -->\n" + "\n\n".join(HOSTILE), "utf-8"
        )
    if isinstance(results, dict):
        (folder / "results.json").write_text(json.dumps(results), "utf-8")
    elif isinstance(results, str):
        (folder / "results.json").write_text(results, "utf-8")
    (folder / "pr_number.txt").write_text("12\n", "utf-8")  # never read either


def relay(
    ws: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gh: GitHubServer,
    *,
    conclusion: str = "failure",
) -> Any:
    return act(
        ws,
        tmp_path,
        monkeypatch,
        inputs={"mode": "comment", "out": "toolgate-pr"},
        gh=gh,
        event_name="workflow_run",
        event=workflow_run_event(run_number=41, conclusion=conclusion),
    )


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("claim_passed", [True, False], ids=["claims-passed", "claims-failed"])
def test_comment__hostile_results_artifact__rendered_by_toolgate_nothing_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer, claim_passed: bool
) -> None:
    ws = tmp_path / "ws"
    artifact(ws, results=hostile_results(claim_passed))

    step = relay(ws, tmp_path, monkeypatch, gh, conclusion="failure")

    assert step.code == 0, step.out + step.err
    assert gh.comments_on(12) == [], "the PR number in the artifact is never used"
    (comment,) = gh.comments_on(7)
    body = comment.body
    assert body.startswith("<!-- toolgate:comment name=support-agent -->\n## ❌ ToolGate ")
    assert "failed — the check of [workflow run 41](" in body.splitlines()[1]
    claim = "says **passed**, but its check concluded `failure`"
    assert (claim in body) is claim_passed, "a disagreeing claim is called out, only then"
    assert "The uploaded results say: " + ("passed" if claim_passed else "failed") in body
    assert_nothing_active(body, gate="support-agent", conclusion_word="❌")


@pytest.mark.usefixtures("isolated")
def test_comment__only_comment_md__fixed_notice_naming_the_run_no_artifact_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = tmp_path / "ws"
    artifact(ws, results=None)

    step = relay(ws, tmp_path, monkeypatch, gh, conclusion="success")

    assert step.code == 0, step.out + step.err
    (comment,) = gh.comments_on(7)
    run = RelayedRun(HEAD_SHA, "success", 41, RUN_URL)
    assert comment.body == render_relay_notice(run, RelayProblem.MISSING)
    assert "evil" not in comment.body and "support-agent" not in comment.body
    assert_nothing_active(comment.body, gate="toolgate", conclusion_word="✅")
    assert any("holds no results.json" in n for n in step.annotations("notice"))


@pytest.mark.usefixtures("isolated")
def test_comment__invalid_results_json__notice_posted_then_input_error_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = tmp_path / "ws"
    artifact(ws, results='{"schema_version": "<!-- toolgate:comment --> @octo #12"}')

    step = relay(ws, tmp_path, monkeypatch, gh)

    assert step.code == 2
    assert step.outputs["verdict"] == "error"
    (comment,) = gh.comments_on(7)
    run = RelayedRun(HEAD_SHA, "failure", 41, RUN_URL)
    assert comment.body == render_relay_notice(run, RelayProblem.INVALID)
    assert any("results.json" in e for e in step.annotations("error"))


@pytest.mark.usefixtures("isolated")
def test_comment__nothing_downloaded__notice_that_the_output_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    step = relay(ws, tmp_path, monkeypatch, gh, conclusion="cancelled")

    assert step.code == 0, step.out + step.err
    (comment,) = gh.comments_on(7)
    assert comment.body == render_relay_notice(
        RelayedRun(HEAD_SHA, "cancelled", 41, RUN_URL), RelayProblem.NOT_DOWNLOADED
    )
    assert comment.body.splitlines()[1].startswith("## ⚪ ToolGate ended `cancelled`")


@pytest.mark.usefixtures("isolated")
def test_comment__commit_endpoint_refused__pr_found_from_the_pull_lists_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    """A private repository's comment job has no ``contents: read``: ``GET commits/{sha}``
    answers 403 (and so may its pull list); the PR is still found."""
    ws = tmp_path / "ws"
    artifact(ws, results=passing().model_dump(mode="json"), comment_md=False)
    refused = Fault(status=403, body={"message": "Resource not accessible by integration"})
    gh.inject("get_commit", refused)
    gh.inject("commit_pulls", refused)

    step = relay(ws, tmp_path, monkeypatch, gh, conclusion="success")

    assert step.code == 0, step.out + step.err
    assert len(gh.comments_on(7)) == 1
    assert gh.calls.get("get_commit") is None, "the commit itself is never requested"
    assert gh.calls.get("list_pulls") == 1


@pytest.mark.usefixtures("isolated")
def test_comment__commit_pulls_answered__commit_never_requested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh: GitHubServer
) -> None:
    ws = tmp_path / "ws"
    artifact(ws, results=passing().model_dump(mode="json"), comment_md=False)

    step = relay(ws, tmp_path, monkeypatch, gh, conclusion="success")

    assert step.code == 0, step.out + step.err
    assert len(gh.comments_on(7)) == 1
    assert gh.calls.get("commit_pulls") == 1
    assert "get_commit" not in gh.calls and "list_pulls" not in gh.calls


# ─── the rendered comment, byte for byte ──────────────────────────────────────


def test_relayed_comment__failing_fixture_check_succeeded__golden() -> None:
    from gate.report.comment import render_relayed_comment

    run = RelayedRun("c" * 40, "success", 41, RUN_URL)  # fail-on: never kept it green
    check_golden("relayed.failing.comment.md", render_relayed_comment(failing(), run))


@pytest.mark.parametrize("problem", list(RelayProblem), ids=lambda p: p.name.lower())
def test_relay_notice__each_problem__golden(problem: RelayProblem) -> None:
    run = RelayedRun("c" * 40, "failure", 41, RUN_URL)
    check_golden(f"relay-notice.{problem.name.lower()}.md", render_relay_notice(run, problem))


def test_read_run_output__results_json_is_a_symlink__refused_never_followed(
    tmp_path: Path,
) -> None:
    """A link in the artifact could point at any file on the runner: it is not read."""
    outside = tmp_path / "elsewhere.json"
    write_results(outside, passing())
    folder = tmp_path / "toolgate-pr"
    folder.mkdir()
    (folder / "results.json").symlink_to(outside)
    out = read_run_output(folder, max_bytes=64 * 1024 * 1024)
    assert out.results is None and out.problem is RelayProblem.INVALID
    assert out.error is not None and "symbolic link" in str(out.error)
    assert str(folder / "results.json") in str(out.error)
