"""A checked run's results.json, written without a whole results model in memory and read
back for the reports with its sample records left in the file (``open_results``): the same
bytes, the same values, every record validated, and a broken one named by its place."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gate.errors import ErrorKind, ResultsFileError
from gate.model import Verdict
from gate.pipeline.publish import validate_run, write_checked
from gate.pipeline.score import scores_to_scored
from gate.results import (
    Decisions,
    Results,
    SampleView,
    assemble,
    open_results,
    read_results,
    results_bytes,
    write_results,
)
from tests.policy.helpers import case, dataset, score, scores_from_table
from tests.report.fixtures import failing, flaky, passing


@pytest.mark.parametrize("make", [passing, failing, flaky])
def test_open_results__fixture__equal_to_read_results_samples_left_in_the_file(
    tmp_path: Path, make
) -> None:
    path = tmp_path / "results.json"
    write_results(path, make())
    whole, opened = read_results(path), open_results(path)
    assert all(isinstance(c.samples, SampleView) for c in opened.cases if c.samples)
    assert opened == whole
    assert opened.model_dump(mode="json") == whole.model_dump(mode="json")
    assert results_bytes(opened) == path.read_bytes()
    c = next(c for c in opened.cases if len(c.samples) > 1)
    assert c.samples[-1] == whole.cases[opened.cases.index(c)].samples[-1]
    assert c.samples[0:2] == list(c.samples)[0:2]


def test_open_results__a_broken_record__named_by_case_and_sample(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results(path, failing())
    lines = path.read_text().splitlines(keepends=True)
    records = [i for i, ln in enumerate(lines) if ln.startswith("        {")]
    lines[records[1]] = lines[records[1]].replace('"passed":', '"passed":"maybe","was":', 1)
    path.write_text("".join(lines))
    with pytest.raises(ResultsFileError) as info:
        open_results(path)
    assert "cases.0.samples.1" in str(info.value), str(info.value)


def test_open_results__another_layout__read_whole(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results(path, flaky())
    path.write_text(json.dumps(json.loads(path.read_text())))  # one line, another layout
    opened = open_results(path)
    assert opened == read_results(path)
    assert all(isinstance(c.samples, list) for c in opened.cases)


def test_write_checked__same_bytes_as_the_assembled_results_made_valid(tmp_path: Path) -> None:
    """What ``toolgate check`` writes from its statistics and records equals what it
    wrote by assembling the whole results: missing samples counted, and a run that is not
    valid given the verdict "error"."""
    cases = [case("a", 1), case("b", 2), case("c", 3)]
    scores = scores_from_table({"a": "PPF", "b": "PPP", "c": "FF"})
    broken = dataclasses.replace(
        score("c", 2, False, calls=0), error=f"{ErrorKind.DEADLINE.value}: no answer in 30 s"
    )
    scored = scores_to_scored(dataset=dataset(cases), scores=[*scores, broken], timing={})
    verdict = Verdict(passed=True, summary="passed")
    for max_missing, valid in ((0.5, True), (0.0, False)):
        write_checked(
            tmp_path / "a.json",
            scored.stats,
            scored.records,
            Decisions(verdict=verdict),
            max_missing=max_missing,
        )
        whole = validate_run(
            assemble(scored.stats, scored.records, Decisions(verdict=verdict)), max_missing
        )
        write_results(tmp_path / "b.json", whole)
        assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
        got: Results = open_results(tmp_path / "a.json")
        assert got.missing is not None and got.missing.count == 1
        assert (got.run_error is None) is valid
        assert got.verdict is not None and got.verdict.passed is valid


def test_open_results__a_broken_case_field__named_by_case_and_field(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results(path, failing())
    text = path.read_text()
    at = text.index('"pass_rate": ', text.index('"cases": ['))
    at = text.index('"pass_rate": ', at + 1)  # the second case's
    end = text.index(",", at)
    path.write_text(text[:at] + '"pass_rate": "most"' + text[end:])
    with pytest.raises(ResultsFileError) as info:
        open_results(path)
    assert "cases.1.pass_rate" in str(info.value), str(info.value)
