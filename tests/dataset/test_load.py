"""Loading valid datasets: the model built, CSV = JSONL, @file tools, the hash, streaming."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sys
import tracemalloc
from pathlib import Path

import pytest

from gate.dataset import Dataset, dataset_sha256, iter_cases, load_dataset, slice_keys
from gate.errors import DatasetError
from gate.model import (
    ArgMatcher,
    Case,
    Difficulty,
    ExpectedCall,
    FrozenResponse,
    MatcherKind,
    OrderMode,
    SourceRef,
)
from tests.dataset.helpers import LOOKUP, REFUND, row, rows, to_csv, write_csv, write_jsonl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"

FULL = row(
    id="full",
    user_input="Refund order 7, it arrived damaged.",
    message_history=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id": "7"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "delivered"}'},
    ],
    expected_tool_calls=[
        {
            "name": "lookup_order",
            "args": {"order_id": {"$in": ["7", "ord_7"]}, "include_items": {"$absent": True}},
        },
        {
            "name": "refund_order",
            "args": {
                "order_id": {"$regex": "(ord_)?7"},
                "amount": {"$approx": 19.99, "tol": 0.01},
                "reason": "damaged",
            },
            "required_args_only": False,
        },
    ],
    expected_no_tool=False,
    acceptable_alternatives=[
        [{"name": "refund_order", "args": {"order_id": {"$any": True}, "amount": 19.99}}]
    ],
    must_not_call=[],
    difficulty="hard",
    source_trace_id="tr_1",
    notes='a note, with "quotes"\nand a newline',
    order="strict",
    tool_responses=[
        {
            "name": "lookup_order",
            "args": {"order_id": "7"},
            "response": {"status": "delivered", "total": 19.99},
        },
        {"name": "lookup_order", "response": {"orders": []}},
        {"name": "refund_order", "error": {"status": 500, "message": "Internal Server Error"}},
    ],
    step_budget=4,
    tags=["refund", "history"],
)


def _strip_source(case: Case) -> Case:
    return dataclasses.replace(case, source=SourceRef("-", 0))


def test_load__every_column__builds_the_model(tmp_path: Path) -> None:
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", [FULL]))
    case = ds.case("full")
    assert case.source == SourceRef(ds.display, 1)
    assert [t.name for t in case.available_tools] == ["lookup_order", "refund_order"]
    assert case.available_tools[1].parameters == REFUND["parameters"]  # bare form
    assert case.available_tools[0].parameters == LOOKUP["function"]["parameters"]  # OpenAI form
    assert len(case.message_history) == 4 and case.message_history[3]["tool_call_id"] == "call_1"
    first, second = case.expected_tool_calls
    assert first == ExpectedCall(
        "lookup_order",
        {
            "order_id": ArgMatcher(MatcherKind.IN, options=("7", "ord_7")),
            "include_items": ArgMatcher(MatcherKind.ABSENT),
        },
    )
    assert second.required_args_only is False
    assert second.args["order_id"] == ArgMatcher(MatcherKind.REGEX, pattern="(ord_)?7")
    assert second.args["amount"] == ArgMatcher(MatcherKind.APPROX, value=19.99, tol=0.01)
    assert second.args["reason"] == ArgMatcher(MatcherKind.EQUAL, value="damaged")
    assert case.acceptable_alternatives[0][0].args["order_id"].kind is MatcherKind.ANY
    assert case.expectation_lists()[1] == case.acceptable_alternatives[0]
    assert case.difficulty is Difficulty.HARD and case.order is OrderMode.STRICT
    assert case.tool_responses == (
        FrozenResponse(
            "lookup_order",
            {"order_id": ArgMatcher(MatcherKind.EQUAL, value="7")},
            {"status": "delivered", "total": 19.99},
        ),
        FrozenResponse("lookup_order", None, {"orders": []}),
        FrozenResponse(
            "refund_order", None, None, {"status": 500, "message": "Internal Server Error"}
        ),
    )
    assert case.tool_responses[2].is_error and not case.tool_responses[1].is_error
    assert case.step_budget == 4 and case.tags == ("refund", "history")
    assert case.source_trace_id == "tr_1" and case.notes is not None and "\n" in case.notes


def test_load__no_tool_case__has_no_expectations(tmp_path: Path) -> None:
    ds = load_dataset(
        write_jsonl(tmp_path / "d.jsonl", [row(expected_tool_calls=None, expected_no_tool=True)])
    )
    case = ds.cases[0]
    assert case.expected_no_tool and case.expected_tool_calls == ()
    assert "no_tool=true" in slice_keys(case)


def test_load__csv_and_jsonl__give_identical_models(tmp_path: Path) -> None:
    items = [
        FULL,
        row(id="plain"),
        row(id="nt", expected_tool_calls=[], expected_no_tool=True, tags=["x"]),
    ]
    from_jsonl = load_dataset(write_jsonl(tmp_path / "d.jsonl", items))
    from_csv = load_dataset(write_csv(tmp_path / "d.csv", items))
    assert [_strip_source(c) for c in from_csv.cases] == [
        _strip_source(c) for c in from_jsonl.cases
    ]
    assert from_csv.tools == from_jsonl.tools


def test_load__csv_multiline_cell__line_is_the_row_start(tmp_path: Path) -> None:
    # FULL's notes hold a newline, so its row spans two physical lines.
    path = write_csv(tmp_path / "d.csv", [FULL, row(id="after")])
    ds = load_dataset(path)
    assert [c.source.line for c in ds.cases] == [2, 4]


def test_load__csv_enum_cells__raw_or_json_string(tmp_path: Path) -> None:
    header = "id,user_input,available_tools,expected_no_tool,order,difficulty\n"
    tools = json.dumps(json.dumps([LOOKUP])).replace('\\"', '""')
    body = f'a,hi,{tools},true,strict,hard\nb,hi,{tools},true,"""superset""","""easy"""\n'
    (tmp_path / "d.csv").write_text(header + body)
    a, b = load_dataset(tmp_path / "d.csv").cases
    assert (a.order, a.difficulty) == (OrderMode.STRICT, Difficulty.HARD)
    assert (b.order, b.difficulty) == (OrderMode.SUPERSET, Difficulty.EASY)


def test_load__csv_with_bom_and_crlf__loads(tmp_path: Path) -> None:
    text = to_csv([row(id="a"), row(id="b")]).replace("\n", "\r\n")
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert [c.id for c in load_dataset(path).cases] == ["a", "b"]


def test_load__csv_tools_reference__raw_cell(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([LOOKUP, REFUND]))
    path = write_csv(tmp_path / "d.csv", [row(available_tools="@tools.json")])
    ds = load_dataset(path)
    assert [t.name for t in ds.cases[0].available_tools] == ["lookup_order", "refund_order"]


def test_load__blank_lines__skipped_and_lines_kept(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(id="a"), "", "   ", row(id="b")])
    assert [(c.id, c.source.line) for c in load_dataset(path).cases] == [("a", 1), ("b", 4)]


def test_load__tools_file__shared_and_hashed(tmp_path: Path) -> None:
    tools = tmp_path / "tools" / "support.json"
    tools.parent.mkdir()
    tools.write_text(json.dumps([LOOKUP, REFUND], indent=2))
    path = write_jsonl(tmp_path / "d.jsonl", rows(3, available_tools="@tools/support.json"))
    ds = load_dataset(path)
    assert ds.cases[0].available_tools is ds.cases[2].available_tools  # one parse, shared
    assert ds.files == (path, tmp_path / "tools" / "support.json")
    expected = dataset_sha256(
        hashlib.sha256(path.read_bytes()).hexdigest(),
        {"tools/support.json": hashlib.sha256(tools.read_bytes()).hexdigest()},
    )
    assert ds.sha256 == expected


_OPENED: list[str] | None = None


def _trace_opens(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENED is not None and isinstance(args[0], str | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_trace_opens)  # audit hooks stay for the process: this one only records


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_load__dataset_and_tools_file__each_opened_once(tmp_path: Path, fmt: str) -> None:
    """The digests that make the pin are taken from the bytes read for loading: neither
    file is opened a second time, however many cases share the tools file."""
    global _OPENED
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([LOOKUP, REFUND], indent=2))
    items = rows(50, available_tools="@tools.json")
    path = (
        write_jsonl(tmp_path / "d.jsonl", items)
        if fmt == "jsonl"
        else write_csv(tmp_path / "d.csv", items)
    )
    _OPENED = []
    try:
        ds = load_dataset(path)
    finally:
        opened, _OPENED = _OPENED, None
    assert len(ds) == 50
    assert sorted(p for p in opened if p.startswith(str(tmp_path))) == sorted(
        [str(path), str(tools)]
    )
    assert ds.cases_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_sha256__manifest_rule__documented_bytes() -> None:
    manifest = (
        "toolgate-dataset-sha256-v1\ndataset\0" + "a" * 64 + "\n" + "t.json\0" + "b" * 64 + "\n"
    )
    assert (
        dataset_sha256("a" * 64, {"t.json": "b" * 64})
        == hashlib.sha256(manifest.encode()).hexdigest()
    )


def test_sha256__edit_referenced_file__changes_hash(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([LOOKUP, REFUND]))
    path = write_jsonl(tmp_path / "d.jsonl", [row(available_tools="@tools.json")])
    before = load_dataset(path).sha256
    tools.write_text(json.dumps([LOOKUP, REFUND], indent=1))
    assert load_dataset(path).sha256 != before


def test_sha256__renamed_dataset_file__same_hash(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [row()])
    b = tmp_path / "b.jsonl"
    shutil.copy(a, b)
    assert load_dataset(a).sha256 == load_dataset(b).sha256


def test_sha256__one_byte_changed__changes_hash(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [row(user_input="x")])
    first = load_dataset(a).sha256
    write_jsonl(a, [row(user_input="y")])
    assert load_dataset(a).sha256 != first


def test_dataset__case_lookup_and_tools(tmp_path: Path) -> None:
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows(3)))
    assert isinstance(ds, Dataset) and len(ds) == 3 and "c2" in ds
    assert ds.case("c2").id == "c2"
    with pytest.raises(KeyError):
        ds.case("nope")
    assert sorted(ds.tools) == ["lookup_order", "refund_order"]


def test_dataset__built_by_hand__derives_index_and_tools(tmp_path: Path) -> None:
    cases = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows(2))).cases
    ds = Dataset(path=tmp_path / "x.jsonl", display="x.jsonl", cases=cases, sha256="0" * 64)
    assert ds.case("c1") is cases[0] and set(ds.tools) == {"lookup_order", "refund_order"}


def test_iter_cases__streams_and_reports_hash(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", rows(5))
    stream = iter_cases(path)
    ids = [c.id for c in stream]
    assert ids == ["c1", "c2", "c3", "c4", "c5"]
    assert stream.sha256 == load_dataset(path).sha256 and stream.count == 5


def test_iter_cases__late_problem__stops_yielding_and_reports_all(tmp_path: Path) -> None:
    items = [*rows(3), row(id="c1"), row(id="c9", difficulty="impossible")]
    seen: list[str] = []
    with pytest.raises(DatasetError) as err:
        for case in iter_cases(write_jsonl(tmp_path / "d.jsonl", items)):
            seen.append(case.id)
    assert seen == ["c1", "c2", "c3"]
    assert [p.line for p in err.value.problems] == [4, 5]


def test_iter_cases__memory__independent_of_case_count(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([LOOKUP, REFUND]))

    def peak(n: int) -> int:
        path = write_jsonl(tmp_path / f"d{n}.jsonl", rows(n, available_tools="@tools.json"))
        tracemalloc.start()
        for _ in iter_cases(path, check_duplicates=False):
            pass
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(200), peak(4000)
    assert large < small * 1.5, (small, large)


def test_example__loads_and_is_pinned() -> None:
    """The shipped example must validate and match the sha256 its configs pin."""
    from gate.config import load_config

    ds = load_dataset(EXAMPLE / "dataset.jsonl")
    assert len(ds) >= 60
    no_tool = sum(c.expected_no_tool for c in ds.cases) / len(ds)
    assert 0.10 <= no_tool <= 0.20
    for name in ("toolgate.yml", "toolgate.regressed.yml", "toolgate.flaky.yml"):
        assert load_config(EXAMPLE / name).dataset.sha256 == ds.sha256, name


def test_example__covers_every_slice() -> None:
    ds = load_dataset(EXAMPLE / "dataset.jsonl")
    cases = ds.cases
    assert any(len(c.expected_tool_calls) == 1 for c in cases)
    assert any(len({e.name for e in c.expected_tool_calls}) > 1 for c in cases)
    assert any(c.order is OrderMode.STRICT and len(c.expected_tool_calls) > 1 for c in cases)
    assert any(
        len(c.expected_tool_calls) > 1 and len({e.name for e in c.expected_tool_calls}) == 1
        for c in cases
    )
    assert sum(bool(c.must_not_call) for c in cases) >= 5
    assert sum(bool(c.acceptable_alternatives) for c in cases) >= 5
    assert any(
        r.is_error and isinstance(r.error, dict) and r.error.get("status") == 500
        for c in cases
        for r in c.tool_responses
    )
    assert any(
        r.response in ({"results": []}, {"events": []}) for c in cases for r in c.tool_responses
    )
    assert sum(bool(c.message_history) for c in cases) >= 5
    assert {c.difficulty for c in cases} == set(Difficulty)
    assert any(
        not isinstance(c.available_tools, str) and len(c.available_tools) < 12 for c in cases
    )
    tools = json.loads((EXAMPLE / "tools.json").read_text())
    for t in tools:
        params = t["function"]["parameters"]
        assert params["additionalProperties"] is False and params["required"], t["function"]["name"]
