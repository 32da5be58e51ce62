"""results.json is written case by case, byte for byte what dumps_results gives whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.results import _CASES_PLACEHOLDER, Results, dumps_results, write_results
from tests.report.fixtures import failing, flaky, passing


@pytest.mark.parametrize("make", [passing, failing, flaky])
def test_write_results__fixture__same_bytes_as_whole_dump(tmp_path: Path, make) -> None:
    results: Results = make()
    assert len(results.cases) > 1
    write_results(tmp_path / "results.json", results)
    assert (tmp_path / "results.json").read_bytes() == dumps_results(results)


def test_write_results__no_cases__same_bytes(tmp_path: Path) -> None:
    results = passing().model_copy(update={"cases": []})
    write_results(tmp_path / "results.json", results)
    assert (tmp_path / "results.json").read_bytes() == dumps_results(results)


def test_write_results__a_string_holding_the_placeholder__still_exact(tmp_path: Path) -> None:
    results = failing()
    results = results.model_copy(update={"gate_name": _CASES_PLACEHOLDER})
    write_results(tmp_path / "results.json", results)
    assert (tmp_path / "results.json").read_bytes() == dumps_results(results)


def test_write_results__plain_dict__same_bytes(tmp_path: Path) -> None:
    data = {"b": 1, "cases": [{"id": "x", "s": "line\nbreak"}, {"id": "y"}], "a": [1, 2]}
    write_results(tmp_path / "results.json", data)
    assert (tmp_path / "results.json").read_bytes() == dumps_results(data)
