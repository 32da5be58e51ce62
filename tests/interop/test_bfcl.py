"""BFCL import: conversion rules, schema notes, errors, and scoring with the bfcl profile."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gate.config import load_config
from gate.dataset import load_dataset
from gate.interop import InteropError, bfcl
from tests.interop.conftest import SAMPLES, toolgate

BFCL = SAMPLES / "bfcl"
SIMPLE = (
    BFCL / "BFCL_v4_simple_python.json",
    BFCL / "possible_answer" / "BFCL_v4_simple_python.json",
)


def _case(result: bfcl.BfclImport, case_id: str) -> dict[str, Any]:
    return next(c for c in result.cases if c["id"] == case_id)


def _tool(case: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t["function"] for t in case["available_tools"] if t["function"]["name"] == name)


def test_convert__optional_param__in_with_blank_and_exact_call() -> None:
    result = bfcl.convert(*SIMPLE)
    case = _case(result, "simple_python_0")
    (call,) = case["expected_tool_calls"]
    assert call == {
        "name": "calculate_triangle_area",
        "args": {"base": 10, "height": 5, "unit": {"$in": ["units", ""]}},
        "required_args_only": False,
    }
    assert case["user_input"].startswith("Find the area")
    assert case["order"] == "unordered" and case["expected_no_tool"] is False


def test_convert__history_and_float_param__int_option_becomes_float() -> None:
    case = _case(bfcl.convert(*SIMPLE), "simple_python_1")
    assert case["message_history"] == [
        {"role": "system", "content": "You are a helpful assistant."}
    ]
    args = case["expected_tool_calls"][0]["args"]
    assert args["days"] == {"$in": [1.0, ""]}
    assert isinstance(args["days"]["$in"][0], float)
    assert args["location"] == {"$in": ["New York, NY", "NYC"]}


def test_convert__bfcl_types__become_json_schema() -> None:
    case = _case(bfcl.convert(*SIMPLE), "simple_python_2")
    params = _tool(case, "db_fetch")["parameters"]
    assert params["type"] == "object"
    assert params["properties"]["conditions"]["type"] == "object"
    assert params["properties"]["columns"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Columns.",
    }
    assert "type" not in params["properties"]["extra"]  # any: no constraint
    weather = _tool(_case(bfcl.convert(*SIMPLE), "simple_python_1"), "weather.get")
    # BFCL's `default: null` makes the parameter nullable (its answers accept None).
    assert weather["parameters"]["properties"]["unit"]["type"] == ["string", "null"]
    assert weather["parameters"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit", None]
    assert weather["parameters"]["properties"]["days"]["type"] == "number"


def test_convert__dict_options__expanded_to_every_concrete_object() -> None:
    case = _case(bfcl.convert(*SIMPLE), "simple_python_2")
    conditions = case["expected_tool_calls"][0]["args"]["conditions"]["$in"]
    # 1 department x 2 schools x (2024 or omitted) = 4 objects.
    assert len(conditions) == 4
    assert {"department": "Science", "school": "Bluebird HS"} in conditions
    assert {"department": "Science", "school": "Bluebird High School", "year": 2024} in conditions
    assert case["expected_tool_calls"][0]["args"]["columns"] == {"$in": [["name", "email"], ""]}


def test_convert__answer_of_another_type__schema_admits_it_and_the_note_says_so() -> None:
    result = bfcl.convert(*SIMPLE)
    case = _case(result, "simple_python_3")
    notes = [str(n) for n in result.notes if n.case_id == "simple_python_3"]
    # BFCL accepts "five" for an integer parameter (its answer's own type): so does the
    # schema the importer writes.
    assert _tool(case, "convert")["parameters"]["properties"]["amount"]["type"] == [
        "integer",
        "string",
    ]
    assert any('"five"' in n and "admits 'string'" in n for n in notes), notes
    assert "contradicts its schema" in case["notes"]


def test_convert__undeclared_optional_answer_param__left_out_of_the_call() -> None:
    result = bfcl.convert(*SIMPLE)
    case = _case(result, "simple_python_3")
    # BFCL refuses `rate` in any output (the function does not declare it) and lets it be
    # omitted: the expected call leaves it out, so the exact call refuses it too.
    assert "rate" not in case["expected_tool_calls"][0]["args"]
    notes = [str(n) for n in result.notes if n.case_id == "simple_python_3"]
    assert any("'rate'" in n and "does not declare" in n for n in notes), notes


def _rewrite(tmp_path: Path, old: str, new: str) -> tuple[Path, Path]:
    q = tmp_path / "BFCL_v4_simple_python.json"
    a = tmp_path / "a.json"
    shutil.copy(SIMPLE[0], q)
    text = SIMPLE[1].read_text(encoding="utf-8")
    assert old in text
    a.write_text(text.replace(old, new), encoding="utf-8")
    return q, a


def test_convert__undeclared_required_answer_param__item_left_out(tmp_path: Path) -> None:
    result = bfcl.convert(*_rewrite(tmp_path, '"rate": [1.1, ""]', '"rate": [1.1]'))
    assert "simple_python_3" not in [c["id"] for c in result.cases]
    (note,) = [n for n in result.skipped if n.case_id == "simple_python_3"]
    assert "does not declare" in note.message and "rejects every output" in note.message


def test_convert__answer_outside_the_enum__enum_admits_it(tmp_path: Path) -> None:
    # weather.get's unit enum is ["celsius", "fahrenheit"]; BFCL never reads an enum.
    result = bfcl.convert(*_rewrite(tmp_path, '"unit": ["fahrenheit"]', '"unit": ["kelvin"]'))
    case = _case(result, "simple_python_1")
    unit = _tool(case, "weather.get")["parameters"]["properties"]["unit"]
    assert unit["enum"] == ["celsius", "fahrenheit", None, "kelvin"]
    assert case["expected_tool_calls"][0]["args"]["unit"] == "kelvin"
    assert any("kelvin" in str(n) and "enum admits" in str(n) for n in result.notes)
    load_dataset(bfcl.write_import(result, tmp_path / "out")[0])  # the dataset loads


def test_convert__answer_inside_the_enum_as_bfcl_compares__schema_unchanged(
    tmp_path: Path,
) -> None:
    result = bfcl.convert(*_rewrite(tmp_path, '"unit": ["fahrenheit"]', '"unit": ["FAHRENHEIT"]'))
    unit = _tool(_case(result, "simple_python_1"), "weather.get")["parameters"]["properties"]
    assert unit["unit"]["enum"] == ["celsius", "fahrenheit", None]
    assert not [n for n in result.notes if n.case_id == "simple_python_1"]


RELEVANCE = BFCL / "BFCL_v4_live_relevance.json"


def test_convert__live_relevance__one_call_to_any_offered_tool() -> None:
    result = bfcl.convert(RELEVANCE, None)
    assert result.kind is bfcl.Kind.RELEVANCE
    first, second = result.cases
    assert first["order"] == "superset" and first["expected_no_tool"] is False
    any_args = {"args": {}, "required_args_only": True}
    assert first["expected_tool_calls"] == [{"name": "search_engine.query", **any_args}]
    assert first["acceptable_alternatives"] == [[{"name": "generate_image", **any_args}]]
    assert second["expected_tool_calls"] == [{"name": "get_weather", **any_args}]
    assert "acceptable_alternatives" not in second


def test_locate_category__live_relevance__needs_no_answers(tmp_path: Path) -> None:
    shutil.copy(RELEVANCE, tmp_path / RELEVANCE.name)
    assert bfcl.locate_category("live_relevance", tmp_path) == (tmp_path / RELEVANCE.name, None)


def test_cli_import_then_score__live_relevance__any_call_passes(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    proc = toolgate("import", "bfcl", "--questions", RELEVANCE, "--out", out)
    assert proc.returncode == 0, proc.stderr
    cfg = load_config(out / "toolgate.yml")
    assert cfg.dataset.normalize.profile == "default"
    assert cfg.scoring.default_order == "superset"
    runs = [
        # The second tool, with arguments its schema refuses: BFCL only asks for a call.
        _run("live_relevance_0-0-0", [("generate_image", {"prompt": 5, "style": "x"})]),
        _run("live_relevance_1-1-0", []),  # no call: BFCL fails it
    ]
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    proc = toolgate(
        "score", "--config", out / "toolgate.yml", "--runs", out / "runs.jsonl", "--out", out / "r"
    )
    assert (out / "r" / "results.json").exists(), proc.stderr
    results = json.loads((out / "r" / "results.json").read_text())
    passed = {c["id"]: c["passed"] for c in results["cases"]}
    assert passed == {"live_relevance_0-0-0": True, "live_relevance_1-1-0": False}


def test_convert__parallel__one_unordered_batch() -> None:
    result = bfcl.convert(
        BFCL / "BFCL_v4_parallel.json", BFCL / "possible_answer" / "BFCL_v4_parallel.json"
    )
    (case,) = result.cases
    assert result.kind is bfcl.Kind.PARALLEL
    assert [c["args"]["artist"] for c in case["expected_tool_calls"]] == [
        "Taylor Swift",
        "Maroon 5",
    ]
    assert case["order"] == "unordered"


def test_convert__irrelevance__expected_no_tool_without_answers() -> None:
    result = bfcl.convert(BFCL / "BFCL_v4_irrelevance.json", None)
    assert [c["expected_no_tool"] for c in result.cases] == [True, True]
    assert all(c["expected_tool_calls"] == [] for c in result.cases)
    assert result.cases[1]["available_tools"] == []
    assert result.cases[1]["message_history"][-1] == {"role": "assistant", "content": "Hello!"}


def test_convert__empty_option_list__item_left_out_with_reason(tmp_path: Path) -> None:
    q = tmp_path / "q.json"
    a = tmp_path / "a.json"
    shutil.copy(SIMPLE[0], q)
    a.write_text(SIMPLE[1].read_text().replace('"base": [10]', '"base": []'), encoding="utf-8")
    result = bfcl.convert(q, a, category="simple_python")
    assert "simple_python_0" not in [c["id"] for c in result.cases]
    assert any(n.case_id == "simple_python_0" and "empty list" in n.message for n in result.skipped)


def test_convert__missing_answer__error_names_both_files(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text(SIMPLE[1].read_text().splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(InteropError) as err:
        bfcl.convert(SIMPLE[0], a)
    text = str(err.value)
    assert "no possible answer for 'simple_python_1'" in text
    assert str(a) in text and "BFCL_v4_simple_python.json:2" in text


def test_convert__bad_json_line__error_names_the_line(tmp_path: Path) -> None:
    q = tmp_path / "BFCL_v4_simple_python.json"
    lines = SIMPLE[0].read_text().splitlines()
    lines[2] = lines[2][:-5]
    q.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InteropError) as err:
        bfcl.convert(q, SIMPLE[1])
    assert err.value.problems[0].line == 3
    assert err.value.problems[0].file == str(q)


def test_convert__unknown_bfcl_type__error_names_the_field(tmp_path: Path) -> None:
    q = tmp_path / "q.json"
    q.write_text(
        SIMPLE[0]
        .read_text()
        .replace(
            '"type": "integer", "description": "The base',
            '"type": "int32", "description": "The base',
        ),
        encoding="utf-8",
    )
    with pytest.raises(InteropError) as err:
        bfcl.convert(q, SIMPLE[1])
    (problem,) = err.value.problems
    assert problem.line == 1
    assert problem.field == "function[0].parameters.properties.base.type"
    assert "int32" in problem.message


def test_category__java__refused_with_the_reason() -> None:
    with pytest.raises(InteropError, match="Java"):
        bfcl.category_kind("simple_java")


def test_locate_category__multiple__does_not_pick_parallel_multiple(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    for name in (
        "BFCL_v4_parallel_multiple.json",
        "BFCL_v3_multiple.json",
        "BFCL_v4_multiple.json",
    ):
        (tmp_path / name).write_text("{}\n")
        (tmp_path / "possible_answer" / name).write_text("{}\n")
    questions, answers = bfcl.locate_category("multiple", tmp_path)
    assert questions.name == "BFCL_v4_multiple.json"
    assert answers == tmp_path / "possible_answer" / "BFCL_v4_multiple.json"


def test_write_import__dataset_loads_and_config_pins_it(tmp_path: Path) -> None:
    result = bfcl.convert(*SIMPLE)
    dataset, config = bfcl.write_import(result, tmp_path)
    ds = load_dataset(dataset)
    assert [c.id for c in ds.cases] == [f"simple_python_{i}" for i in range(4)]
    cfg = load_config(config)
    assert cfg.dataset.normalize.profile == "bfcl"
    assert cfg.dataset.sha256 == ds.sha256
    assert cfg.scoring.default_order == "unordered"
    with pytest.raises(InteropError, match="already exists"):
        bfcl.write_import(result, tmp_path)


def _run(case_id: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "sample": 0,
        "turns": [{"calls": [{"name": n, "arguments": a} for n, a in calls]}] if calls else [],
        "final": None if calls else "",
    }


def test_cli_import_then_score__bfcl_rules_decide_each_case(tmp_path: Path) -> None:
    out = tmp_path / "bfcl"
    proc = toolgate(
        "import", "bfcl", "--questions", SIMPLE[0], "--answers", SIMPLE[1], "--out", out
    )
    assert proc.returncode == 0, proc.stderr
    assert "converted 4 BFCL simple_python items" in proc.stdout
    assert "simple_python_3" in proc.stderr  # the contradiction is reported
    runs = [
        # BFCL's string rule: case, spaces and punctuation do not count; unit may be omitted.
        _run("simple_python_0", [("calculate_triangle_area", {"base": 10, "height": 5})]),
        # int for a float parameter at the top level is accepted; "NYC" is an alternative.
        _run(
            "simple_python_1",
            [("weather.get", {"location": "nyc", "unit": "fahrenheit", "days": 1})],
        ),
        # An argument the answer does not list fails the call (BFCL: unexpected parameter).
        _run(
            "simple_python_2",
            [
                (
                    "db_fetch",
                    {
                        "table": "teachers",
                        "conditions": {"department": "science", "school": "Bluebird HS"},
                        "limit": 5,
                    },
                )
            ],
        ),
        _run("simple_python_3", []),
    ]
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    proc = toolgate(
        "score",
        "--config",
        out / "toolgate.yml",
        "--runs",
        out / "runs.jsonl",
        "--out",
        out / "res",
    )
    assert (out / "res" / "results.json").exists(), proc.stderr
    results = json.loads((out / "res" / "results.json").read_text())
    passed = {c["id"]: c["passed"] for c in results["cases"]}
    assert passed == {
        "simple_python_0": True,
        "simple_python_1": True,
        "simple_python_2": False,
        "simple_python_3": False,
    }


def test_cli_import_bfcl__existing_output__refused_with_exit_2(tmp_path: Path) -> None:
    assert (
        toolgate(
            "import", "bfcl", "--questions", SIMPLE[0], "--answers", SIMPLE[1], "--out", tmp_path
        ).returncode
        == 0
    )
    proc = toolgate(
        "import", "bfcl", "--questions", SIMPLE[0], "--answers", SIMPLE[1], "--out", tmp_path
    )
    assert proc.returncode == 2
    assert "already exists" in proc.stderr and "--force" in proc.stderr
    proc = toolgate(
        "import",
        "bfcl",
        "--category",
        "simple_python",
        "--data-dir",
        tmp_path / "nowhere",
        "--out",
        tmp_path / "x",
    )
    assert proc.returncode == 2 and "no BFCL_v*_simple_python.json" in proc.stderr
