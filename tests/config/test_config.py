"""toolgate.yml: every problem names file, line and field; YAML is plain data only."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.agents.command import CommandAgent
from gate.config import Config, PassCheck, load_config
from gate.errors import ConfigError, InputError
from gate.model import Risk
from gate.scorers.registry import COST_METRICS, GATEABLE

MINIMAL = "dataset:\n  path: cases.jsonl\nagent:\n  kind: replay\n  runs: runs.jsonl\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolgate.yml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_config(
            write(tmp_path, text),
            display="toolgate.yml",
            metrics=GATEABLE,
            cost_metrics=COST_METRICS,
        )
    assert isinstance(err.value, InputError)
    return [str(p) for p in err.value.problems]


def test_config__minimal__defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL))
    assert isinstance(cfg, Config)
    assert cfg.samples == 2 and cfg.gates == [] and cfg.dataset.sha256 is None
    # no policy key set: the tests against the base history with their defaults
    assert (cfg.policy.alpha, cfg.policy.max_extra_samples) == (0.05, None)
    assert cfg.policy.max_samples_per_case == 60 and cfg.policy.min_history == 36
    assert cfg.resolve(cfg.dataset.path) == (tmp_path / "cases.jsonl").resolve()


def test_config__enums_and_tuples_from_yaml__accepted(tmp_path: Path) -> None:
    text = MINIMAL + (
        "scoring:\n  pass_checks: [calls_matched, order]\n"
        "  tools:\n    refund: {risk: irreversible}\n"
    )
    text = text.replace(
        "  path: cases.jsonl\n", "  path: cases.jsonl\n  normalize: {id_prefixes: [ord_, cus_]}\n"
    )
    cfg = load_config(write(tmp_path, text))
    assert cfg.scoring.pass_checks == [PassCheck.CALLS_MATCHED, PassCheck.ORDER]
    assert cfg.scoring.tools["refund"].risk is Risk.IRREVERSIBLE
    assert cfg.dataset.normalize.id_prefixes == ("ord_", "cus_")


def test_config__numeric_version__kept_as_text(tmp_path: Path) -> None:
    cfg = load_config(
        write(tmp_path, MINIMAL.replace("cases.jsonl\n", "cases.jsonl\n  version: 1.2\n"))
    )
    assert cfg.dataset.version == "1.2"


def test_config__command_agent__parsed(tmp_path: Path) -> None:
    text = (
        "dataset: {path: d.jsonl}\n"
        "agent:\n  kind: command\n  command: [python, agent.py]\n  env: {A: b}\n"
    )
    agent = load_config(write(tmp_path, text)).agent
    assert (
        isinstance(agent, CommandAgent)
        and agent.command == ["python", "agent.py"]
        and agent.env == {"A": "b"}
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "dataset:\n  path: d.jsonl\n  sha265: abc\nagent: {kind: replay, runs: r}\n",
            ["toolgate.yml:3: dataset.sha265: unknown key (did you mean 'sha256'?)"],
        ),
        (
            "dataset: {path: d.jsonl}\nagent:\n  kind: command\n  comand: [x]\n",
            [
                "toolgate.yml:2: agent.command: required",
                "toolgate.yml:4: agent.comand: unknown key (did you mean 'command'?)",
            ],
        ),
        (
            MINIMAL + "sample: 3\n",
            ["toolgate.yml:6: sample: unknown key (did you mean 'samples'?)"],
        ),
        (
            MINIMAL + "reporting:\n  comment: no\n",
            ["toolgate.yml:7: reporting.comment: must be true or false, not 'no'"],
        ),
        (MINIMAL + "samples: true\n", ["toolgate.yml:6: samples: Input should be a valid integer"]),
        (
            MINIMAL + "samples: 0\n",
            ["toolgate.yml:6: samples: Input should be greater than or equal to 1"],
        ),
        (
            MINIMAL + "gates:\n  - metric: judge.tool_appropriateness\n    min: 0.8\n",
            [
                "toolgate.yml:7: gates[0].metric: 'judge.tool_appropriateness' is a judge score: "
                "judge scores are reported, never gated"
            ],
        ),
        (
            MINIMAL + "gates:\n  - metric: call_acuracy\n    min: 0.8\n",
            [
                "toolgate.yml:7: gates[0].metric: "
                "unknown metric 'call_acuracy' (did you mean 'call_accuracy'?)"
            ],
        ),
        (
            MINIMAL + "gates:\n  - metric: call_accuracy\n",
            ["toolgate.yml:7: gates[0]: a gate needs `min`, `max` or `max_increase`"],
        ),
        (
            "dataset:\n  path: d.jsonl\n  sha256: abc\nagent: {kind: replay, runs: r}\n",
            ["toolgate.yml:3: dataset.sha256: must be the dataset's full sha256"],
        ),
        (
            "dataset: {path: d.jsonl}\nagent: {kind: magic}\n",
            ["toolgate.yml:2: agent: `kind` must be one of replay, command, python, openai, mcp"],
        ),
        (
            MINIMAL + "confirm:\n  max_extra_samples: 5\n",
            [
                "toolgate.yml:6: confirm: `confirm` was replaced by sequential sampling: extra "
                "samples now go to the cases whose test against the base history is undecided; "
                "remove `confirm` and set `policy.max_extra_samples` to cap them"
            ],
        ),
        (
            MINIMAL + "policy:\n  alpha: 0.5\n",
            ["toolgate.yml:7: policy.alpha: Input should be less than or equal to 0.2"],
        ),
        (
            MINIMAL + "policy:\n  max_extra_samples: -1\n",
            ["toolgate.yml:7: policy.max_extra_samples: Input should be greater than or equal"],
        ),
        (
            MINIMAL + "policy:\n  max_samples_per_case: 0\n",
            ["toolgate.yml:7: policy.max_samples_per_case: Input should be greater than or"],
        ),
        (
            MINIMAL + "policy:\n  alpa: 0.1\n",
            ["toolgate.yml:7: policy.alpa: unknown key (did you mean 'alpha'?)"],
        ),
        ("agent: {kind: replay, runs: r}\n", ["toolgate.yml:1: dataset: required"]),
        ("- a\n- b\n", ["toolgate.yml:1: the config must be a mapping of settings"]),
        (
            MINIMAL + "scoring:\n  extra_calls: fail\n",
            [
                "toolgate.yml:7: scoring.extra_calls: removed: a case's order mode decides "
                "whether extra calls fail it; set `scoring.default_order: superset`"
            ],
        ),
        (
            MINIMAL + "scoring:\n  pass_checks: [calls_matched, no_extra_calls]\n",
            ["toolgate.yml:7: scoring.pass_checks: `no_extra_calls` was removed"],
        ),
        (
            MINIMAL + "scoring:\n  default_order: sometimes\n",
            ["toolgate.yml:7: scoring.default_order: Input should be 'unordered'"],
        ),
        (
            MINIMAL + "gates:\n  - metric: call_accuracy\n    max_increase: 0.1\n",
            [
                "toolgate.yml:7: gates[0]: `max_increase` bounds what a sample costs against "
                "the base history"
            ],
        ),
        (
            MINIMAL + "gates:\n  - metric: steps\n    max_increase: 0.1\n    min: 1\n",
            ["toolgate.yml:7: gates[0]: `max_increase` is a gate of its own"],
        ),
        (
            MINIMAL + "gates:\n  - metric: steps\n    max_increase: -0.1\n",
            ["toolgate.yml:8: gates[0].max_increase: Input should be greater than"],
        ),
        (
            MINIMAL + "gates:\n  - metric: total_tokens\n    max: 4000\n"
            "  - metric: cost\n    max_increase: 0.15\n",
            ["toolgate.yml:9: gates[1].metric: a gate on `cost` needs prices: add `pricing:"],
        ),
        (
            MINIMAL + "pricing:\n  gpt-4o: {input_per_mtok: 2.5, ouput_per_mtok: 10}\n",
            [
                "toolgate.yml:7: pricing.gpt-4o.ouput_per_mtok: unknown key "
                "(did you mean 'output_per_mtok'?)",
                "toolgate.yml:7: pricing.gpt-4o.output_per_mtok: required",
            ],
        ),
        (
            MINIMAL + "pricing:\n  default: {input_per_mtok: -1, output_per_mtok: 10}\n",
            ["toolgate.yml:7: pricing.default.input_per_mtok: Input should be greater than"],
        ),
        (
            MINIMAL + "gates:\n  - metric: latency_s\n    max: 2\n",
            [
                "toolgate.yml:7: gates[0].metric: 'latency_s' is the agent's wall time: it is "
                "reported, never gated"
            ],
        ),
    ],
    ids=[
        "unknown key",
        "unknown key in union",
        "top-level typo",
        "strict boolean no",
        "boolean as int",
        "range",
        "judge metric in gates",
        "metric typo",
        "gate without bound",
        "sha256 pattern",
        "agent kind",
        "confirm replaced",
        "policy alpha range",
        "policy negative cap",
        "policy per-case cap",
        "policy typo",
        "missing dataset",
        "not a mapping",
        "removed extra_calls names default_order",
        "removed no_extra_calls check",
        "default_order value",
        "max_increase on quality metric",
        "max_increase with min",
        "negative max_increase",
        "cost gate without pricing",
        "pricing unknown key",
        "negative price",
        "latency gate",
    ],
)
def test_config__invalid__file_line_field(tmp_path: Path, text: str, expected: list[str]) -> None:
    found = problems(tmp_path, text)
    assert len(found) == len(expected), found
    for got, want in zip(found, expected, strict=True):
        assert got.startswith(want), (got, want)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            "    - {id: a, resaon: gone}\n",
            [
                "toolgate.yml:4: dataset.retired[0].reason: required",
                "toolgate.yml:4: dataset.retired[0].resaon: unknown key (did you mean 'reason'?)",
            ],
        ),
        ("    - {id: a}\n", ["toolgate.yml:4: dataset.retired[0].reason: required"]),
        ("    - {id: '', reason: x}\n", ["toolgate.yml:4: dataset.retired[0].id: "]),
        (
            "    - {id: a, reason: one}\n    - {id: a, reason: two}\n",
            ["toolgate.yml:3: dataset.retired: the case id 'a' is retired twice"],
        ),
    ],
    ids=["typo", "no reason", "empty id", "twice"],
)
def test_config__retired_cases__bad_entries_named_by_line_and_field(
    tmp_path: Path, entries: str, expected: list[str]
) -> None:
    text = "dataset:\n  path: d.jsonl\n  retired:\n" + entries + "agent: {kind: replay, runs: r}\n"
    found = problems(tmp_path, text)
    assert len(found) == len(expected), found
    for got, want in zip(found, expected, strict=True):
        assert got.startswith(want), (got, want)


def test_config__retired_cases__reasons_by_id(tmp_path: Path) -> None:
    text = (
        "dataset:\n  path: d.jsonl\n  retired:\n    - {id: a, reason: merged into b}\n"
        "agent: {kind: replay, runs: r}\n"
    )
    cfg = load_config(write(tmp_path, text))
    assert cfg.dataset.retired_reasons() == {"a": "merged into b"}


def test_config__several_problems__all_reported_in_line_order(tmp_path: Path) -> None:
    text = (
        "dataset:\n  path: d.jsonl\n  verison: 1\n"
        "agent: {kind: replay, runs: r}\nsamples: 0\nreporting: {comment: yes}\n"
    )
    found = problems(tmp_path, text)
    assert [f.split(":")[1] for f in found] == ["3", "5", "6"]


def test_config__missing_file__cannot_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "nope.yml", display="nope.yml")
    assert str(err.value).startswith("nope.yml: cannot read")


def test_config__example__loads() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "support-agent" / "toolgate.yml"
    cfg = load_config(example)
    assert cfg.samples == 3 and {g.metric for g in cfg.gates} >= {
        "tool_selection_f1",
        "call_accuracy",
        "schema_validity",
        "unnecessary_call_rate",
    }
