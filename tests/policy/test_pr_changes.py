"""What a pull request changed is in plain sight, through real ``toolgate check`` runs of a
small command agent (a real subprocess) against a base run:

* a case the pull request adds that fails is a flip of kind ``new``, shown with its
  evidence above the case tables, counted in the first line ("1 new case fails"), a
  warning by default and a failure with ``regressions.new_cases: fail``;
* a case the pull request removes fails the gate, counted in the first line ("2 cases
  removed — both passed on base"), unless the config retires it (``dataset.retired``),
  which the comment then lists with the reason;
* a change of ``agent.env``, of the command line or of a declared ``agent.model`` (a key
  every kind of agent takes) is named in "This run changes …", compared, never "not
  comparable";
* a base run whose environment changed restarts the history (another agent); one under
  the same setup extends it — also a history its previous release recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset
from gate.report import render_comment, render_console
from tests.policy.helpers import quiet_check

AGENT = """\
import json, os, sys
broken = set(os.environ.get("BROKEN", "").split(",")) - {""}
ids = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        n = int(msg["case_id"].split("-")[1])
        if msg["case_id"] in broken:
            n += 100
        call = {"id": "c1", "name": "ping", "arguments": {"n": n}}
        print(json.dumps({**ids, "type": "tool_calls", "calls": [call]}), flush=True)
    elif msg["type"] == "tool_results":
        print(json.dumps({**ids, "type": "final", "content": "pinged"}), flush=True)
"""

TOOL = {
    "name": "ping",
    "description": "Ping case n.",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
}


def _project(
    root: Path, cases: list[int], agent: str = "", retired: dict[str, str] | None = None
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(AGENT)
    rows = [
        {
            "id": f"c-{i}",
            "user_input": f"ping {i}",
            "available_tools": [TOOL],
            "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
            "tool_responses": [{"name": "ping", "response": {"ok": True}}],
        }
        for i in cases
    ]
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    sha = load_dataset(root / "dataset.jsonl").sha256
    config = root / "toolgate.yml"
    gone = "".join(f", {{id: {k}, reason: {v}}}" for k, v in (retired or {}).items())
    retire = f", retired: [{gone[2:]}]" if retired else ""
    config.write_text(
        "name: small\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}{retire}}}\n"
        'agent: {kind: command, command: ["python", "agent.py"]' + agent + "}\n"
        "samples: 2\n"
    )
    return config


def _check(config: Path, out: Path, baseline: Path | None = None, *, base_run: bool = False) -> Any:
    return quiet_check(config, out, baseline, base_run=base_run)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    config = _project(tmp_path / "base", [0, 1, 2, 3, 4, 5])
    got = _check(config, tmp_path / "base" / "out", base_run=True)
    assert got.exit_code == 0
    return tmp_path / "base" / "out" / "results.json"


def test_new_failing_case__shown_with_its_evidence_counted_and_a_warning(
    tmp_path: Path, base: Path
) -> None:
    head = _project(
        tmp_path / "head",
        [0, 1, 2, 3, 4, 6],
        ', env: {BROKEN: "c-6"}',
        retired={"c-5": "replaced by c-6"},
    )
    got = _check(head, tmp_path / "head" / "out", base)
    results = got.results
    assert got.exit_code == 0 and results.verdict.passed, results.verdict.reasons
    assert results.verdict.new_failing == 1 and not results.verdict.new_fail
    (new,) = [f for f in results.comparison.flips if f.kind == "new"]
    assert new.case_id == "c-6" and new.head_pass_rate == 0.0
    comment = render_comment(results)
    first = comment.splitlines()[1]
    assert "1 new case fails" in first and "fails as before" not in first
    section = comment.index("### 🆕 New cases that fail (1)")
    assert section < comment.index("<summary>All cases")
    row = comment[section:].split("\n\n")[1]
    assert "`c-6`" in row and "0/2" in row and "`ping(n=6)`" in row and "`ping(n=106)`" in row
    assert "set regressions.new_cases: fail to block on them" in comment[section:]
    # the removed case, retired: named in the first lines, listed with its reason
    assert comment.count("`c-5`") == 2 and "`c-5` — replaced by c-6 (base " in comment
    assert "1 case added \\(`c-6`\\), 1 case removed \\(`c-5`\\)" in comment
    assert any("1 new case(s) fail: c-6 (0/2)" in n for n in results.notices)
    console = render_console(results)
    assert (
        "🆕 New cases that fail (1) — added by this change, no history to compare with" in console
    )


def test_two_passing_cases_removed__fail_the_gate_first_line_says_so(
    tmp_path: Path, base: Path
) -> None:
    head = _project(tmp_path / "head", [0, 1, 2, 3])
    got = _check(head, tmp_path / "head" / "out", base)
    results = got.results
    assert got.exit_code == 1 and not results.verdict.passed
    assert results.verdict.removed == 2
    assert [r.case_id for r in results.comparison.changes.removed] == ["c-4", "c-5"]
    comment = render_comment(results)
    first = comment.splitlines()[1]
    assert first.startswith("## ❌ ToolGate `small` failed — 2 cases removed — both passed on base")
    assert "### ❌ Removed cases (2 cases removed — both passed on base)" in comment
    assert "dataset.retired" in comment
    console = render_console(results).splitlines()[0]
    assert console == "ToolGate small: FAILED — 2 cases removed — both passed on base"
    assert results.verdict.reasons[0].startswith(
        "2 cases removed — both passed on base: c-4 (36/36), c-5 (36/36)"
    )


def test_two_passing_cases_removed__retired__pass_and_are_listed_with_the_reason(
    tmp_path: Path, base: Path
) -> None:
    retired = {"c-4": "duplicate of c-1", "c-5": "the feature was dropped"}
    head = _project(tmp_path / "head", [0, 1, 2, 3], retired=retired)
    got = _check(head, tmp_path / "head" / "out", base)
    results = got.results
    assert got.exit_code == 0 and results.verdict.passed, results.verdict.reasons
    assert results.verdict.removed == 0
    assert {r.case_id: r.retired for r in results.comparison.changes.removed} == retired
    comment = render_comment(results)
    assert "2 cases retired \\(dataset.retired\\)" in comment.splitlines()[1]
    assert comment.splitlines()[1].startswith("## ✅ ToolGate `small` passed")
    assert "### Retired cases (2) — removed on purpose (`dataset.retired`)" in comment
    assert "- `c-4` — duplicate of c-1 (base 36/36)" in comment
    assert "- `c-5` — the feature was dropped (base 36/36)" in comment


def test_retired_case_still_in_the_dataset__input_error_naming_the_line(tmp_path: Path) -> None:
    from gate.errors import ConfigError

    head = _project(tmp_path / "head", [0, 1, 2], retired={"c-1": "gone"})
    with pytest.raises(ConfigError) as err:
        _check(head, tmp_path / "head" / "out")
    (problem,) = err.value.problems
    assert (problem.line, problem.field) == (2, "dataset.retired[0].id")
    assert "'c-1' is retired, but the dataset still holds it" in problem.message


def test_new_failing_case__regressions_new_cases_fail__fails_the_gate(
    tmp_path: Path, base: Path
) -> None:
    head = _project(tmp_path / "head", [0, 1, 2, 3, 4, 5, 6], ', env: {BROKEN: "c-6"}')
    head.write_text(head.read_text() + "regressions: {new_cases: fail}\n")
    got = _check(head, tmp_path / "head" / "out", base)
    assert got.exit_code == 1 and not got.results.verdict.passed
    assert "1 new case(s) fail (regressions.new_cases: fail): c-6 (0/2)" in (
        got.results.verdict.reasons
    )
    assert "1 new case fails (regressions.new_cases: fail)" in render_console(got.results)


def test_agent_env_command_and_model__named_as_what_the_run_changes(
    tmp_path: Path, base: Path
) -> None:
    head = _project(
        tmp_path / "head",
        [0, 1, 2, 3, 4, 5],
        ', model: gpt-4.1, env: {MODEL_NAME: "gpt-4.1"}',
    )
    head.write_text(head.read_text().replace('["python", "agent.py"]', '["python", "./agent.py"]'))
    got = _check(head, tmp_path / "head" / "out", base)
    results = got.results
    assert results.comparison is not None and results.comparison.comparable
    assert {c.key for c in results.comparison.setup_changes} == {"model", "command", "env"}
    assert results.agent["model"] == "gpt-4.1" and results.agent["env"] == {"MODEL_NAME": "gpt-4.1"}
    sentence = render_comment(results).split("This run changes ", 1)[1].split("\n")[0]
    assert sentence.startswith("the model, set to `gpt-4.1`")
    assert '`["python", "agent.py"]` → `["python", "./agent.py"]`' in sentence
    assert "`agent.env` `MODEL_NAME` set to `gpt-4.1`" in sentence
    assert not [f for f in results.comparison.flips if f.kind != "noise"]


def test_base_run__same_setup_extends__another_env_restarts__previous_release_kept(
    tmp_path: Path, base: Path
) -> None:
    def depth(results_path: Path) -> set[int]:
        data = json.loads(results_path.read_text())
        return {sum(e["samples"] for e in c["history"]) for c in data["cases"]}

    assert depth(base) == {36}
    config = tmp_path / "base" / "toolgate.yml"
    again = _check(config, tmp_path / "again", base, base_run=True)
    assert again.exit_code == 0 and depth(tmp_path / "again" / "results.json") == {38}
    # the history as the previous release wrote it: the setup hashed from the kind alone
    old = json.loads(base.read_text())
    from gate.policy.history import LEGACY_IDENTITY_KEYS, agent_identity, setup_hash

    legacy = setup_hash(
        agent=agent_identity(old["agent"], LEGACY_IDENTITY_KEYS),
        tools={n: t["hash"] for n, t in old["tools"].items()},
    )
    for c in old["cases"]:
        c["setup"] = legacy
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(old))
    kept = _check(config, tmp_path / "kept", earlier, base_run=True)
    assert depth(tmp_path / "kept" / "results.json") == {38}
    # another environment is another agent: its history starts again from this run
    config.write_text(config.read_text().replace('"agent.py"]', '"agent.py"], env: {X: "1"}'))
    moved = _check(config, tmp_path / "moved", base, base_run=True)
    assert kept.exit_code == moved.exit_code == 0
    assert depth(tmp_path / "moved" / "results.json") == {36}


def test_agent_model__accepted_by_every_kind__a_near_key_suggested_never_itself(
    tmp_path: Path,
) -> None:
    from gate.config import load_config
    from gate.errors import ConfigError

    config = _project(tmp_path / "p", [0], ", model: my-model")
    assert load_config(config).agent.model == "my-model"
    config.write_text(config.read_text().replace("model: my-model", "base_url: http://x"))
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert "agent.base_url: unknown key for `kind: command` (a key of openai agents)" in str(
        err.value
    )
    config.write_text(config.read_text().replace("base_url: http://x", "modle: x"))
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert "agent.modle: unknown key (did you mean 'model'?)" in str(err.value)


COSTLY = """\
import json, os, sys
factor = float(os.environ.get("TOKEN_FACTOR", "1"))
sizes = [40, 60, 90, 120, 400, 250]
ids = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        ids = {"case_id": msg["case_id"], "sample": msg["sample"]}
        n = int(msg["case_id"].split("-")[1])
        usage = {"prompt_tokens": int(sizes[n] * 10 * factor),
                 "completion_tokens": int(20 * factor)}
        call = {"id": "c1", "name": "ping", "arguments": {"n": n}}
        reply = {**ids, "type": "tool_calls", "calls": [call], "usage": usage}
        print(json.dumps(reply), flush=True)
    elif msg["type"] == "tool_results":
        print(json.dumps({**ids, "type": "final", "content": "pinged"}), flush=True)
"""


@pytest.mark.parametrize("base_run", [False, True], ids=["plain base", "seeded base"])
def test_six_cases_every_sample_one_and_a_half_times_the_tokens__beyond_noise_and_fails(
    tmp_path: Path, base_run: bool
) -> None:
    """Six cases of very different sizes, two samples each; on head every sample uses
    exactly 1.5× the tokens: the Cost group calls it beyond noise and `max_increase:
    0.15` fails — against a base run of two samples per case as against a seeded one."""
    gate = "gates:\n  - {metric: total_tokens, max_increase: 0.15}\n"
    base_cfg = _project(tmp_path / "base", [0, 1, 2, 3, 4, 5])
    (tmp_path / "base" / "agent.py").write_text(COSTLY)
    base_cfg.write_text(base_cfg.read_text() + gate)
    assert _check(base_cfg, tmp_path / "base" / "out", base_run=base_run).exit_code == 0
    head = _project(tmp_path / "head", [0, 1, 2, 3, 4, 5], ', env: {TOKEN_FACTOR: "1.5"}')
    (tmp_path / "head" / "agent.py").write_text(COSTLY)
    head.write_text(head.read_text() + gate)
    got = _check(head, tmp_path / "head" / "out", tmp_path / "base" / "out" / "results.json")
    results = got.results
    total = next(d for d in results.comparison.cost if d.metric == "total_tokens")
    assert total.cases == 6 and total.relative == pytest.approx(0.5, abs=0.01)
    assert total.beyond_noise and total.typical == pytest.approx(0.5, abs=0.01)
    (gate_outcome,) = results.verdict.gates
    assert not gate_outcome.passed and not gate_outcome.undecided
    assert got.exit_code == 1
    comment = render_comment(results)
    row = next(line for line in comment.splitlines() if line.startswith("| `total_tokens` |"))
    assert "🔴▲" in row and "within noise" not in row and "❌ ≤ +15.0 %" in row
