"""``GitHubContext.from_environ``: every input of action.yml, as the runner passes it, read
by the one context the Action, ``toolgate check`` and ``toolgate comment`` share."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gate.action import OUTPUTS, resolve_workdir
from gate.errors import InputError
from gate.github.context import (
    INPUT_DEFAULTS,
    ActionInputs,
    BaselineInput,
    BaselineKind,
    FailOn,
    GitHubContext,
    Mode,
    TokenSource,
    input_value,
)
from gate.model import Shard

ROOT = Path(__file__).resolve().parents[2]


def action_yml() -> dict:
    return YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))


def context(tmp_path: Path, **inputs: str) -> GitHubContext:
    env = {f"INPUT_{k.upper()}": v for k, v in inputs.items()}
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    return GitHubContext.from_environ(env)


def settings(tmp_path: Path, **inputs: str) -> ActionInputs:
    """The inputs, raising every problem (what the Action does first)."""
    ctx = context(tmp_path, **inputs)
    ctx.require_valid()
    return ctx.inputs


# ─── action.yml and the entrypoint agree ──────────────────────────────────────


def test_action_yml__inputs_and_defaults__match_the_entrypoint():
    meta = action_yml()
    declared = {name: str(spec.get("default", "")) for name, spec in meta["inputs"].items()}
    assert set(declared) == set(INPUT_DEFAULTS)
    for name, default in declared.items():
        if name == "github-token":
            assert default == "${{ github.token }}"
            continue
        assert default == INPUT_DEFAULTS[name], f"input {name}: action.yml {default!r}"
    for name, spec in meta["inputs"].items():
        assert spec.get("description", "").strip(), f"input {name} is not documented"


def test_action_yml__outputs__are_the_ones_the_entrypoint_writes():
    meta = action_yml()
    assert tuple(meta["outputs"]) == OUTPUTS
    for name, spec in meta["outputs"].items():
        assert spec.get("description", "").strip(), f"output {name} is not documented"


def test_action_yml__is_a_docker_action_with_branding():
    meta = action_yml()
    assert meta["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert meta["name"] and meta["description"] and meta["author"]
    assert set(meta["branding"]) == {"icon", "color"}


# Each input, set to a value other than its default, changes the settings: the
# entrypoint reads every input action.yml declares.
NON_DEFAULT = {
    "mode": ("run", lambda c: c.inputs.mode is Mode.RUN),
    "config": ("gates/other.yml", lambda c: c.inputs.config == "gates/other.yml"),
    "github-token": ("ghs_abc", lambda c: c.token == "ghs_abc"),
    "comment": ("false", lambda c: c.inputs.comment is False),
    "baseline": ("none", lambda c: c.inputs.baseline == BaselineInput(BaselineKind.NONE)),
    "samples": ("5", lambda c: c.inputs.samples == 5),
    "shard": ("2/4", lambda c: c.inputs.shard == Shard(2, 4)),
    "merge": ("shards", lambda c: c.inputs.merge == "shards"),
    "fail-on": ("never", lambda c: c.inputs.fail_on is FailOn.NEVER),
    "require-baseline": ("true", lambda c: c.inputs.require_baseline is True),
    "out": ("gate-out", lambda c: c.inputs.out == "gate-out"),
    "working-directory": ("sub", lambda c: c.inputs.working_directory == "sub"),
    "install": ("requirements.txt", lambda c: c.inputs.install == "requirements.txt"),
    "setup": ("npm ci", lambda c: c.inputs.setup == "npm ci"),
}


def test_every_input__is_read_by_the_entrypoint(tmp_path):
    assert set(NON_DEFAULT) == set(action_yml()["inputs"])
    default = context(tmp_path)
    for name, (value, changed) in NON_DEFAULT.items():
        extra = {"MODE": "merge"} if name == "merge" else {}
        env = {f"INPUT_{name.upper()}": value, "GITHUB_WORKSPACE": str(tmp_path)}
        env.update({f"INPUT_{k}": v for k, v in extra.items()})
        got = GitHubContext.from_environ(env)
        assert not got.problems, got.problems
        assert changed(got), f"INPUT_{name.upper()}={value!r} was not read"
        assert not changed(default), f"the default of {name} already looks changed"


# ─── how the runner spells the variables ──────────────────────────────────────


def test_inputs__hyphenated_names__read_as_the_runner_passes_them(tmp_path):
    c = GitHubContext.from_environ(
        {
            "GITHUB_WORKSPACE": str(tmp_path),
            "INPUT_GITHUB-TOKEN": "ghs_x",
            "INPUT_FAIL-ON": "never",
            "INPUT_WORKING-DIRECTORY": "examples/support-agent",
        }
    )
    assert (c.token, c.inputs.fail_on, c.inputs.working_directory) == (
        "ghs_x",
        FailOn.NEVER,
        "examples/support-agent",
    )


def test_inputs__underscore_spelling__also_accepted():
    assert input_value({"INPUT_FAIL_ON": "never"}, "fail-on") == "never"
    assert input_value({"INPUT_FAIL-ON": "gate", "INPUT_FAIL_ON": "never"}, "fail-on") == "gate"


@pytest.mark.parametrize("name", ["install", "setup"])
def test_inputs__install_or_setup_in_a_mode_that_runs_no_agent__input_error(tmp_path, name):
    c = GitHubContext.from_environ(
        {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_MODE": "comment", f"INPUT_{name.upper()}": "x"}
    )
    assert [(p.field, p.message) for p in c.problems] == [
        (name, "is only used when the agent runs (mode check or run; mode is 'comment')")
    ]


def test_inputs__missing__take_the_defaults(tmp_path):
    c = context(tmp_path)
    assert c.inputs == ActionInputs() and not c.problems
    s = c.inputs
    assert s.mode is Mode.CHECK and s.fail_on is FailOn.GATE and s.comment is True
    assert (s.config, s.baseline, s.working_directory) == (
        "toolgate.yml",
        BaselineInput(BaselineKind.AUTO),
        ".",
    )
    assert (s.samples, s.shard, s.merge, s.out, c.token) == (None, None, None, None, None)


def test_baseline__a_path__is_a_file_baseline(tmp_path):
    assert settings(tmp_path, baseline="base/results.json").baseline == BaselineInput(
        BaselineKind.FILE, "base/results.json"
    )
    assert settings(tmp_path, baseline="NONE").baseline.kind is BaselineKind.NONE


def test_token__falls_back_to_github_token_variable(tmp_path):
    c = GitHubContext.from_environ({"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_TOKEN": "ghs_env"})
    assert (c.token, c.token_source) == ("ghs_env", TokenSource.GITHUB_TOKEN)


@pytest.mark.parametrize(
    ("env", "token", "source"),
    [
        # The input wins over both environment variables ...
        (
            {"INPUT_GITHUB-TOKEN": "in", "GITHUB_TOKEN": "env", "TOOLGATE_GITHUB_TOKEN": "tg"},
            "in",
            TokenSource.INPUT,
        ),
        ({"INPUT_GITHUB_TOKEN": "in", "GITHUB_TOKEN": "env"}, "in", TokenSource.INPUT),
        # ... the environment counts only when the input is empty or missing ...
        (
            {"INPUT_GITHUB-TOKEN": "  ", "GITHUB_TOKEN": "env", "TOOLGATE_GITHUB_TOKEN": "tg"},
            "tg",
            TokenSource.TOOLGATE_GITHUB_TOKEN,
        ),
        ({"INPUT_GITHUB-TOKEN": "", "GITHUB_TOKEN": "env"}, "env", TokenSource.GITHUB_TOKEN),
        ({"GITHUB_TOKEN": "env"}, "env", TokenSource.GITHUB_TOKEN),
        # ... and none at all is no token.
        ({"INPUT_GITHUB-TOKEN": "", "GITHUB_TOKEN": ""}, None, None),
    ],
)
def test_token__input_wins__environment_only_when_input_empty(env, token, source):
    c = GitHubContext.from_environ(env)
    assert (c.token, c.token_source) == (token, source)


def test_token__hidden_from_repr(tmp_path):
    c = context(tmp_path, **{"github-token": "ghs_secret_value"})
    assert "ghs_secret_value" not in repr(c)
    assert "ghs_secret_value" not in str(c)


def test_booleans__yaml_core_spellings(tmp_path):
    for raw, want in [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
    ]:
        assert settings(tmp_path, comment=raw).comment is want


# ─── bad inputs: every problem, named ─────────────────────────────────────────


def test_bad_inputs__collected_not_raised_until_required(tmp_path):
    c = context(tmp_path, mode="gate")
    assert [p.field for p in c.problems] == ["mode"]
    with pytest.raises(InputError, match="Fix the `with:` inputs"):
        c.require_valid()


def test_bad_inputs__all_reported_at_once_naming_each_input(tmp_path):
    with pytest.raises(InputError) as err:
        settings(
            tmp_path,
            mode="gate",
            comment="yes",
            samples="many",
            shard="5/4",
            **{"fail-on": "sometimes"},
        )
    fields = [p.field for p in err.value.problems]
    assert fields == ["mode", "fail-on", "comment", "samples", "shard"]
    messages = "\n".join(p.message for p in err.value.problems)
    assert "must be one of check, run, merge, comment, not 'gate'" in messages
    assert "must be `gate` or `never`, not 'sometimes'" in messages
    assert "must be `true` or `false`, not 'yes'" in messages


@pytest.mark.parametrize(
    ("inputs", "field", "fragment"),
    [
        ({"mode": "merge"}, "merge", "needs `merge:`"),
        ({"merge": "shards"}, "merge", "only read by `mode: merge`"),
        ({"mode": "merge", "merge": "s", "shard": "1/2"}, "shard", "joins every shard"),
        ({"shard": "0/4"}, "shard", "1 <= i <= n"),
        ({"samples": "0"}, "samples", "from 1 to 100"),
        ({"config": ""}, "config", "must not be empty"),
    ],
)
def test_bad_inputs__combinations(tmp_path, inputs, field, fragment):
    with pytest.raises(InputError) as err:
        settings(tmp_path, **inputs)
    assert [p.field for p in err.value.problems] == [field]
    assert fragment in err.value.problems[0].message


def test_working_directory__outside_the_workspace__refused(tmp_path):
    (tmp_path / "ws").mkdir()
    with pytest.raises(InputError) as err:
        resolve_workdir(tmp_path / "ws", "../elsewhere")
    assert err.value.problems[0].field == "working-directory"
    assert "leaves the workspace" in err.value.problems[0].message


def test_working_directory__missing_folder__refused(tmp_path):
    with pytest.raises(InputError, match="is not a folder of the workspace"):
        resolve_workdir(tmp_path, "nope")


def test_working_directory__inside__resolved(tmp_path):
    (tmp_path / "sub").mkdir()
    assert resolve_workdir(tmp_path, "sub") == (tmp_path / "sub").resolve()


def test_workflow_file__from_github_workflow_ref(tmp_path):
    s = GitHubContext.from_environ(
        {
            "GITHUB_WORKSPACE": str(tmp_path),
            "GITHUB_WORKFLOW_REF": "octo/agent/.github/workflows/toolgate.yml@refs/pull/7/merge",
            "GITHUB_REPOSITORY": "octo/agent",
            "GITHUB_RUN_ID": "991",
            "GITHUB_SERVER_URL": "https://github.test",
        }
    )
    assert s.workflow_file == "toolgate.yml"
    assert s.run_url == "https://github.test/octo/agent/actions/runs/991"


def test_github_budget__from_environment(tmp_path):
    env = {"GITHUB_WORKSPACE": str(tmp_path), "TOOLGATE_GITHUB_BUDGET_S": "12.5"}
    assert GitHubContext.from_environ(env).budget_s == 12.5
    assert GitHubContext.from_environ({}).budget_s == 60.0


@pytest.mark.parametrize("raw", ["inf", "Infinity", "-inf", "nan", "1e999", "-3", "0", "soon"])
def test_github_budget__not_finite_or_not_positive__a_located_input_error(tmp_path, raw):
    c = GitHubContext.from_environ({"TOOLGATE_GITHUB_BUDGET_S": raw})
    assert [(p.file, p.field) for p in c.problems] == [("environment", "TOOLGATE_GITHUB_BUDGET_S")]
    assert f"not {raw!r}" in c.problems[0].message
    with pytest.raises(InputError, match="Fix the `env:` of the ToolGate step"):
        c.require_valid()


def test_artifact_cap__mib_from_environment__default_256():
    assert GitHubContext.from_environ({}).artifact_max_bytes == 256 * 1024 * 1024
    env = {"TOOLGATE_ARTIFACT_MAX_MB": "32"}
    assert GitHubContext.from_environ(env).artifact_max_bytes == 32 * 1024 * 1024


@pytest.mark.parametrize("raw", ["0", "-1", "4097", "1.5", "inf", "lots"])
def test_artifact_cap__not_a_whole_number_in_range__a_located_input_error(raw):
    c = GitHubContext.from_environ({"TOOLGATE_ARTIFACT_MAX_MB": raw})
    assert [(p.file, p.field) for p in c.problems] == [("environment", "TOOLGATE_ARTIFACT_MAX_MB")]
    assert f"not {raw!r}" in c.problems[0].message
