"""What a pull request changes is compared, never a reason not to compare: real
``toolgate check`` runs of an ``openai`` agent on local endpoints, and of a ``python``
agent, against baselines a check wrote.

* a head on another model and endpoint is compared case by case, the change named in the
  report's first lines, the broken cases regressions;
* a base run under another agent restarts the history (the base is the branch as it is);
* the previous release's results (hashes over case, tools, agent and scoring) keep their
  histories when the case and the scoring are the same;
* a subtle one-case regression on a six-case dataset fails the gate against a seeded base
  and is a likely regression, with the short-history warning, against a plain one.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset
from gate.pipeline import CheckOptions, check
from gate.report import render_comment
from gate.results import Results, read_results, write_results
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion, tool_call

CASES = 8
BROKEN = ("c0", "c1")
"""The cases the other model breaks (it answers them without calling the tool)."""


def _dataset(
    root: Path, n: int = CASES, description: str = "Ping case n.", edited: str | None = None
) -> str:
    tool = {
        "name": "ping",
        "description": description,
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    rows = [
        {
            "id": f"c{i}",
            "user_input": f"ping {i}",
            "available_tools": [tool],
            "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
            "expected_no_tool": False,
            "tool_responses": [{"name": "ping", "response": {"ok": True}}],
            "notes": "edited" if f"c{i}" == edited else "as written",
        }
        for i in range(n)
    ]
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return load_dataset(root / "dataset.jsonl").sha256


def _model(broken: tuple[str, ...]) -> Any:
    """A scripted model: calls ``ping(n=i)`` for case i (the last user message), answers
    once the tool result is in; for the ``broken`` cases it answers without the call."""

    def script(body: Any, _index: int) -> Response:
        messages = body["messages"]
        if any(m.get("role") == "tool" for m in messages):
            return Response(body=chat_completion(content="done"))
        user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        i = int(user.split()[-1])
        if f"c{i}" in broken:
            return Response(body=chat_completion(content="Pinged, probably."))
        return Response(body=chat_completion(tool_calls=[tool_call("ping", {"n": i})]))

    return script


@pytest.fixture
def endpoints() -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    with FakeOpenAIServer(_model(())) as a, FakeOpenAIServer(_model(BROKEN)) as b:
        yield a, b


def _config(root: Path, name: str, sha: str, *, model: str, url: str, temperature: float) -> Path:
    path = root / name
    path.write_text(
        "name: models\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        f"agent: {{kind: openai, model: {model}, base_url: '{url}', api_key_env: TG_KEY,\n"
        f"        temperature: {temperature}, timeout_s: 20}}\n"
        "concurrency: 4\n"
    )
    return path


def _check(config: Path, out: Path, baseline: Path | None, *, base_run: bool = False) -> Results:
    got = check(
        CheckOptions(
            config_path=config,
            out=out,
            baseline=str(baseline) if baseline else "none",
            progress=False,
            comment=False,
            base_run=base_run,
        ),
        {"PATH": "", "TG_KEY": "sk-test"},
        io.StringIO(),
    )
    return got.results


def test_check__head_on_another_model_and_endpoint__compared_case_by_case(
    tmp_path: Path, endpoints: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    a, b = endpoints
    sha = _dataset(tmp_path)
    base_cfg = _config(tmp_path, "base.yml", sha, model="gpt-4o", url=a.base_url, temperature=0)
    head_cfg = _config(
        tmp_path, "head.yml", sha, model="gpt-4o-mini", url=b.base_url, temperature=0.5
    )
    _check(base_cfg, tmp_path / "base", None, base_run=True)
    head = _check(head_cfg, tmp_path / "head", tmp_path / "base" / "results.json")

    assert head.comparison is not None and head.comparison.comparable
    assert all(c.test is not None and c.test.comparability == "comparable" for c in head.cases)
    changes = {c.key: (c.base, c.head) for c in head.comparison.setup_changes}
    assert changes == {
        "model": ("gpt-4o", "gpt-4o-mini"),
        "base_url": (a.base_url, b.base_url),
        "temperature": (0.0, 0.5),
    }
    regressed = sorted(f.case_id for f in head.comparison.flips if f.kind == "regression")
    assert regressed == list(BROKEN)
    assert head.verdict is not None and not head.verdict.passed
    assert head.verdict.regressions == 2
    body = render_comment(head)
    first = body.split("### ")[0]
    assert "This run changes the model `gpt-4o` → `gpt-4o-mini`, the endpoint" in first
    assert "and the temperature `0.0` → `0.5` against the baseline" in first
    assert "every case is compared across the change" in first


def test_base_run_under_another_agent__the_history_restarts_from_that_run(
    tmp_path: Path, endpoints: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    a, b = endpoints
    sha = _dataset(tmp_path, n=3)
    first = _config(tmp_path, "a.yml", sha, model="gpt-4o", url=a.base_url, temperature=0)
    then = _config(tmp_path, "b.yml", sha, model="gpt-4o", url=b.base_url, temperature=0)
    one = _check(first, tmp_path / "one", None, base_run=True)
    assert all(sum(e.samples for e in c.history) == 36 for c in one.cases)
    # the same agent again: the history grows
    two = _check(first, tmp_path / "two", tmp_path / "one" / "results.json", base_run=True)
    assert all(len(c.history) == 2 for c in two.cases)
    # the base branch moved to another endpoint: its older runs describe another agent
    three = _check(then, tmp_path / "three", tmp_path / "two" / "results.json", base_run=True)
    for case in three.cases:
        assert case.test is not None and case.test.comparability == "comparable"
        assert len(case.history) == 1 and case.history[0].samples == 36
        assert case.setup != two.cases[0].setup


def _as_previous_release(path: Path, config: Path, out: Path) -> Path:
    """The results at ``path`` as the previous release wrote them: each case hashed
    together with its tools' definitions and the agent identity (``case_hash_version``
    1), no setup."""
    from gate.pipeline.inputs import load_inputs
    from gate.pipeline.sequential import _scoring_doc, case_content
    from gate.policy.history import legacy_case_hash

    inputs = load_inputs(config, str(config), agent=False)
    results = read_results(path)
    by_id = {c.id: c for c in inputs.dataset.cases}
    cases = []
    for c in results.cases:
        case = by_id[c.id]
        hash_ = legacy_case_hash(
            case=case_content(case),
            tools={t.name: t.definition_hash() for t in case.available_tools},
            agent={"kind": results.agent["kind"]},
            scoring=_scoring_doc(inputs.config),
        )
        cases.append(c.model_copy(update={"hash": hash_, "setup": None}))
    old = results.model_copy(update={"cases": cases, "case_hash_version": 1})
    write_results(out, old)
    return out


def _python_project(
    root: Path, n: int, description: str = "Ping case n.", edited: str | None = None
) -> Path:
    sha = _dataset(root, n, description, edited)
    (root / "planagent.py").write_text(
        "import json, pathlib\n"
        "PLAN = pathlib.Path(__file__).with_name('plan.json')\n"
        "def run(messages, tools, call_tool, case_id, sample):\n"
        "    broken = json.loads(PLAN.read_text())\n"
        "    if case_id in broken:\n"
        "        return 'no'\n"
        "    call_tool('ping', {'n': int(case_id[1:])})\n"
        "    return 'done'\n"
    )
    path = root / "toolgate.yml"
    path.write_text(
        "name: plan\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        "agent: {kind: python, callable: 'planagent:run', path: ['.'], timeout_s: 20}\n"
        "concurrency: 2\n"
    )
    return path


def _plan(root: Path, broken: list[str]) -> None:
    (root / "plan.json").write_text(json.dumps(broken))


def test_previous_release_results__same_case_and_scoring__keep_their_history(
    tmp_path: Path,
) -> None:
    config = _python_project(tmp_path, 4)
    _plan(tmp_path, [])
    _check(config, tmp_path / "base", None)
    old = _as_previous_release(
        tmp_path / "base" / "results.json", config, tmp_path / "old.results.json"
    )
    head = _check(config, tmp_path / "head", old)
    for case in head.cases:
        assert case.test is not None and case.test.comparability == "comparable"
        assert case.test.base_samples == 2
        assert [e.samples for e in case.history] == [2, 2]
    # a tool's description changed since, and case c1: the old hash is rebuilt with the
    # base run's tool definitions, so only the edited case is not comparable
    _python_project(tmp_path, 4, description="Ping the case numbered n.", edited="c1")
    again = _check(config, tmp_path / "again", old)
    got = {c.id: c.test.comparability for c in again.cases if c.test is not None}
    assert got == {"c0": "comparable", "c1": "changed", "c2": "comparable", "c3": "comparable"}
    assert again.comparison is not None
    assert [d.tool for d in again.comparison.tool_drift] == ["ping"]


def test_subtle_regression_of_one_case_of_six__seeded_base_fails__plain_base_warns(
    tmp_path: Path,
) -> None:
    config = _python_project(tmp_path, 6)
    _plan(tmp_path, [])
    seeded = _check(config, tmp_path / "seeded", None, base_run=True)
    _check(config, tmp_path / "plain", None)
    assert seeded.policy is not None and seeded.policy.spend.seed == 6 * (36 - 2)
    _plan(tmp_path, ["c3"])

    against_seeded = _check(config, tmp_path / "pr1", tmp_path / "seeded" / "results.json")
    assert against_seeded.verdict is not None and not against_seeded.verdict.passed
    assert against_seeded.comparison is not None
    flips = [(f.case_id, f.kind) for f in against_seeded.comparison.flips]
    assert flips == [("c3", "regression")]
    assert "regression(s) > 0 allowed" in " ".join(against_seeded.verdict.reasons)

    against_plain = _check(config, tmp_path / "pr2", tmp_path / "plain" / "results.json")
    v = against_plain.verdict
    assert v is not None and v.passed and (v.regressions, v.likely_regressions) == (0, 0)
    assert v.undecided == 1 and against_plain.comparison is not None
    (flip,) = against_plain.comparison.flips
    # 2 base samples, 2 head samples all failing: not significant against so short a
    # history, within the pull request's cap of extra samples — too few to tell
    assert (flip.case_id, flip.kind) == ("c3", "undecided")
    assert flip.because == (
        "2 base samples and 2 head samples: 43 head samples would decide it, or 2 with a base "
        "history of 36"
    )
    body = render_comment(against_plain)
    first = body.split("### ")[0]
    assert "The base history is short: 2 samples per case, below `policy.min_history` \\(36\\)" in (
        first
    )
    assert "This run listed 1 case that got worse as undecided" in first
    assert "`toolgate check --base-run`" in first
    heading = body.splitlines()[1]
    assert heading.startswith(
        "## ⚠️ ToolGate `plan` passed — 1 case got worse, too few samples to tell: `c3`; no gates"
    )
    assert "### ⚠️ Undecided: 1 case got worse, too few samples to tell" in body
    assert "No flips" not in body
