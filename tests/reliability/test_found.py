"""Bugs the fuzz suite found, each pinned by the smallest input that showed it.

Each test names the reader, the input and the outcome that is now guaranteed; the commit
that added it fixed the reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.adapters import PayloadError, Provider, stream_accumulator
from gate.interop import InteropError
from gate.interop.transcripts import Format, import_transcripts
from tests.reliability import helpers as h


@pytest.mark.parametrize(
    "events",
    [
        # a message_start whose usage is not an object
        [{"type": "message_start", "message": {"usage": "abcd"}}],
        [{"type": "message_start", "message": {"usage": ["ab", ""]}}],
        # a message_delta whose usage is not an object
        [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": [[1, 2, 3]]}],
        # a text block started with a non-text "text", then a text delta
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": []},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hi"},
            },
        ],
    ],
)
def test_anthropic_stream__junk_usage_or_text__a_turn_or_payload_error(
    events: list[object],
) -> None:
    """Were ValueError / TypeError from ``dict.update`` and ``list + str``."""
    acc = stream_accumulator(Provider.ANTHROPIC)
    try:
        for ev in events:
            acc.add(ev)
        turn = acc.finish()
    except PayloadError:
        return
    assert turn.calls == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"id": "a", "request": {"messages": [', 1),
        ('\n\n{"id": "a", "request": {"messages": [}', 3),
        ('[\n  {"id": "a",\n   "request": {"messages": []}},\n  {"id" "b"}\n]', 4),
        ('{"id": "a", "id": "b", "request": {}}', 1),
    ],
)
def test_transcripts__broken_single_record__error_names_a_line(
    tmp_path: Path, text: str, line: int
) -> None:
    """A file that is neither JSON Lines nor one JSON value was reported without a line."""
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(InteropError) as info:
        import_transcripts(path, Format.OPENAI, display="t.jsonl")
    h.check_input_error(info.value, files=["t.jsonl"], lines=True)
    assert info.value.problems[0].line == line


def test_transcripts__cli__broken_record__exit_2_with_line(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "a"})[:-3])
    proc = h.toolgate("import", "transcripts", "--format", "openai", "t.jsonl", cwd=tmp_path)
    h.assert_clean_exit(proc, 2)
    assert "t.jsonl:1:" in proc.stderr


@pytest.mark.parametrize("dialect", [[], ["x"], {}, 5, None, True])
def test_tool_schema__non_string_dialect__problem_at_line_and_field(
    tmp_path: Path, dialect: object
) -> None:
    """``"$schema": []`` made jsonschema hash a list: TypeError (found by the fuzz suite)."""
    tool = {"name": "probe", "parameters": {"$schema": dialect, "type": "object"}}
    row = h.case(available_tools=[tool], expected_tool_calls=[{"name": "probe", "args": {}}],
                 must_not_call=..., tool_responses=...)  # fmt: skip
    (tmp_path / "d.jsonl").write_text(json.dumps(h.no_tool_case()) + "\n" + json.dumps(row) + "\n")
    from gate.dataset import load_dataset
    from gate.errors import DatasetError

    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    h.check_input_error(
        info.value,
        files=["d.jsonl"],
        lines=True,
        expect=(2, "available_tools[0].parameters.$schema"),
    )


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ('"minimum": 0', '"minimum": NaN', 25),
        ('"description": "Refund an order."', '"description": "a", "description": "b"', 25),
        ('"maxLength": 500', '"maxLength": 1e400', 71),
        ('"type": "boolean"', '"type": "\\udc00"', 2),
    ],
)
def test_tools_file__refused_after_decoding__problem_names_the_tools_line(
    tmp_path: Path, old: str, new: str, line: int
) -> None:
    """NaN, a duplicate key or an overflowing number in ``@tools.json`` was reported
    without a line (the syntax-error line finder found no syntax error)."""
    from gate.dataset import load_dataset
    from gate.errors import DatasetError

    text = json.dumps(h.TOOLS, indent=2)
    assert old in text
    (tmp_path / "tools.json").write_text(text.replace(old, new, 1))
    (tmp_path / "d.jsonl").write_text(json.dumps(h.case(available_tools="@tools.json")) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "d.jsonl", display="d.jsonl")
    h.check_input_error(info.value, files=["d.jsonl", "tools.json"], lines=True)
    assert [(p.file, p.line) for p in info.value.problems][:1] == [("tools.json", line)]
