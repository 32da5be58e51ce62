"""Judging effects through ``toolgate score``: every rule of docs/scoring.md's "Judging
effects", on real files in a subprocess, with the same cases judged by their calls beside
them where the two verdicts differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.effects.helpers import EFFECTS, call, project, run, score, toolgate, turn

CANCEL = {
    "id": "cancel",
    "user_input": "Cancel reservation Q69X3Q.",
    "expected_tool_calls": [
        {"name": "get_reservation", "args": {"reservation_id": "Q69X3Q"}},
        {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}},
    ],
}
REFUSE = {
    "id": "refuse",
    "user_input": "Cancel my basic economy ticket, I know it is not refundable.",
    "expected_tool_calls": [],
    "expected_no_tool": True,
}
TWO = {
    "id": "two",
    "user_input": "Cancel Q69X3Q, then send me the 100 certificate.",
    "expected_tool_calls": [
        {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}},
        {"name": "send_certificate", "args": {"user_id": "mia_kim_1", "amount": 100}},
    ],
    "order": "strict",
}

LOOKUP = call("1", "get_reservation", reservation_id="Q69X3Q")
CANCEL_IT = call("2", "cancel_reservation", reservation_id="Q69X3Q")


def _both(tmp: Path, cases: list[dict[str, Any]], runs: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The same cases and runs scored by effects and by calls (two folders)."""
    fx, calls = tmp / "effects", tmp / "calls"
    fx.mkdir()
    calls.mkdir()
    project(fx, cases, runs)
    project(calls, cases, runs, scoring={"tools": EFFECTS})
    return score(fx), score(calls)


def test_effects__extra_read__passes_where_calls_fail(tmp_path: Path) -> None:
    extra = [
        run(
            "cancel",
            0,
            turn(call("0", "calculate", expression="2 * (40 + 60)")),
            turn(LOOKUP),
            turn(call("3", "get_reservation", reservation_id="ZZ1234")),
            turn(CANCEL_IT),
        ),
        # reads in another order and another form, the expected lookup left out
        run("cancel", 1, turn(call("0", "calculate", expression="2*40 + 2*60")), turn(CANCEL_IT)),
    ]
    fx, calls = _both(tmp_path, [CANCEL], extra)
    for sample in (0, 1):
        assert fx[("cancel", sample)]["passed"] is True
        assert fx[("cancel", sample)]["by_name"]["extra_writes"] == 0.0
        assert fx[("cancel", sample)]["by_name"]["write_recall"] == 1.0
        assert calls[("cancel", sample)]["passed"] is False  # judged by calls: extra calls
    assert calls[("cancel", 0)]["by_name"]["write_precision"] is None  # n/a when by calls


def test_effects__extra_write__fails_with_the_write_in_evidence(tmp_path: Path) -> None:
    other = call("3", "cancel_reservation", reservation_id="Q69X3R")
    fx = score_one(tmp_path, CANCEL, [turn(LOOKUP), turn(CANCEL_IT), turn(other)])
    assert fx["passed"] is False
    assert fx["failed_checks"] == ["no_extra_write"]
    assert fx["by_name"]["extra_writes"] == 1.0
    assert fx["by_name"]["write_precision"] == 0.5
    effects = fx["evidence"]["effects"]
    assert effects["extra"] == [{"index": 2, "name": "cancel_reservation"}]


def test_effects__doubled_write_that_adds__fails(tmp_path: Path) -> None:
    cert = {
        "id": "cert",
        "user_input": "Compensate me.",
        "expected_tool_calls": [
            {"name": "send_certificate", "args": {"user_id": "mia_kim_1", "amount": 100}}
        ],
    }
    send = call("1", "send_certificate", user_id="mia_kim_1", amount=100)
    again = call("2", "send_certificate", user_id="mia_kim_1", amount=100)
    fx = score_one(tmp_path, cert, [turn(send), turn(again)])
    assert fx["passed"] is False and fx["failed_checks"] == ["no_extra_write"]


def test_effects__failed_write_is_not_counted(tmp_path: Path) -> None:
    failed = call("3", "cancel_reservation", reservation_id="Q69X3R")
    runs = [
        # a wrong write that failed, then the right one
        run("cancel", 0, turn(failed, errors=("3",)), turn(CANCEL_IT)),
        # the expected write, but it failed: nothing was cancelled
        run("cancel", 1, turn(LOOKUP), turn(CANCEL_IT, errors=("2",))),
    ]
    fx, _ = _both(tmp_path, [CANCEL], runs)
    assert fx[("cancel", 0)]["passed"] is True
    assert fx[("cancel", 1)]["passed"] is False
    assert fx[("cancel", 1)]["failed_checks"] == ["writes_made"]
    missing = fx[("cancel", 1)]["evidence"]["effects"]["missing"]
    assert missing == [
        {"index": 1, "name": "cancel_reservation", "why": "called, but its response was an error"}
    ]
    # the failed calls still count for the error metrics
    assert fx[("cancel", 0)]["by_name"]["execution_failure_rate"] == 0.5


def test_effects__expected_write_with_wrong_arguments__fails(tmp_path: Path) -> None:
    wrong = call("2", "cancel_reservation", reservation_id="Q69X3R")
    fx = score_one(tmp_path, CANCEL, [turn(LOOKUP), turn(wrong)])
    assert fx["passed"] is False
    assert fx["failed_checks"] == ["writes_made", "no_extra_write"]
    diffs = fx["evidence"]["effects"]["arg_diffs"]
    assert diffs[0]["tool"] == "cancel_reservation"
    assert diffs[0]["diffs"][0]["argument"] == "reservation_id"
    assert fx["by_name"]["missing_writes"] == 1.0


def test_effects__reads_only_case__passes_with_lookups_fails_with_a_write(tmp_path: Path) -> None:
    runs = [
        run("refuse", 0, turn(LOOKUP), turn(call("3", "calculate", expression="1+1"))),
        run("refuse", 1, turn(LOOKUP), turn(CANCEL_IT)),
        run("refuse", 2, turn(LOOKUP), turn(CANCEL_IT, errors=("2",))),
    ]
    fx, calls = _both(tmp_path, [REFUSE], runs)
    assert fx[("refuse", 0)]["passed"] is True
    assert calls[("refuse", 0)]["passed"] is False  # by calls, a no-tool case allows no lookup
    # its lookups are not unnecessary calls when judged by effects; its writes are
    assert fx[("refuse", 0)]["by_name"]["no_tool_respected"] == 1.0
    assert fx[("refuse", 0)]["by_name"]["unnecessary_call_rate"] == 0.0
    assert fx[("refuse", 1)]["by_name"]["no_tool_respected"] == 0.0
    assert fx[("refuse", 1)]["by_name"]["unnecessary_call_rate"] == 0.5
    assert calls[("refuse", 0)]["by_name"]["unnecessary_call_rate"] == 1.0
    assert fx[("refuse", 1)]["passed"] is False
    assert fx[("refuse", 1)]["failed_checks"] == ["no_extra_write"]
    assert fx[("refuse", 2)]["passed"] is True  # the write failed: nothing was written


def test_effects__strict_order_holds_over_the_writes(tmp_path: Path) -> None:
    cancel = call("1", "cancel_reservation", reservation_id="Q69X3Q")
    cert = call("2", "send_certificate", user_id="mia_kim_1", amount=100)
    runs = [
        # reads between and around the writes do not break the order
        run(
            "two",
            0,
            turn(LOOKUP),
            turn(cancel),
            turn(call("5", "calculate", expression="1")),
            turn(cert),
        ),
        run("two", 1, turn(cert), turn(LOOKUP), turn(cancel)),
    ]
    fx, _ = _both(tmp_path, [TWO], runs)
    assert fx[("two", 0)]["passed"] is True
    assert fx[("two", 1)]["passed"] is False
    assert fx[("two", 1)]["failed_checks"] == ["order"]
    assert fx[("two", 1)]["evidence"]["effects"]["order"] is False


def test_effects__required_read__must_be_made(tmp_path: Path) -> None:
    case = {
        **CANCEL,
        "expected_tool_calls": [
            {"name": "get_reservation", "args": {"reservation_id": "Q69X3Q"}, "required": True},
            {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}},
        ],
    }
    runs = [
        run("cancel", 0, turn(LOOKUP), turn(CANCEL_IT)),
        run("cancel", 1, turn(CANCEL_IT)),
    ]
    fx, _ = _both(tmp_path, [case], runs)
    assert fx[("cancel", 0)]["passed"] is True
    assert fx[("cancel", 1)]["passed"] is False
    assert fx[("cancel", 1)]["failed_checks"] == ["writes_made"]


def test_effects__case_pass_on__overrides_the_default(tmp_path: Path) -> None:
    by_effects = {**CANCEL, "id": "by-effects", "pass_on": "effects"}
    runs = [
        run("cancel", 0, turn(call("0", "calculate", expression="1")), turn(CANCEL_IT)),
        run("by-effects", 0, turn(call("0", "calculate", expression="1")), turn(CANCEL_IT)),
    ]
    project(tmp_path, [CANCEL, by_effects], runs, scoring={"tools": EFFECTS})
    got = score(tmp_path)
    assert got[("cancel", 0)]["passed"] is False
    assert got[("by-effects", 0)]["passed"] is True


def test_effects__unknown_tool_counts_as_a_write(tmp_path: Path) -> None:
    # nothing says what cancel_reservation does: a tool nothing describes writes
    runs = [run("refuse", 0, turn(LOOKUP))]
    project(tmp_path, [REFUSE], runs, scoring={"pass_on": "effects"})
    assert score(tmp_path)[("refuse", 0)]["passed"] is False
    # with the dataset-wide default, it reads
    (tmp_path / "out").rename(tmp_path / "out0")
    project(tmp_path, [REFUSE], runs, scoring={"pass_on": "effects", "default_effect": "read"})
    assert score(tmp_path)[("refuse", 0)]["passed"] is True


def test_effects__idempotent_write_repeated_at_once__counts_once(tmp_path: Path) -> None:
    again = call("3", "cancel_reservation", reservation_id="Q69X3Q")
    runs = [run("cancel", 0, turn(LOOKUP), turn(CANCEL_IT), turn(again))]
    project(
        tmp_path,
        [CANCEL],
        runs,
        scoring={
            "pass_on": "effects",
            "tools": {**EFFECTS, "cancel_reservation": {"risk": "write", "idempotent": True}},
        },
    )
    got = score(tmp_path)[("cancel", 0)]
    assert got["passed"] is True
    assert got["by_name"]["duplicate_calls"] == 1.0  # still a duplicate call


def test_check__regression_by_effects__comment_says_what_was_written(tmp_path: Path) -> None:
    book = {
        "id": "book",
        "user_input": "Compensate me with a certificate.",
        "expected_tool_calls": [
            {"name": "send_certificate", "args": {"user_id": "mia_kim_1", "amount": 100}}
        ],
    }
    other = call("3", "cancel_reservation", reservation_id="Q69X3R")
    cert = call("4", "send_certificate", user_id="mia_kim_1", amount=100)
    base = [run("cancel", i, turn(CANCEL_IT)) for i in range(8)]
    base += [run("book", i, turn(cert)) for i in range(8)]
    head = [run("cancel", i, turn(CANCEL_IT), turn(other)) for i in range(8)]
    head += [run("book", i, turn(LOOKUP)) for i in range(8)]
    (tmp_path / "base").mkdir()
    project(tmp_path / "base", [CANCEL, book], base)
    p = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--no-progress", cwd=tmp_path / "base"
    )
    assert p.returncode == 0, p.stderr
    project(tmp_path, [CANCEL, book], head)
    p = toolgate(
        "check", "--config", "toolgate.yml", "--out", "out", "--no-progress",
        "--baseline", str(tmp_path / "base" / "out" / "results.json"), cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 1, p.stderr
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert 'extra write `cancel_reservation(reservation_id="Q69X3R")`' in comment
    assert 'expected write not made: `send_certificate(user_id="mia_kim_1", amount=100)`' in comment
    assert 'extra write cancel_reservation(reservation_id="Q69X3R")' in p.stdout


def score_one(tmp: Path, case: dict[str, Any], turns: list[dict[str, Any]]) -> dict[str, Any]:
    project(tmp, [case], [run(case["id"], 0, *turns)])
    return score(tmp)[(case["id"], 0)]


def test_effects__alternatives_and_batches__matched_over_the_writes(tmp_path: Path) -> None:
    cancel_b = call("3", "cancel_reservation", reservation_id="B")
    cert = call("4", "send_certificate", user_id="mia_kim_1", amount=100)
    alt = {
        "id": "alt",
        "user_input": "Cancel Q69X3Q, or compensate me.",
        "expected_tool_calls": [
            {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}}
        ],
        "acceptable_alternatives": [
            [{"name": "send_certificate", "args": {"user_id": "mia_kim_1", "amount": 100}}]
        ],
    }
    batched = {
        "id": "batched",
        "user_input": "Cancel Q69X3Q and B together, then compensate me.",
        "expected_tool_calls": [
            [
                {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}},
                {"name": "cancel_reservation", "args": {"reservation_id": "B"}},
            ],
            {"name": "send_certificate", "args": {"user_id": "mia_kim_1", "amount": 100}},
        ],
        "order": "strict",
    }
    runs = [
        run("alt", 0, turn(LOOKUP), turn(cert)),  # the alternative's write
        run("alt", 1, turn(cert), turn(CANCEL_IT)),  # both lists' writes: one is extra
        # one turn for the two cancellations, reads around them, then the certificate
        run("batched", 0, turn(LOOKUP), turn(CANCEL_IT, cancel_b), turn(LOOKUP), turn(cert)),
        # the batch split over two turns: strict compares batch by batch
        run("batched", 1, turn(CANCEL_IT), turn(cancel_b), turn(cert)),
    ]
    fx, _ = _both(tmp_path, [alt, batched], runs)
    assert fx[("alt", 0)]["passed"] is True
    assert fx[("alt", 1)]["passed"] is False
    assert fx[("alt", 1)]["failed_checks"] == ["no_extra_write"]
    assert fx[("batched", 0)]["passed"] is True
    assert fx[("batched", 1)]["passed"] is False
    assert fx[("batched", 1)]["failed_checks"] == ["order"]


def test_effects__conversation__each_user_turn_judged_by_its_writes(tmp_path: Path) -> None:
    conv = {
        "id": "conv",
        "conversation": [
            {"user": "Is Q69X3Q refundable?", "expected_tool_calls": [], "expected_no_tool": True},
            {
                "user": "Then cancel it.",
                "expected_tool_calls": [
                    {"name": "cancel_reservation", "args": {"reservation_id": "Q69X3Q"}}
                ],
            },
        ],
        "pass_on": "effects",
    }

    def conv_run(sample: int, first: list[dict[str, Any]]) -> dict[str, Any]:
        return run(
            "conv",
            sample,
            {**turn(*first), "user": "Is Q69X3Q refundable?"},
            {"calls": [], "tool_results": [], "content": "It is."},
            {**turn(CANCEL_IT), "user": "Then cancel it."},
            {"calls": [], "tool_results": [], "content": "Cancelled."},
        )

    runs = [
        conv_run(0, [LOOKUP]),
        conv_run(1, [LOOKUP, call("9", "cancel_reservation", reservation_id="Q69X3Q")]),
    ]
    project(tmp_path, [conv], runs, scoring={"tools": EFFECTS})
    got = score(tmp_path)
    assert got[("conv", 0)]["passed"] is True  # a lookup in the first turn is free
    assert got[("conv", 1)]["passed"] is False  # a cancellation before it was asked for
    assert got[("conv", 1)]["turns"][0]["failed_checks"] == ["no_extra_write"]


def test_gate__max_extra_writes__fails_the_check(tmp_path: Path) -> None:
    other = call("3", "cancel_reservation", reservation_id="Q69X3R")
    project(tmp_path, [CANCEL], [run("cancel", 0, turn(CANCEL_IT), turn(other))])
    config = tmp_path / "toolgate.yml"
    config.write_text(config.read_text() + "gates:\n  - metric: extra_writes\n    max: 0\n")
    p = toolgate("check", "--config", "toolgate.yml", "--out", "out", "--no-progress", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "1 gate missed: extra_writes 1.000 > 0.000" in p.stdout
    assert "  extra_writes  1.000  ❌ ≤ 0.000" in p.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    gate = next(g for g in results["verdict"]["gates"] if g["metric"] == "extra_writes")
    assert gate["passed"] is False and gate["value"] == 1.0
