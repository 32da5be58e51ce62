"""The one coverage check of a runs file against the dataset (gate.runsfile.Coverage):
each problem names the runs line, or the dataset line of a case without runs."""

from __future__ import annotations

import pytest

from gate.errors import RunsFileError
from gate.model import Shard
from gate.runsfile import Coverage
from tests.policy.helpers import case


def _cov(*ids: str, shard: Shard | None = None) -> Coverage:
    cases = [case(cid, i + 1) for i, cid in enumerate(ids)]
    return Coverage(cases, runs_display="runs.jsonl", dataset_display="dataset.jsonl", shard=shard)


def _problems(cov: Coverage) -> list[str]:
    with pytest.raises(RunsFileError) as err:
        cov.finish()
    return [str(p) for p in err.value.problems]


def test_coverage__every_case_once__passes_and_gives_dataset_indices() -> None:
    cov = _cov("a", "b")
    assert [cov.add(1, "b", 0), cov.add(2, "a", 0), cov.add(3, "a", 1), cov.add(4, "b", 1)] == [
        1,
        0,
        0,
        1,
    ]
    cov.finish()
    assert cov.samples_of(0) == 2


def test_coverage__case_without_runs__names_its_dataset_line() -> None:
    cov = _cov("a", "gone")
    cov.add(1, "a", 0)
    assert _problems(cov) == [
        "runs.jsonl: case_id: case 'gone' (line 2 of dataset.jsonl) has no run in this file"
    ]


def test_coverage__unknown_case_and_duplicate_sample__name_the_runs_lines() -> None:
    cov = _cov("a")
    assert cov.add(1, "a", 0) == 0
    assert cov.add(2, "zzz", 0) == -1
    assert cov.add(3, "a", 0) == -1
    assert cov.add(4, "a", 10_000) == 0  # a sample number too large for the bit set
    assert cov.add(5, "a", 10_000) == -1
    assert _problems(cov)[:3] == [
        "runs.jsonl:2: case_id: 'zzz' is not a case of dataset.jsonl",
        "runs.jsonl:3: sample: case 'a' sample 0 is recorded twice (first on line 1)",
        "runs.jsonl:5: sample: case 'a' sample 10000 is recorded twice (first on line 4)",
    ]


def test_coverage__uneven_sample_counts__input_error() -> None:
    cov = _cov("a", "b", "c")
    for lineno, (cid, s) in enumerate([("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)], start=1):
        cov.add(lineno, cid, s)
    assert _problems(cov) == ["runs.jsonl: sample: 1 case(s) have 1 samples, the others 2: c"]


def test_coverage__shard__other_shards_cases_refused_and_only_its_cases_expected() -> None:
    ids = [f"c{i}" for i in range(20)]
    shard = Shard(2, 3)
    mine = [i for i in ids if shard.holds(i)]
    other = next(i for i in ids if not shard.holds(i))
    cov = _cov(*ids, shard=shard)
    for lineno, cid in enumerate(mine, start=1):
        cov.add(lineno, cid, 0)
    cov.finish()  # the other shards' cases are not missing
    assert cov.add(99, other, 0) == -1
    assert _problems(cov) == [
        f"runs.jsonl:99: case_id: case {other!r} is not in shard 2/3 "
        "(score each shard's runs with its own --shard)"
    ]
