"""The settings of judging effects: ``scoring.pass_on``, ``scoring.default_effect``,
``scoring.tools.<name>.idempotent``, a case's ``pass_on`` and an expected call's
``required`` — validated with the field named, and left out of the hashes while unset
(a config that does not use them keeps its scoring hash and every case its history)."""

from __future__ import annotations

import json
from pathlib import Path

from gate.config import load_config
from gate.dataset import load_dataset
from gate.pipeline.sequential import case_hashes
from tests.effects.helpers import toolgate

CONFIG = """\
name: hashes
dataset:
  path: dataset.jsonl
agent:
  kind: replay
  runs: runs.jsonl
scoring:
  default_order: superset
  tools:
    issue_refund: {risk: irreversible, forbidden_args: [delete_all]}
    cancel_order: {risk: write}
  required_before:
    - tool: issue_refund
      preceded_by: [verify_identity]
"""
TOOLS = [
    {"name": "verify_identity", "parameters": {"type": "object", "properties": {}}},
    {"name": "issue_refund", "parameters": {"type": "object", "properties": {}}},
]
CASE = {
    "id": "refund",
    "user_input": "Refund ord_1",
    "available_tools": [
        {
            "name": "verify_identity",
            "parameters": {"type": "object", "properties": {"email": {"type": "string"}}},
        },
        {
            "name": "issue_refund",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    ],
    "expected_tool_calls": [
        [{"name": "verify_identity", "args": {"email": "a@b.c"}}],
        {"name": "issue_refund", "args": {"order_id": "ord_1"}, "required_args_only": False},
    ],
    "order": "strict",
    "tags": ["refund"],
}
PREVIOUS_RELEASE = (
    "d538842c9daa2c9a8536a8abcc2f06b80dba1d45141d7189087f483b83396df2",
    "fd3d0c65ace85032b3729f4488e3f79e1623bece12a016a2188ce4a9fa37befa",
)
"""This config's scoring hash and the case's hash, as the release before judging effects
computed them."""


def _hashes(tmp: Path, config: str, case: dict[str, object]) -> tuple[str, str]:
    (tmp / "toolgate.yml").write_text(config)
    (tmp / "dataset.jsonl").write_text(json.dumps(case) + "\n")
    cfg = load_config(tmp / "toolgate.yml")
    ds = load_dataset(tmp / "dataset.jsonl")
    return cfg.scoring_sha256(), case_hashes(ds.cases, cfg)["refund"]


def test_hashes__effects_settings_unset__as_the_previous_release(tmp_path: Path) -> None:
    assert _hashes(tmp_path, CONFIG, CASE) == PREVIOUS_RELEASE


def test_hashes__effects_settings_set__change_them(tmp_path: Path) -> None:
    scoring, case = _hashes(tmp_path, CONFIG + "  pass_on: effects\n", CASE)
    assert scoring != PREVIOUS_RELEASE[0] and case != PREVIOUS_RELEASE[1]
    _, own = _hashes(tmp_path, CONFIG, {**CASE, "pass_on": "effects"})
    assert own != PREVIOUS_RELEASE[1]
    idem = CONFIG.replace("{risk: write}", "{risk: write, idempotent: true}")
    assert _hashes(tmp_path, idem, CASE)[0] != PREVIOUS_RELEASE[0]
    read = _hashes(tmp_path, CONFIG + "  default_effect: read\n", CASE)[0]
    assert read != PREVIOUS_RELEASE[0]


def test_config__bad_effects_settings__exit_2_names_line_and_field(tmp_path: Path) -> None:
    bad = (
        CONFIG.replace("{risk: write}", "{risk: write, idempotent: sure}")
        + "  pass_on: effect\n  default_effect: delete\n"
    )
    (tmp_path / "toolgate.yml").write_text(bad)
    (tmp_path / "dataset.jsonl").write_text(json.dumps(CASE) + "\n")
    p = toolgate("validate", "--config", "toolgate.yml", cwd=tmp_path)
    assert p.returncode == 2
    err = p.stderr
    assert "toolgate.yml:11: scoring.tools.cancel_order.idempotent: must be true or false" in err
    assert "toolgate.yml:15: scoring.pass_on: " in err and "'calls' or 'effects'" in err
    assert "toolgate.yml:16: scoring.default_effect: " in err
    assert "Traceback" not in err


def test_dataset__bad_pass_on_or_required__exit_2_names_line_and_field(tmp_path: Path) -> None:
    rows = [
        {**CASE, "pass_on": "effect"},
        {
            **CASE,
            "id": "two",
            "expected_tool_calls": [{"name": "verify_identity", "args": {}, "required": "yes"}],
        },
    ]
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = toolgate("validate", "--dataset", "dataset.jsonl", cwd=tmp_path)
    assert p.returncode == 2
    assert (
        "dataset.jsonl:1: pass_on: must be one of calls, effects, not 'effect' "
        "(did you mean 'effects'?)"
    ) in p.stderr
    assert "dataset.jsonl:2: expected_tool_calls[0].required: must be true or false" in p.stderr


def test_dataset__csv_pass_on_column__read_like_jsonl(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    (tmp_path / "dataset.csv").write_text(
        "id,user_input,available_tools,expected_tool_calls,pass_on\n"
        'r1,Refund it,@tools.json,"[{""name"": ""issue_refund"", ""args"": {}}]",effects\n'
    )
    ds = load_dataset(tmp_path / "dataset.csv")
    assert ds.cases[0].pass_on is not None and ds.cases[0].pass_on.value == "effects"
