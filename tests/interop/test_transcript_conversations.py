"""Importing a transcript of several user messages: a conversation case and its run,
which `toolgate check` replays turn by turn; one user turn is imported byte for byte as
before; `--last-turn` keeps the one-turn import; the logs a conversation cannot hold are
located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.dataset import load_dataset
from gate.interop import InteropError
from gate.interop.transcripts import Format, import_transcripts
from gate.replay.frozen import ReplayBackend
from gate.runsfile import read_runs
from tests.interop._conversation_case import (
    A3,
    CASE_RESPONSES,
    CONVERSATION,
    GOLDEN,
    RUN_SHAPE,
    U1,
    U2,
    U3,
    assert_every_turn_passed,
    check,
    import_cases,
    read_rows,
    shape,
)
from tests.interop.conftest import SAMPLES, toolgate


def test_transcript__three_user_messages__a_conversation_case_and_its_run(
    tmp_path: Path,
) -> None:
    out = import_cases(
        tmp_path, "transcripts", "--format", "openai", SAMPLES / "conversation_openai.jsonl"
    )
    (case,) = read_rows(out / "dataset.jsonl")
    assert case["conversation"] == CONVERSATION
    assert case["tool_responses"] == CASE_RESPONSES
    assert "user_input" not in case and "expected_tool_calls" not in case
    assert case["message_history"] == []  # the system prompt is the agent's own
    assert [t["function"]["name"] for t in case["available_tools"]] == [
        "get_order",
        "verify_identity",
        "issue_refund",
    ]
    (run,) = read_rows(out / "runs.jsonl")
    assert shape(run) == RUN_SHAPE
    assert run["final"] == A3
    # the dataset loader takes it: three user turns, each with its own expectations
    (loaded,) = load_dataset(out / "dataset.jsonl").cases
    assert [t.user for t in loaded.conversation] == [U1, U2, U3]
    assert [len(t.expected_tool_calls) for t in loaded.conversation] == [0, 2, 2]
    assert loaded.conversation[0].expected_no_tool is True
    assert [(r.case_id, len(r.turns)) for _, r in read_runs(out / "runs.jsonl")] == [
        ("refund-conv-1", 6)
    ]


def test_transcript__check_with_replay__every_turn_scored_where_it_happened(
    tmp_path: Path,
) -> None:
    out = import_cases(
        tmp_path, "transcripts", "--format", "openai", SAMPLES / "conversation_openai.jsonl"
    )
    assert_every_turn_passed(check(out), "refund-conv-1")


def test_transcript__a_run_that_skips_the_verification__fails_at_turn_2(tmp_path: Path) -> None:
    out = import_cases(
        tmp_path, "transcripts", "--format", "openai", SAMPLES / "conversation_openai.jsonl"
    )
    (run,) = read_rows(out / "runs.jsonl")
    run["turns"][1]["calls"] = run["turns"][1]["calls"][1:]  # get_order only
    run["turns"][1]["tool_results"] = run["turns"][1]["tool_results"][1:]
    (out / "runs.jsonl").write_text(json.dumps(run) + "\n", encoding="utf-8")
    results = check(out)
    (sample,) = results["cases"][0]["samples"]
    assert sample["passed"] is False
    assert (sample["turns_passed"], sample["first_failing_turn"]) == (2, 2)


def test_transcript__replay_gives_each_turn_the_response_it_got(tmp_path: Path) -> None:
    imported = import_transcripts(SAMPLES / "conversation_openai.jsonl", Format.OPENAI, cases=True)
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in imported.cases), encoding="utf-8")
    (case,) = load_dataset(path).cases
    backend = ReplayBackend(case)
    backend.start_turn(1)
    assert backend.call("get_order", {"order_id": "ord_1"}).content == {
        "status": "delivered",
        "refundable": True,
    }
    backend.start_turn(2)
    assert backend.call("issue_refund", {"order_id": "ord_1"}).content == {
        "refund_id": "rf_1",
        "status": "issued",
    }
    assert backend.call("get_order", {"order_id": "ord_1"}).content == {
        "status": "refunded",
        "refundable": False,
    }
    assert not backend.misses


def test_transcript__same_call_same_response_in_a_later_turn__only_the_case_holds_it(
    tmp_path: Path,
) -> None:
    record = json.loads((SAMPLES / "conversation_openai.jsonl").read_text(encoding="utf-8"))
    last_result = record["request"]["messages"][-1]
    last_result["content"] = json.dumps({"status": "delivered", "refundable": True})
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (case,) = import_transcripts(path, Format.OPENAI, cases=True).cases
    assert "tool_responses" not in case["conversation"][2]
    assert case["tool_responses"] == CASE_RESPONSES


ONE_USER_TURN_LINES = {"openai": [1, 2]}
"""The lines of the records with one user turn, where a sample also holds others
(openai_chat.jsonl's first record has two user turns: a conversation now)."""


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini", "responses"])
def test_one_user_turn__byte_for_byte_what_it_gave_before(tmp_path: Path, fmt: str) -> None:
    name = {"openai": "openai_chat.jsonl"}.get(fmt, f"{fmt}.jsonl")
    for flags in ((), ("--last-turn",)):
        out = tmp_path / "-".join(("out", *flags))
        proc = toolgate(
            "import", "transcripts", "--format", fmt, name, "--out", out, "--cases", *flags,
            cwd=SAMPLES,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        for file in ("runs.jsonl", "dataset.jsonl", "toolgate.yml"):
            want = (GOLDEN / fmt / file).read_bytes()
            got = (out / file).read_bytes()
            lines = ONE_USER_TURN_LINES.get(fmt) if not flags and file != "toolgate.yml" else None
            if lines is None:  # the whole file
                assert got == want, (flags, file)
            else:
                assert [got.splitlines()[i] for i in lines] == [
                    want.splitlines()[i] for i in lines
                ], file


def test_last_turn_flag__earlier_turns_become_message_history(tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = toolgate(
        "import", "transcripts", "--format", "openai", SAMPLES / "conversation_openai.jsonl",
        "--out", out, "--cases", "--last-turn",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (case,) = read_rows(out / "dataset.jsonl")
    assert case["user_input"] == U3 and "conversation" not in case
    assert [m["role"] for m in case["message_history"]] == [
        "user", "assistant", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    assert case["expected_tool_calls"] == CONVERSATION[2]["expected_tool_calls"]
    (run,) = read_rows(out / "runs.jsonl")
    assert shape(run) == [
        (None, ["issue_refund"], None),
        (None, ["get_order"], None),
        (None, [], A3),
    ]
    assert load_dataset(out / "dataset.jsonl").cases[0].conversation == ()
    help_text = toolgate("import", "transcripts", "--help").stdout
    assert "--last-turn" in help_text and "message_history" in help_text


# ─── transcripts: edge cases ─────────────────────────────────────────────────


def _record(messages: list[dict[str, Any]], answer: str | None = "ok") -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": "c",
        "request": {"messages": messages, "tools": json.loads(_TOOLS)},
    }
    if answer is not None:
        rec["response"] = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
    return rec


_TOOLS = json.dumps(
    [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ]
)


def _lookup(cid: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": "ord_1"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": cid, "content": '{"status": "delivered"}'},
    ]


def _write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_edge__assistant_message_before_the_first_user_message__is_history(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        _record(
            [
                {"role": "assistant", "content": "Hi! How can I help?"},
                {"role": "user", "content": "Where is ord_1?"},
                *_lookup("c1"),
                {"role": "assistant", "content": "Delivered."},
                {"role": "user", "content": "Thanks!"},
            ]
        ),
    )
    imported = import_transcripts(path, Format.OPENAI, cases=True)
    (case,) = imported.cases
    assert case["message_history"] == [{"role": "assistant", "content": "Hi! How can I help?"}]
    assert [t["user"] for t in case["conversation"]] == ["Where is ord_1?", "Thanks!"]
    assert case["conversation"][1]["expected_tool_calls"] == []
    (run,) = imported.runs
    assert run.turns[0].user == "Where is ord_1?"  # the greeting is not part of the run
    assert run.final == "ok"
    (tmp_path / "d.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    assert len(load_dataset(tmp_path / "d.jsonl").cases[0].conversation) == 2


def test_edge__keep_system__the_prompt_is_history_a_later_one_a_note(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _record(
            [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "developer", "content": "The user is verified."},
                {"role": "user", "content": "Bye."},
            ]
        ),
    )
    (case,) = import_transcripts(path, Format.OPENAI, cases=True, keep_system=True).cases
    assert case["message_history"] == [{"role": "system", "content": "Be brief."}]
    assert [t["user"] for t in case["conversation"]] == ["Hi.", "Bye."]
    assert case["notes"] == (
        "1 system message(s) after the first user message left out (a conversation's "
        "turns are user messages)"
    )
    (plain,) = import_transcripts(path, Format.OPENAI, cases=True).cases
    assert plain["message_history"] == [] and "notes" not in plain


def test_edge__user_messages_in_a_row__one_turn_with_a_note(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _record(
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello! What can I do?"},
                {"role": "user", "content": "My order ord_1"},
                {"role": "user", "content": "where is it?"},
                *_lookup("c1"),
            ],
            answer="It was delivered.",
        ),
    )
    imported = import_transcripts(path, Format.OPENAI, cases=True)
    (case,) = imported.cases
    assert [t["user"] for t in case["conversation"]] == ["Hi.", "My order ord_1\n\nwhere is it?"]
    assert case["notes"] == "turn 2 joins 2 user messages that had no answer between them"
    (run,) = imported.runs
    assert [t.user for t in run.turns if t.user] == ["Hi.", "My order ord_1\n\nwhere is it?"]


def test_edge__user_messages_in_a_row_then_one_answer__one_turn_as_before(
    tmp_path: Path,
) -> None:
    """Every user message before the only answer: one user turn, imported as it always
    was (the earlier messages are history)."""
    path = _write(
        tmp_path,
        _record([{"role": "user", "content": "Hi."}, {"role": "user", "content": "ord_1?"}]),
    )
    (case,) = import_transcripts(path, Format.OPENAI, cases=True).cases
    assert case["user_input"] == "ord_1?"
    assert case["message_history"] == [{"role": "user", "content": "Hi."}]


@pytest.mark.parametrize(
    ("messages", "answer", "field", "message"),
    [
        (  # a tool result whose call the assistant never made
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "ord_1?"},
                {"role": "tool", "tool_call_id": "c9", "content": "{}"},
            ],
            "ok",
            "request.messages[3]",
            "tool result for call 'c9' that the assistant message before it did not make",
        ),
        (  # answering another message's call
            [
                {"role": "user", "content": "Hi."},
                *_lookup("c1"),
                {"role": "assistant", "content": "Delivered."},
                {"role": "user", "content": "Again?"},
                {"role": "assistant", "content": "Sure."},
                {"role": "tool", "tool_call_id": "c1", "content": "{}"},
            ],
            "ok",
            "request.messages[6]",
            "call 'c1'",
        ),
        (  # the last user message without an answer
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "ord_1?"},
            ],
            None,
            "request.messages[2]",
            "the last user message (turn 2) has no assistant answer",
        ),
        (  # a user turn without text
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
            ],
            "ok",
            "request.messages[2]",
            "user turn 2 has no text",
        ),
    ],
    ids=["orphan-result", "result-of-an-earlier-call", "unanswered", "no-text"],
)
def test_edge__conversation_it_cannot_hold__located_error_exit_2(
    tmp_path: Path, messages: list[dict[str, Any]], answer: str | None, field: str, message: str
) -> None:
    good = _record([{"role": "user", "content": "x"}])
    path = _write(tmp_path, good, _record(messages, answer))
    with pytest.raises(InteropError) as err:
        import_transcripts(path, Format.OPENAI, cases=True)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 2, field)
    assert message in problem.message
    proc = toolgate("import", "transcripts", "--format", "openai", path, "--out", tmp_path / "o")
    assert proc.returncode == 2
    assert f"t.jsonl:2: {field}: " in proc.stderr and "Traceback" not in proc.stderr
    # the last user turn alone is importable as before
    last = import_transcripts(path, Format.OPENAI, cases=True, last_turn=True)
    assert len(last.runs) == 2


def test_edge__a_turn_whose_only_call_did_not_parse__not_a_turn_expecting_none(
    tmp_path: Path,
) -> None:
    broken = _lookup("c1")
    broken[0]["tool_calls"][0]["function"]["arguments"] = '{"order_id": '
    path = _write(
        tmp_path,
        _record(
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "ord_1?"},
                *broken,
            ]
        ),
    )
    (case,) = import_transcripts(path, Format.OPENAI, cases=True).cases
    turn = case["conversation"][1]
    assert (turn["expected_tool_calls"], turn["expected_no_tool"]) == ([], False)
    assert "turn 2: the recorded call to get_order had undecodable arguments" in case["notes"]
    assert "expected_no_tool" not in case["conversation"][0]


def test_edge__anthropic_tool_results_with_text__the_text_starts_the_next_turn(
    tmp_path: Path,
) -> None:
    record = {
        "id": "a",
        "request": {
            "messages": [
                {"role": "user", "content": "Where is ord_1?"},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "tu1",
                            "name": "get_order",
                            "input": {"order_id": "ord_1"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "tu1", "content": '{"s": 1}'},
                        {"type": "text", "text": "Actually, cancel it."},
                    ],
                },
            ],
            "tools": [{"name": "get_order", "input_schema": {"type": "object", "properties": {}}}],
        },
        "response": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Cancelled."}],
        },
    }
    path = _write(tmp_path, record)
    imported = import_transcripts(path, Format.ANTHROPIC, cases=True)
    (case,) = imported.cases
    assert [t["user"] for t in case["conversation"]] == ["Where is ord_1?", "Actually, cancel it."]
    assert case["conversation"][0]["expected_tool_calls"] == [
        {"name": "get_order", "args": {"order_id": "ord_1"}}
    ]
    assert case["tool_responses"][0]["response"] == {"s": 1}
    (run,) = imported.runs
    assert [(t.user, [c.name for c in t.calls], t.content) for t in run.turns] == [
        ("Where is ord_1?", ["get_order"], None),
        ("Actually, cancel it.", [], "Cancelled."),
    ]
