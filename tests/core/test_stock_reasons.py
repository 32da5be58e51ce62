"""results.json names the stock reasons of metrics that do not apply (``reasons_stock``)
instead of writing the same sentence into every sample; the reader fills them in from the
file's own ``stock_reasons`` table, and files that write every reason out still load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate import cli
from gate.errors import ResultsFileError
from gate.results import STOCK_REASONS, read_results, results_bytes
from tests.scorers.test_score_command import CASES, _many_runs


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _many_runs(6)))
    code = cli.main(
        ["score", "--dataset", str(tmp_path / "dataset.jsonl"), "--runs",
         str(tmp_path / "runs.jsonl"), "--out", str(tmp_path / "out")]
    )  # fmt: skip
    assert code == 0
    return tmp_path / "out" / "results.json"


def _samples(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for c in doc["cases"] for s in c["samples"]]


def test_score__stock_reasons__named_not_written_and_read_back_whole(scored: Path) -> None:
    text = scored.read_text()
    doc = json.loads(text)
    assert doc["stock_reasons"] == STOCK_REASONS
    named = [n for s in _samples(doc) for n in s.get("reasons_stock", [])]
    assert named, "the example's samples have metrics that do not apply"
    sentences = list(STOCK_REASONS.values())
    for sentence in sentences:  # written in the table only, once a metric that names it
        assert text.count(json.dumps(sentence)) <= sentences.count(sentence)
    assert not any(s.get("failed_checks") == [] for s in _samples(doc))
    results = read_results(scored)
    for raw, s in zip(_samples(doc), (s for c in results.cases for s in c.samples), strict=True):
        for name in raw.get("reasons_stock", []):
            assert s.reasons[name] == STOCK_REASONS[name]
        assert s.reasons_stock == []
    # Written again from what was read: the same bytes.
    assert results_bytes(results) == scored.read_bytes()


def test_read__every_reason_written_out__loads_the_same(scored: Path, tmp_path: Path) -> None:
    """A results.json of the release before (every reason written, ``failed_checks``
    always, no table) reads as the same results."""
    doc = json.loads(scored.read_text())
    del doc["stock_reasons"]
    for s in _samples(doc):
        s.setdefault("failed_checks", [])
        named = s.pop("reasons_stock", [])
        if named:
            whole = {**s.get("reasons", {}), **{n: STOCK_REASONS[n] for n in named}}
            s["reasons"] = dict(sorted(whole.items()))
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    assert old.stat().st_size > scored.stat().st_size
    assert results_bytes(read_results(old)) == results_bytes(read_results(scored))


def test_read__the_file_s_own_table__fills_its_samples(scored: Path, tmp_path: Path) -> None:
    doc = json.loads(scored.read_text())
    name = next(n for s in _samples(doc) for n in s.get("reasons_stock", []))
    doc["stock_reasons"][name] = "n/a: said otherwise by another release"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    results = read_results(other)
    filled = [s.reasons[name] for c in results.cases for s in c.samples if name in s.reasons]
    assert "n/a: said otherwise by another release" in filled


def test_read__a_name_not_in_the_table__input_error_naming_the_sample(
    scored: Path, tmp_path: Path
) -> None:
    doc = json.loads(scored.read_text())
    doc["cases"][0]["samples"][0]["reasons_stock"] = ["no_such_metric"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError) as exc:
        read_results(bad)
    (problem, *_) = exc.value.problems
    assert problem.field == "cases.0.samples.0" and "no_such_metric" in problem.message
