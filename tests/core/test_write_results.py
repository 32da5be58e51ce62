"""results.json: written case by case in one layout (keys sorted, two-space indentation, a
case's fields a line each, a sample record a line), whichever way it is written — from a
Results, or from a run's statistics and sample records without one — and read back equal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.pipeline.score import scores_to_scored
from gate.results import (
    Decisions,
    Results,
    dumps_results,
    read_results,
    results_bytes,
    write_results,
    write_scored,
)
from tests.policy.helpers import case, dataset, scores_from_table
from tests.report.fixtures import failing, flaky, passing


@pytest.mark.parametrize("make", [passing, failing, flaky])
def test_write_results__fixture__same_bytes_as_whole_and_reads_back(tmp_path: Path, make) -> None:
    results: Results = make()
    assert len(results.cases) > 1
    write_results(tmp_path / "results.json", results)
    data = (tmp_path / "results.json").read_bytes()
    assert data == results_bytes(results)
    back = read_results(tmp_path / "results.json")
    assert back == _lean(results)
    assert results_bytes(back) == data


def _lean(results: Results) -> Results:
    """What a record keeps: evidence only of a failing sample."""
    cases = [
        c.model_copy(
            update={
                "samples": [
                    s if not s.passed else s.model_copy(update={"evidence": {}}) for s in c.samples
                ]
            }
        )
        for c in results.cases
    ]
    return results.model_copy(update={"cases": cases})


def test_write_results__layout__a_case_field_a_line_a_sample_a_line(tmp_path: Path) -> None:
    write_results(tmp_path / "results.json", failing())
    lines = (tmp_path / "results.json").read_text().splitlines()
    samples = [ln for ln in lines if ln.startswith("        {") and ln.rstrip(",").endswith("}")]
    assert len(samples) == sum(len(c.samples) for c in failing().cases)
    assert any(ln.startswith('      "scores": [') and ln.endswith("],") for ln in lines)
    assert lines[0] == "{" and lines[1].startswith('  "advisor"')
    # A metric's statistics on one line.
    assert any(ln.startswith('    "call_accuracy": {"ci_high"') for ln in lines)


def test_write_results__no_cases__same_bytes(tmp_path: Path) -> None:
    results = passing().model_copy(update={"cases": []})
    write_results(tmp_path / "results.json", results)
    assert (tmp_path / "results.json").read_bytes() == dumps_results(results)


def test_write_results__strings_that_look_like_layout__written_as_data(tmp_path: Path) -> None:
    results = failing()
    odd = results.model_copy(update={"gate_name": '"cases": [\n    {', "notices": ["}\n]"]})
    write_results(tmp_path / "odd.json", odd)
    write_results(tmp_path / "plain.json", results)
    got = json.loads((tmp_path / "odd.json").read_bytes())
    assert got["gate_name"] == '"cases": [\n    {' and got["notices"] == ["}\n]"]
    assert got["cases"] == json.loads((tmp_path / "plain.json").read_bytes())["cases"]


def test_write_scored__same_bytes_as_writing_the_assembled_results(tmp_path: Path) -> None:
    cases = [case("a", 1), case("b", 2), case("c", 3)]
    scored = scores_to_scored(
        dataset=dataset(cases),
        scores=scores_from_table({"a": "PPF", "b": "PPP", "c": "FFF"}),
        timing={"wall_s": 1.0},
    )
    write_scored(tmp_path / "a.json", scored.stats, scored.records, Decisions(timing=scored.timing))
    write_results(tmp_path / "b.json", scored.results)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
