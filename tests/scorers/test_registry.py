"""The metrics registry: one line per metric, and everything else derives from it.

The end-to-end test makes the change ``docs/scoring.md`` shows — one function in a family
module and one line in ``gate/scorers/registry.py``, nothing else — in a copy of the
package, then runs the real ``toolgate check`` on it and finds the new metric in
results.json, in the report's metric table and accepted as a gate.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gate
from gate.config import ConfigError, load_config
from gate.dataset import load_dataset
from gate.interop.export import CASE_METRICS
from gate.model import Run, ToolCall, Turn
from gate.scorers import registry
from gate.scorers.facts import VIEW_FIELDS, ScoringView
from gate.scorers.registry import (
    GATEABLE,
    LOWER_IS_BETTER,
    METRICS,
    POOLED_METRICS,
    REGISTRY,
)

PACKAGE = Path(gate.__file__).resolve().parent

NEW_FUNCTION = '''

def score_extra_calls(an: Analysis) -> Scored:
    """Calls that matched no expected call: ``|A| - M`` (a count; lower is better)."""
    n = an.n_a - an.m
    if n == 0:
        return 0.0, "no extra call"
    return float(n), lambda: f"{plural(n, 'call')} matched no expectation"
'''
NEW_LINE = '    Metric("extra_calls", selection.score_extra_calls, lower_is_better=True),\n'


def test_registry__derived_lists__follow_the_table() -> None:
    assert tuple(m.name for m in REGISTRY) == METRICS
    assert len(set(METRICS)) == len(METRICS), "a metric is registered twice"
    assert {"unnecessary_call_rate"} == POOLED_METRICS
    assert {m.name for m in REGISTRY if m.lower_is_better} == LOWER_IS_BETTER
    assert set(GATEABLE) <= set(METRICS)
    assert set(CASE_METRICS) <= set(METRICS)
    for m in REGISTRY:
        assert m.score.__name__ == f"score_{m.name}", m.name
        assert m.ideal == (0.0 if m.lower_is_better else 1.0), m.name


def test_scoring_view__of_a_run__copies_exactly_the_declared_fields() -> None:
    run = Run(
        case_id="c",
        sample=4,
        turns=(Turn(calls=(ToolCall("f", {}),)),),
        final="done",
        error=None,
        latency_ms=12.0,
        usage={"prompt_tokens": 3},
        meta={"seed": 1},
    )
    view = ScoringView.of(run)
    assert tuple(f.name for f in dataclasses.fields(ScoringView)) == VIEW_FIELDS
    assert {name: getattr(view, name) for name in VIEW_FIELDS} == {
        name: getattr(run, name) for name in VIEW_FIELDS
    }
    # What is not declared cannot be read: the view is slotted.
    with pytest.raises(AttributeError):
        view.sample  # type: ignore[attr-defined]  # noqa: B018


def test_config__gate_on_an_unregistered_metric__located_error_with_did_you_mean(
    tmp_path: Path,
) -> None:
    path = tmp_path / "toolgate.yml"
    path.write_text(
        "dataset: {path: d.jsonl}\nagent: {kind: replay, runs: r.jsonl}\n"
        "gates:\n  - metric: call_acuracy\n    min: 0.5\n"
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path, display="toolgate.yml", metrics=registry.GATEABLE)
    (problem,) = exc.value.problems
    assert (problem.file, problem.line, problem.field) == ("toolgate.yml", 4, "gates[0].metric")
    assert "did you mean 'call_accuracy'" in problem.message


def _add_metric(root: Path) -> None:
    """The two edits of docs/scoring.md's worked example, on a copy of the package."""
    shutil.copytree(PACKAGE, root / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    family = root / "gate" / "scorers" / "selection.py"
    family.write_text(family.read_text() + NEW_FUNCTION)
    reg = root / "gate" / "scorers" / "registry.py"
    text = reg.read_text()
    anchor = '    Metric("case_passed", outcome.score_case_passed),\n'
    assert anchor in text
    reg.write_text(text.replace(anchor, NEW_LINE + anchor))


def test_registry__metric_added_in_two_places__in_results_report_and_gates(
    tmp_path: Path,
) -> None:
    _add_metric(tmp_path)
    tools = [{"name": "lookup", "parameters": {"type": "object"}}]
    cases = [
        {
            "id": "one",
            "user_input": "look it up",
            "available_tools": tools,
            "expected_tool_calls": [{"name": "lookup", "args": {}}],
        }
    ]
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    turns = [{"calls": [{"name": "lookup", "arguments": {}}, {"name": "lookup", "arguments": {}}]}]
    runs = [{"case_id": "one", "sample": s, "turns": turns, "final": "ok"} for s in range(2)]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    digest = load_dataset(tmp_path / "dataset.jsonl").sha256
    (tmp_path / "toolgate.yml").write_text(
        f"dataset: {{path: dataset.jsonl, sha256: {digest}}}\n"
        "agent: {kind: replay, runs: runs.jsonl}\n"
        "samples: 2\n"
        "gates:\n  - metric: extra_calls\n    max: 0.5\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "check", "--config", "toolgate.yml", "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr  # one extra call per sample: over the gate
    out = tmp_path / "toolgate-out"
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"]["extra_calls"]["mean"] == 1.0
    assert "extra_calls" in results["metric_names"]
    (gate_result,) = results["verdict"]["gates"]
    assert (gate_result["metric"], gate_result["passed"]) == ("extra_calls", False)
    report = (out / "report.md").read_text()
    assert "| `extra_calls` | 1.000 |" in report
    # The copy is the one that ran (this checkout has no such metric).
    assert "extra_calls" not in METRICS


def test_score_sample__passing__lean_reasons_and_no_evidence_unless_full() -> None:
    from gate.scorers import ScoringContext, score_sample
    from tests.scorers.helpers import call, case, expected, run

    c = case(expect=[expected("lookup")])
    r = run([call("lookup", {})])
    ctx = ScoringContext.build()
    lean, full = score_sample(c, r, ctx), score_sample(c, r, ctx, full=True)
    assert lean.passed and lean.evidence is None and full.evidence is not None
    assert lean.scores == full.scores and set(full.reasons) == set(METRICS)
    # Kept: the metrics that missed their best value or do not apply, nothing else (a
    # cost metric has no best value: its sentence only in full).
    kept = {
        m.name
        for m in REGISTRY
        if not m.cost and (lean.scores[m.name] is None or lean.scores[m.name] != m.ideal)
    }
    assert set(lean.reasons) == kept and "recovery_rate" in kept and "call_accuracy" not in kept


def test_score_sample__scores__every_metric_in_registry_order() -> None:
    """The score stage takes a sample's scores as a row in METRICS order as they come."""
    from gate.model import Case, ExpectedCall, Run, SourceRef, ToolCall, Turn
    from gate.scorers import ScoringContext, score_sample

    case = Case("c", "u", SourceRef("d.jsonl", 1), expected_tool_calls=(ExpectedCall("t"),))
    run = Run("c", 0, (Turn((ToolCall("t", {}),)),))
    score = score_sample(case, run, ScoringContext.build())
    assert tuple(score.scores) == METRICS
