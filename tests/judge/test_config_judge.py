"""The config's side of the judge: judge metrics are never gated; rubrics are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.config import load_config
from gate.errors import ConfigError

HEAD = """\
dataset:
  path: dataset.jsonl
agent:
  kind: replay
  runs: runs.jsonl
"""
CR = "  custom_rubrics:\n    - "


def load(tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "toolgate.yml"
    path.write_text(HEAD + body)
    return load_config(path, display="toolgate.yml")


def test_config__judge_metric_in_gates__refused_with_line(tmp_path: Path) -> None:
    body = """\
gates:
  - metric: tool_selection_f1
    min: 0.9
  - metric: judge.tool_appropriateness
    min: 0.8
judge:
  model: gpt-judge
"""
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, body)
    (problem,) = exc.value.problems
    assert problem.file == "toolgate.yml" and problem.line == 9
    assert problem.field == "gates[1].metric"
    assert "judge scores are reported, never gated" in problem.message


@pytest.mark.parametrize("metric", ["judge.argument_fidelity", "judge.my_custom", "judge."])
def test_config__any_judge_metric_in_gates__refused(tmp_path: Path, metric: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, f"gates:\n  - metric: {metric}\n    max: 1\n")
    assert "never gated" in exc.value.problems[0].message


def test_config__free_text_similarity_gate__accepted_being_deterministic(tmp_path: Path) -> None:
    cfg = load(tmp_path, "gates:\n  - metric: free_text_similarity\n    min: 0.6\n")
    assert cfg.gates[0].metric == "free_text_similarity"


def test_config__judge_section__defaults_and_fields(tmp_path: Path) -> None:
    cfg = load(tmp_path, "judge:\n  model: gpt-judge\n  sample: 0.25\n  max_evaluations: 40\n")
    assert cfg.judge is not None
    assert (cfg.judge.rubrics, cfg.judge.sample, cfg.judge.max_evaluations) == (
        ["tool_appropriateness"],
        0.25,
        40,
    )
    assert (cfg.judge.concurrency, cfg.judge.max_consecutive_failures, cfg.judge.json_mode) == (
        4,
        3,
        True,
    )


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ("  rubrics: [tool_apropriateness]\n", "judge", "did you mean 'tool_appropriateness'"),
        ("  sample: 0\n", "judge.sample", "greater than 0"),
        ("  max_evaluations: -1\n", "judge.max_evaluations", "greater than or equal to 0"),
        (
            CR + "{name: tool_appropriateness, prompt_file: p.txt, scale: [a, b]}\n",
            "judge",
            "name of a built-in rubric",
        ),
        (
            "  custom_rubrics:\n    - {name: mine, prompt_file: p.txt, scale: [a, b]}\n"
            "    - {name: mine, prompt_file: q.txt, scale: [a, b]}\n",
            "judge",
            "defined twice",
        ),
        (
            "  custom_rubrics:\n    - {name: mine, prompt_file: p.txt, scale: [Yes, no]}\n",
            "judge.custom_rubrics[0].scale",
            "lower-case",
        ),
        (
            "  custom_rubrics:\n    - {name: mine, prompt_file: p.txt, scale: [yes_, yes_]}\n",
            "judge.custom_rubrics[0].scale",
            "appears twice",
        ),
        (
            CR + "{name: mine, prompt_file: p.txt, scale: [a, b], values: {a: 1}}\n",
            "judge.custom_rubrics[0]",
            "missing ['b']",
        ),
        (
            CR + "{name: mine, prompt_file: p.txt, scale: [a, b], values: {a: 1, b: 2}}\n",
            "judge.custom_rubrics[0].values.b",
            "less than or equal to 1",
        ),
        ("  json_mode: no\n", "judge.json_mode", "must be true or false"),
        ("  base_url: file:///etc/passwd\n", "judge.base_url", "must be an http:// or https://"),
    ],
)
def test_config__bad_judge_settings__error_names_field(
    tmp_path: Path, body: str, field: str, message: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, "judge:\n  model: m\n" + body)
    problem = exc.value.problems[0]
    assert problem.field == field and message in problem.message, problem


def test_config__custom_rubric_named_in_rubrics__accepted(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        "judge:\n  model: m\n  rubrics: [concise, error_handling]\n"
        + CR
        + "{name: concise, prompt_file: c.txt, scale: [yes, no], values: {yes: 1, no: 0}}\n",
    )
    assert cfg.judge is not None and cfg.judge.rubrics == ["concise", "error_handling"]
