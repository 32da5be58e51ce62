"""`toolgate validate`, `pin` and `init` through the real command line."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gate.cli import main
from gate.dataset import load_dataset
from tests.dataset.agent_driver import AgentProcess
from tests.dataset.helpers import row, rows, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped example, as the working directory."""
    dest = tmp_path / "support-agent"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("toolgate-out", "__pycache__"))
    monkeypatch.chdir(dest)
    return dest


def project(
    tmp_path: Path, config_extra: str = "", items: list[dict[str, object]] | None = None
) -> Path:
    write_jsonl(
        tmp_path / "cases.jsonl",
        items if items is not None else rows(3, tags=["refund"], difficulty="easy"),
    )
    (tmp_path / "runs.jsonl").write_text("")
    config = tmp_path / "toolgate.yml"
    config.write_text(
        "# my gate\ndataset:\n  path: cases.jsonl   # the cases\n"
        "agent: {kind: replay, runs: runs.jsonl}\n" + config_extra
    )
    return config


# ── validate ──


def test_validate__reply_ids_optional__note_says_what_it_gives_up(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = example / "toolgate.yml"
    text = config.read_text("utf-8")
    config.write_text(text.replace("  workers: 2\n", "  workers: 2\n  reply_ids: optional\n"))
    code, _, err = cli(capsys, "validate")
    assert code == 0
    assert (
        "toolgate: note: agent.reply_ids is optional: replies without case_id and sample are "
        "accepted, so a late reply of an earlier case that names neither could be taken as "
        "the next case's answer; echo them from the start message and remove the setting\n"
    ) in err


def test_validate__example__ok_with_slice_counts_then_the_first_base_runs_bill(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "validate")
    assert code == 0
    # The example's command is `python agent.py`: validate says which interpreter runs it.
    assert err == (
        "toolgate: note: agent.command starts with 'python': ToolGate runs it with its own "
        f"interpreter ({sys.executable}; agent.python: toolgate); to use your agent's "
        "environment, set agent.python: path (the python on PATH) or name its interpreter "
        "instead (for example .venv/bin/python)\n"
    )
    assert out.count("\n") == 2
    assert out.splitlines()[1] == (
        "toolgate: the first base run (the first push) makes 2,772 agent runs: 77 cases × 3 "
        "samples (231), and 2,541 more to seed each case's base history to 36 samples "
        "(policy.min_history; policy.max_seed_samples caps it)."
    )
    ds = load_dataset(example / "dataset.jsonl")
    counts = ds.slice_counts()
    assert out.startswith(f"OK: toolgate.yml: dataset.jsonl: {len(ds)} cases (")
    assert (
        f"easy {counts['difficulty=easy']}, medium {counts['difficulty=medium']}, "
        f"hard {counts['difficulty=hard']}" in out
    )
    assert (
        f"no-tool {counts['no_tool=true']}" in out
        and f"must-not-call {counts['must_not_call=true']}" in out
    )
    assert f"pinned 2026.03.1 sha256 {ds.sha256[:12]}" in out


def test_validate__dataset_problem__exit_2_with_file_line_field(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (example / "dataset.jsonl").read_text().splitlines()
    case = json.loads(lines[16])
    case["expected_tool_calls"][0]["name"] = "lookup_ordr"
    lines[16] = json.dumps(case)
    (example / "dataset.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = cli(capsys, "validate")
    assert code == 2 and out == ""
    assert (
        "dataset.jsonl:17: expected_tool_calls[0].name: 'lookup_ordr' is not among available_tools"
        in err
    )


def test_validate__edited_dataset__pin_mismatch_names_both_hashes(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pinned = load_dataset(example / "dataset.jsonl").sha256
    with (example / "dataset.jsonl").open("a") as fh:
        fh.write(
            json.dumps(
                row(
                    id="new-case",
                    available_tools="@tools.json",
                    expected_tool_calls=[{"name": "lookup_order"}],
                )
            )
            + "\n"
        )
    code, _, err = cli(capsys, "validate")
    now = load_dataset(example / "dataset.jsonl").sha256
    assert code == 2
    assert "toolgate.yml:11: dataset.sha256: the pin and the dataset disagree" in err
    assert pinned in err and now in err and "`toolgate pin --config toolgate.yml`" in err


def test_validate__edited_tools_file__pin_mismatch(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = json.loads((example / "tools.json").read_text())
    tools[0]["function"]["description"] += " Changed."
    (example / "tools.json").write_text(json.dumps(tools, indent=2))
    code, _, err = cli(capsys, "validate")
    assert code == 2 and "dataset.sha256: the pin and the dataset disagree" in err


def test_validate__cross_checks__all_reported_with_config_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(
        tmp_path,
        "gates:\n"
        "  - {metric: call_accuracy, min: 0.8, slice: tag=refnd}\n"
        "  - {metric: call_accuracy, min: 0.8, slice: difficulty=hard}\n"
        "  - {metric: call_accuracy, min: 0.8, slice: must_not_call=delete}\n"
        "scoring:\n"
        "  tools:\n"
        "    refund_ordr: {risk: write}\n"
        "    refund_order: {args: {amout: {case: false}}}\n"
        "  required_before:\n"
        "    - {tool: refund_order, preceded_by: [lookup]}\n"
        "  arg_scope:\n"
        "    - {tool: refund_order, arg: ordr_id}\n",
    )
    code, _, err = cli(capsys, "validate", "--config", str(config))
    assert code == 2
    expected = [
        ":6: gates[0].slice: no case has the tag 'refnd' (did you mean 'refund'?)",
        ":7: gates[1].slice: no case has difficulty 'hard'",
        ":8: gates[2].slice: no case lists 'delete' in must_not_call",
        ":11: scoring.tools.refund_ordr: no tool 'refund_ordr' in the dataset "
        "(did you mean 'refund_order'?)",
        ":12: scoring.tools.refund_order.args.amout: refund_order has no parameter 'amout' "
        "(did you mean 'amount'?)",
        ":16: scoring.arg_scope[0].arg: refund_order has no parameter 'ordr_id' "
        "(did you mean 'order_id'?)",
        ":14: scoring.required_before[0].preceded_by[0]: no tool 'lookup'",
        "dataset.sha256: the dataset is not pinned",
    ]
    for fragment in expected:
        assert fragment in err, fragment
    assert "(8 problems)" in err


def test_validate__dataset_flag_without_config__checks_the_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "cases.jsonl", rows(2))
    code, out, _ = cli(capsys, "validate", "--dataset", "cases.jsonl")
    assert code == 0 and out.startswith("OK: cases.jsonl: 2 cases")


def test_validate__dataset_flag_with_config__pin_not_checked(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A candidate dataset: the example plus one case. Cross-checks still apply; the pin
    # belongs to the config's dataset, so it is not checked.
    extra = row(
        id="extra", available_tools="@tools.json", expected_tool_calls=[{"name": "lookup_order"}]
    )
    text = (example / "dataset.jsonl").read_text() + json.dumps(extra) + "\n"
    (example / "other.jsonl").write_text(text)
    code, out, _ = cli(capsys, "validate", "--dataset", "other.jsonl")
    assert code == 0 and "pin not checked" in out


def test_validate__no_config__usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "validate")
    assert code == 2 and "no config file toolgate.yml" in err and "toolgate init" in err


def test_validate__config_problem__exit_2_with_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, "samples: yes\n")
    code, _, err = cli(capsys, "validate", "--config", str(config))
    assert code == 2 and "toolgate.yml:5: samples:" in err


def test_validate__dataset_path_missing__config_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    (tmp_path / "cases.jsonl").unlink()
    code, _, err = cli(capsys, "validate", "--config", str(config))
    assert code == 2 and "toolgate.yml:3: dataset.path: no such file" in err


# ── pin ──


def test_pin__unpinned__writes_only_the_sha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    before = config.read_text()
    code, out, _ = cli(capsys, "pin", "--config", str(config))
    sha = load_dataset(tmp_path / "cases.jsonl").sha256
    assert code == 0 and f"sha256 (none) -> {sha}" in out
    assert config.read_text() == before.replace(
        "   # the cases\n", f"   # the cases\n  sha256: {sha}\n"
    )
    assert cli(capsys, "validate", "--config", str(config))[0] == 0


def test_pin__twice__second_time_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    cli(capsys, "pin", "--config", str(config))
    code, out, _ = cli(capsys, "pin", "--config", str(config))
    assert code == 0 and "already pins" in out


def test_pin__version_flag__sets_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    code, out, _ = cli(capsys, "pin", "--config", str(config), "--version", "1.10")
    assert code == 0 and "version (none) -> 1.10" in out
    assert '  version: "1.10"\n' in config.read_text()


def test_pin__malformed_sha_in_config__fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    config.write_text(
        config.read_text().replace("# the cases\n", "# the cases\n  sha256: not-a-hash\n")
    )
    code, _, _ = cli(capsys, "pin", "--config", str(config))
    assert code == 0 and cli(capsys, "validate", "--config", str(config))[0] == 0


def test_pin__other_config_problem__refused_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, "samples: 0\n")
    before = config.read_bytes()
    code, _, err = cli(capsys, "pin", "--config", str(config))
    assert code == 2 and "samples" in err and config.read_bytes() == before


def test_pin__invalid_dataset__refused_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, items=[row(difficulty="extreme")])
    before = config.read_bytes()
    code, _, err = cli(capsys, "pin", "--config", str(config))
    assert code == 2 and "cases.jsonl:1: difficulty:" in err and config.read_bytes() == before


def test_pin__config_cannot_be_written__named_error_exit_2(tmp_path: Path) -> None:
    # A file-size limit below the config's size makes the write fail (EFBIG) for any
    # user, root included; Python ignores SIGXFSZ, so the write raises.
    config = project(tmp_path)
    before = config.read_bytes()
    limit = len(before) // 2

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    pin = subprocess.run(
        [sys.executable, "-m", "gate", "pin", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=small_files,
        # without the suite's coverage hook: it would fail to save its own data file
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))},
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    assert pin.returncode == 2, pin.stderr
    assert "Traceback" not in pin.stderr
    assert f"{config}: cannot write: File too large" in pin.stderr
    assert config.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".toolgate.yml")] == []


def test_pin__example_copy__restores_the_pin_after_an_edit(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (example / "dataset.jsonl").open("a") as fh:
        fh.write(
            json.dumps(
                row(
                    id="extra",
                    available_tools="@tools.json",
                    expected_tool_calls=[{"name": "lookup_order"}],
                )
            )
            + "\n"
        )
    before = (example / "toolgate.yml").read_text().splitlines()
    assert cli(capsys, "pin")[0] == 0
    after = (example / "toolgate.yml").read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][1].startswith("  sha256: ")
    assert cli(capsys, "validate")[0] == 0


# ── init ──


def test_init__empty_folder__scaffold_validates_immediately(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "repo"
    code, out, _ = cli(capsys, "init", str(target))
    assert code == 0 and "Created" in out
    for rel in ("toolgate.yml", "evals/dataset.jsonl", "evals/tools.json", "evals/agent.py"):
        assert (target / rel).is_file(), rel
    config = (target / "toolgate.yml").read_text()
    assert "# " in config  # commented
    # the defaults it states are the defaults
    assert "samples: 2                     # the default" in config
    assert "significant regressions allowed" in config and "min_history: 36" in config
    # the workflow is the repository's basic example, base runs on pushes to main included
    workflow = (target / ".github" / "workflows" / "toolgate.yml").read_bytes()
    assert workflow == (ROOT / "examples" / "workflows" / "basic.yml").read_bytes()
    code, out, _ = cli(capsys, "validate", "--config", str(target / "toolgate.yml"))
    assert code == 0 and "9 cases" in out and "pinned" in out


def test_init__at_a_repository_root__the_workflow_where_github_runs_it_and_a_gitignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    code, out, _ = cli(capsys, "init", str(repo))
    assert code == 0
    workflow = repo / ".github" / "workflows" / "toolgate.yml"
    assert workflow.read_bytes() == (ROOT / "examples" / "workflows" / "basic.yml").read_bytes()
    assert (repo / ".gitignore").read_text().splitlines()[-1] == "toolgate-out/"
    assert "not in a git repository" not in out
    assert "push the workflow to your default branch before the first pull request" in out


def test_init__subfolder_of_a_repository__workflow_at_the_root_names_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("node_modules/")  # no newline at the end
    sub = repo / "agents" / "support"
    code, out, _ = cli(capsys, "init", str(sub))
    assert code == 0, out
    assert not (sub / ".github").exists()
    text = (repo / ".github" / "workflows" / "toolgate.yml").read_text()
    basic = (ROOT / "examples" / "workflows" / "basic.yml").read_text()
    assert text == basic.replace(
        "          config: toolgate.yml\n", "          config: agents/support/toolgate.yml\n"
    )
    assert text != basic
    assert (sub / ".gitignore").read_text() == (
        "# ToolGate's results folder (reporting.out): made by every run\ntoolgate-out/\n"
    )
    assert (repo / ".gitignore").read_text() == "node_modules/"
    # the results folder of a run is ignored where it is written: under the config's folder
    code, _, _ = cli(capsys, "validate", "--config", str(sub / "toolgate.yml"))
    assert code == 0


def test_init__existing_gitignore__line_added_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc")
    code, out, _ = cli(capsys, "init", str(tmp_path))
    assert code == 0 and "Added" in out
    assert (tmp_path / ".gitignore").read_text() == (
        "*.pyc\n# ToolGate's results folder (reporting.out): made by every run\ntoolgate-out/\n"
    )


def test_init__outside_a_repository__says_where_to_move_the_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "init", str(tmp_path / "x"))
    assert code == 0
    assert (tmp_path / "x" / ".github" / "workflows" / "toolgate.yml").is_file()
    assert "is not in a git repository: GitHub runs workflows only from the repository " in out
    assert "Move " in out and ".github/workflows/toolgate.yml there" in out


def test_init__starter_agent__passes_its_own_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(capsys, "init", str(tmp_path))
    ds = load_dataset(tmp_path / "evals" / "dataset.jsonl")
    one_turn = [c for c in ds.cases if not c.conversation]
    agent = AgentProcess(agent=tmp_path / "evals" / "agent.py")
    try:
        outcomes = [agent.run_case(c) for c in one_turn]
    finally:
        agent.close()
    assert [o.case_id for o in outcomes if not o.passed] == []
    # and the whole scaffold through the gate, its conversation case included
    out = tmp_path / "out"
    code, _, _ = cli(
        capsys, "check", "--config", str(tmp_path / "toolgate.yml"), "--out", str(out),
        "--baseline", "none", "--no-progress",
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert code == 0
    assert all(c["passed"] for c in results["cases"])
    (conv,) = [c for c in results["cases"] if c["id"] == "book-after-asking"]
    assert [s["turns_passed"] for s in conv["samples"]] == [2, 2]


def test_init__existing_file__refuses_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "tools.json").write_text("mine")
    code, _, err = cli(capsys, "init", str(tmp_path))
    assert code == 2 and "refusing to overwrite" in err and "tools.json" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["evals", "tools.json"]
    assert (tmp_path / "evals" / "tools.json").read_text() == "mine"


def test_init__target_is_a_file__usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f").write_text("")
    assert cli(capsys, "init", str(tmp_path / "f"))[0] == 2


# ── a real process ──


def test_cli_process__validate_exit_codes(tmp_path: Path) -> None:
    config = project(tmp_path)
    run = [sys.executable, "-m", "gate", "validate", "--config", str(config)]
    unpinned = subprocess.run(run, capture_output=True, text=True, timeout=60, check=False)
    assert unpinned.returncode == 2 and "not pinned" in unpinned.stderr
    pin = subprocess.run(
        [sys.executable, "-m", "gate", "pin", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert pin.returncode == 0
    ok = subprocess.run(run, capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0 and ok.stdout.startswith("OK: ")


AGENTS = {
    "missing program": (
        "{kind: command, command: [./no-such-agent]}",
        "agent.command",
        "not there",
    ),
    "program not on PATH": (
        "{kind: command, command: [toolgate-no-such-program, x.py]}",
        "agent.command",
        "not on PATH",
    ),
    "missing script": (
        "{kind: command, command: [python, agent_missing.py]}",
        "agent.command",
        "agent_missing.py",
    ),
    "missing system prompt": (
        "{kind: openai, model: m, base_url: 'http://127.0.0.1:9', api_key_env: TG_TEST_KEY,"
        " system_prompt_file: prompts/missing.txt}",
        "agent.system_prompt_file",
        "no such file",
    ),
    "callable that cannot be imported": (
        "{kind: python, callable: 'no_such_module_tg:agent'}",
        "agent.callable",
        "cannot import",
    ),
}


@pytest.mark.parametrize("situation", sorted(AGENTS))
def test_validate__agent_check_would_refuse__exit_2_naming_the_field_like_check(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    situation: str,
) -> None:
    agent, field, words = AGENTS[situation]
    monkeypatch.setenv("TG_TEST_KEY", "k")
    config = project(tmp_path)
    config.write_text(
        config.read_text().replace("agent: {kind: replay, runs: runs.jsonl}", f"agent: {agent}")
    )
    assert cli(capsys, "pin", "--config", str(config))[0] == 0
    code, _, err = cli(capsys, "validate", "--config", str(config))
    assert code == 2, err
    assert f"toolgate.yml:5: {field}" in err and words in err, err
    if situation == "missing script":
        return  # check starts the interpreter; every sample then fails with its error
    # check refuses the same config for the same field: validate said so first.
    code, _, err = cli(capsys, "check", "--config", str(config), "--out", str(tmp_path / "o"))
    assert code == 2 and field in err, err
