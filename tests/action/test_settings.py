"""``ActionSettings.from_environ``: every input of action.yml, as the runner passes it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gate.action import (
    INPUT_DEFAULTS,
    OUTPUTS,
    ActionSettings,
    FailOn,
    Mode,
    input_value,
)
from gate.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def action_yml() -> dict:
    return YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))


def settings(tmp_path: Path, **inputs: str) -> ActionSettings:
    env = {f"INPUT_{k.upper()}": v for k, v in inputs.items()}
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    return ActionSettings.from_environ(env)


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
    "mode": ("run", lambda s: s.mode is Mode.RUN),
    "config": ("gates/other.yml", lambda s: s.config == "gates/other.yml"),
    "github-token": ("ghs_abc", lambda s: s.github_token == "ghs_abc"),
    "comment": ("false", lambda s: s.comment is False),
    "baseline": ("none", lambda s: s.baseline == "none"),
    "samples": ("5", lambda s: s.samples == 5),
    "shard": ("2/4", lambda s: s.shard == "2/4"),
    "merge": ("shards", lambda s: s.merge == "shards"),
    "fail-on": ("never", lambda s: s.fail_on is FailOn.NEVER),
    "out": ("gate-out", lambda s: s.out == "gate-out"),
    "working-directory": ("sub", lambda s: s.working_directory == "sub"),
}


def test_every_input__is_read_by_the_entrypoint(tmp_path):
    assert set(NON_DEFAULT) == set(action_yml()["inputs"])
    default = settings(tmp_path)
    for name, (value, changed) in NON_DEFAULT.items():
        extra = {"MODE": "merge"} if name == "merge" else {}
        env = {f"INPUT_{name.upper()}": value, "GITHUB_WORKSPACE": str(tmp_path)}
        env.update({f"INPUT_{k}": v for k, v in extra.items()})
        got = ActionSettings.from_environ(env)
        assert changed(got), f"INPUT_{name.upper()}={value!r} was not read"
        assert not changed(default), f"the default of {name} already looks changed"


# ─── how the runner spells the variables ──────────────────────────────────────


def test_inputs__hyphenated_names__read_as_the_runner_passes_them(tmp_path):
    s = ActionSettings.from_environ(
        {
            "GITHUB_WORKSPACE": str(tmp_path),
            "INPUT_GITHUB-TOKEN": "ghs_x",
            "INPUT_FAIL-ON": "never",
            "INPUT_WORKING-DIRECTORY": "examples/support-agent",
        }
    )
    assert (s.github_token, s.fail_on, s.working_directory) == (
        "ghs_x",
        FailOn.NEVER,
        "examples/support-agent",
    )


def test_inputs__underscore_spelling__also_accepted():
    assert input_value({"INPUT_FAIL_ON": "never"}, "fail-on") == "never"
    assert input_value({"INPUT_FAIL-ON": "gate", "INPUT_FAIL_ON": "never"}, "fail-on") == "gate"


def test_inputs__missing__take_the_defaults(tmp_path):
    s = settings(tmp_path)
    assert s.mode is Mode.CHECK and s.fail_on is FailOn.GATE and s.comment is True
    assert (s.config, s.baseline, s.working_directory) == ("toolgate.yml", "auto", ".")
    assert (s.samples, s.shard, s.merge, s.out, s.github_token) == (None, None, None, None, None)


def test_token__falls_back_to_github_token_variable(tmp_path):
    s = ActionSettings.from_environ({"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_TOKEN": "ghs_env"})
    assert s.github_token == "ghs_env"


def test_token__hidden_from_repr(tmp_path):
    s = settings(tmp_path, **{"github-token": "ghs_secret_value"})
    assert "ghs_secret_value" not in repr(s)
    assert "ghs_secret_value" not in str(s)


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
    s = replace(settings(tmp_path / "ws"), working_directory="../elsewhere")
    with pytest.raises(InputError) as err:
        _ = s.workdir
    assert err.value.problems[0].field == "working-directory"
    assert "leaves the workspace" in err.value.problems[0].message


def test_working_directory__missing_folder__refused(tmp_path):
    s = replace(settings(tmp_path), working_directory="nope")
    with pytest.raises(InputError, match="is not a folder of the workspace"):
        _ = s.workdir


def test_workflow_file__from_github_workflow_ref(tmp_path):
    s = ActionSettings.from_environ(
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


def test_github_budget__from_environment_and_checked(tmp_path):
    env = {"GITHUB_WORKSPACE": str(tmp_path), "TOOLGATE_GITHUB_BUDGET_S": "12.5"}
    assert ActionSettings.from_environ(env).github_budget_s == 12.5
    with pytest.raises(InputError) as err:
        ActionSettings.from_environ({**env, "TOOLGATE_GITHUB_BUDGET_S": "-3"})
    assert err.value.problems[0].field == "TOOLGATE_GITHUB_BUDGET_S"
