"""Expected calls written with batches: how they load (JSONL and CSV alike), and the
argument-match modes' spelling (``args_match`` and its older ``required_args_only``)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path
from typing import Any

from gate.dataset import load_dataset
from gate.dataset.columns import csv_cell
from gate.judge.rubrics import expectation_json
from gate.model import ArgsMatch, Case
from tests.dataset.helpers import write_jsonl

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string", "default": "C"}},
        "required": ["city"],
    },
}
BOOK = {"name": "book_trip", "description": "Book.", "parameters": {"type": "object"}}
TRIP_CALLS = [
    [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "get_weather", "args": {"city": "Berlin"}},
    ],
    {"name": "book_trip", "args": {}},
]


def trip(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "trip",
        "user_input": "Weather in Paris and Berlin, then book the warmer one",
        "available_tools": [WEATHER, BOOK],
        "expected_tool_calls": TRIP_CALLS,
        "order": "strict",
    }
    base.update(overrides)
    return base


def _strip(c: Case) -> Case:
    return dataclasses.replace(c, source=dataclasses.replace(c.source, file="", line=0))


def test_load__batched_expectation__each_element_is_one_batch(tmp_path: Path) -> None:
    case = load_dataset(write_jsonl(tmp_path / "d.jsonl", [trip()])).cases[0]
    assert [(e.name, e.batch) for e in case.expected_tool_calls] == [
        ("get_weather", 0),
        ("get_weather", 0),
        ("book_trip", 1),
    ]
    assert expectation_json(case.expected_tool_calls) == TRIP_CALLS


def test_load__plain_list__carries_no_batches(tmp_path: Path) -> None:
    flat = [TRIP_CALLS[0][0], TRIP_CALLS[0][1], TRIP_CALLS[1]]
    case = load_dataset(write_jsonl(tmp_path / "d.jsonl", [trip(expected_tool_calls=flat)])).cases[
        0
    ]
    assert [e.batch for e in case.expected_tool_calls] == [None, None, None]
    assert expectation_json(case.expected_tool_calls) == flat


def test_load__batches_of_one__round_trip_as_batches(tmp_path: Path) -> None:
    serial = [[TRIP_CALLS[0][0]], [TRIP_CALLS[1]]]
    case = load_dataset(
        write_jsonl(tmp_path / "d.jsonl", [trip(expected_tool_calls=serial)])
    ).cases[0]
    assert [e.batch for e in case.expected_tool_calls] == [0, 1]
    assert expectation_json(case.expected_tool_calls) == serial


def test_load__batched_alternative__keeps_its_batches(tmp_path: Path) -> None:
    item = trip(expected_tool_calls=[TRIP_CALLS[1]], acceptable_alternatives=[TRIP_CALLS])
    case = load_dataset(write_jsonl(tmp_path / "d.jsonl", [item])).cases[0]
    assert [e.batch for e in case.expected_tool_calls] == [None]
    assert [e.batch for e in case.acceptable_alternatives[0]] == [0, 0, 1]


def _csv(items: list[dict[str, Any]]) -> str:
    cols = list(dict.fromkeys(k for item in items for k in item))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for item in items:
        w.writerow([csv_cell(c, item.get(c)) for c in cols])
    return out.getvalue()


def test_load__csv_batches__same_cases_as_jsonl(tmp_path: Path) -> None:
    items = [
        trip(),
        trip(id="alt", expected_tool_calls=[TRIP_CALLS[1]], acceptable_alternatives=[TRIP_CALLS]),
    ]
    (tmp_path / "d.csv").write_text(_csv(items), encoding="utf-8")
    from_csv = load_dataset(tmp_path / "d.csv").cases
    from_jsonl = load_dataset(write_jsonl(tmp_path / "d.jsonl", items)).cases
    assert [_strip(c) for c in from_csv] == [_strip(c) for c in from_jsonl]


def test_load__documented_csv_row__round_trips(tmp_path: Path) -> None:
    # The example of docs/dataset.md (a batch in one CSV cell), byte for byte.
    (tmp_path / "tools.json").write_text(json.dumps([WEATHER, BOOK]), encoding="utf-8")
    text = (
        "id,user_input,available_tools,expected_tool_calls,order\n"
        'trip,Weather in Paris and Berlin then book,@tools.json,"[[{""name"": ""get_weather"", '
        '""args"": {""city"": ""Paris""}}, {""name"": ""get_weather"", ""args"": {""city"": '
        '""Berlin""}}], {""name"": ""book_trip"", ""args"": {}}]",strict\n'
    )
    (tmp_path / "d.csv").write_text(text, encoding="utf-8")
    case = load_dataset(tmp_path / "d.csv").cases[0]
    assert expectation_json(case.expected_tool_calls) == TRIP_CALLS
    item = {
        "id": case.id,
        "user_input": case.user_input,
        "available_tools": "@tools.json",
        "expected_tool_calls": expectation_json(case.expected_tool_calls),
        "order": "strict",
    }
    assert _csv([item]) == text


def test_load__args_match__both_spellings(tmp_path: Path) -> None:
    calls = [
        {"name": "get_weather", "args": {"city": "Paris"}, "args_match": "exact_except_defaults"},
        {"name": "get_weather", "args": {"city": "Rome"}, "args_match": "exact"},
        {"name": "get_weather", "args": {"city": "Oslo"}, "required_args_only": False},
        {"name": "get_weather", "args": {"city": "Bern"}, "required_args_only": True},
        {"name": "get_weather", "args": {"city": "Linz"}},
    ]
    case = load_dataset(
        write_jsonl(tmp_path / "d.jsonl", [trip(expected_tool_calls=calls, order=None)])
    ).cases[0]
    assert [e.args_match for e in case.expected_tool_calls] == [
        ArgsMatch.EXACT_EXCEPT_DEFAULTS,
        ArgsMatch.EXACT,
        ArgsMatch.EXACT,
        ArgsMatch.SUBSET,
        ArgsMatch.SUBSET,
    ]
    # Written back: the older spelling for exact (what every release reads), the new one
    # only for the new mode.
    assert [e.to_json().get("args_match") for e in case.expected_tool_calls] == [
        "exact_except_defaults",
        None,
        None,
        None,
        None,
    ]
    assert [e.to_json().get("required_args_only") for e in case.expected_tool_calls] == [
        None,
        False,
        False,
        None,
        None,
    ]


def test_case_content__plain_case__hashes_as_the_first_release(tmp_path: Path) -> None:
    # The case hash keys the base history: a case using no newer form keeps the fields
    # (and so the hash) every release gave it; batches and the new mode change it.
    from gate.pipeline.sequential import case_content

    flat = [TRIP_CALLS[0][0], {**TRIP_CALLS[0][1], "required_args_only": False}, TRIP_CALLS[1]]
    items = [
        trip(id="plain", expected_tool_calls=flat),
        trip(id="batched"),
        trip(
            id="defaults",
            expected_tool_calls=[{**TRIP_CALLS[1], "args_match": "exact_except_defaults"}],
        ),
    ]
    plain, batched, defaults = load_dataset(write_jsonl(tmp_path / "d.jsonl", items)).cases
    assert case_content(plain)["expected_tool_calls"] == [
        {
            "name": "get_weather",
            "args": {
                "city": {
                    "kind": "equal",
                    "value": "Paris",
                    "options": (),
                    "pattern": None,
                    "tol": 0.0,
                }
            },
            "required_args_only": True,
        },
        {
            "name": "get_weather",
            "args": {
                "city": {
                    "kind": "equal",
                    "value": "Berlin",
                    "options": (),
                    "pattern": None,
                    "tol": 0.0,
                }
            },
            "required_args_only": False,
        },
        {"name": "book_trip", "args": {}, "required_args_only": True},
    ]
    assert [e.get("batch") for e in case_content(batched)["expected_tool_calls"]] == [0, 0, 1]
    assert case_content(defaults)["expected_tool_calls"][0]["args_match"] == "exact_except_defaults"
