"""The three-turn conversation the conversation-import tests share: a refund asked for
(the agent asks for the email), the email given (it verifies it and looks the order up),
the go-ahead (it refunds, then looks the order up again) — the case every sample
(``conversation_openai.jsonl``, ``conversation_otlp.json``, ``conversation_langfuse.jsonl``)
must import as, its run's shape, and the CLI steps that replay it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.interop.conftest import SAMPLES, toolgate

GOLDEN = SAMPLES / "golden"
"""What the importers wrote for the samples before conversation cases (run from the
samples folder, with --cases for transcripts)."""

U1 = "I'd like a refund for order ord_1, please."
U2 = "Sure, it's ana@example.com"
U3 = "Yes, please refund it."
A1 = "Happy to help. What is the email address on the account?"
A2 = "Thanks, you are verified and the order is refundable. Shall I refund it now?"
A3 = "Done: the refund is on its way."

CONVERSATION: list[dict[str, Any]] = [
    {"user": U1, "expected_tool_calls": []},
    {
        "user": U2,
        "expected_tool_calls": [
            {"name": "verify_identity", "args": {"email": "ana@example.com"}},
            {"name": "get_order", "args": {"order_id": "ord_1"}},
        ],
        "order": "unordered",
    },
    {
        "user": U3,
        "expected_tool_calls": [
            {"name": "issue_refund", "args": {"order_id": "ord_1"}},
            {"name": "get_order", "args": {"order_id": "ord_1"}},
        ],
        "order": "strict",
        # the same call as in turn 2, answered differently: this turn's own response
        "tool_responses": [
            {
                "name": "get_order",
                "args": {"order_id": "ord_1"},
                "response": {"status": "refunded", "refundable": False},
            }
        ],
    },
]
CASE_RESPONSES: list[dict[str, Any]] = [
    {
        "name": "verify_identity",
        "args": {"email": "ana@example.com"},
        "response": {"verified": True},
    },
    {
        "name": "get_order",
        "args": {"order_id": "ord_1"},
        "response": {"status": "delivered", "refundable": True},
    },
    {
        "name": "issue_refund",
        "args": {"order_id": "ord_1"},
        "response": {"refund_id": "rf_1", "status": "issued"},
    },
]


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def shape(run: dict[str, Any]) -> list[tuple[str | None, list[str], str | None]]:
    """Each run turn as (user marker, call names, content)."""
    return [(t.get("user"), [c["name"] for c in t["calls"]], t["content"]) for t in run["turns"]]


RUN_SHAPE = [
    (U1, [], A1),
    (U2, ["verify_identity", "get_order"], None),
    (None, [], A2),
    (U3, ["issue_refund"], None),
    (None, ["get_order"], None),
    (None, [], A3),
]


def import_cases(tmp_path: Path, *args: str | Path) -> Path:
    out = tmp_path / "imported"
    proc = toolgate("import", *args, "--out", out, "--cases")
    assert proc.returncode == 0, proc.stderr
    return out


def check(folder: Path) -> dict[str, Any]:
    """`toolgate pin` then `toolgate check` on an imported folder (its replay config)."""
    config = folder / "toolgate.yml"
    proc = toolgate("pin", "--config", config)
    assert proc.returncode == 0, proc.stderr
    proc = toolgate(
        "check", "--config", config, "--out", folder / "o", "--baseline", "none",
        "--no-comment", "--no-progress",
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    results: dict[str, Any] = json.loads((folder / "o" / "results.json").read_text("utf-8"))
    results["_returncode"] = proc.returncode
    results["_stderr"] = proc.stderr
    return results


def assert_every_turn_passed(results: dict[str, Any], case_id: str) -> None:
    assert results["_returncode"] == 0, results["_stderr"]
    (case,) = results["cases"]
    assert case["id"] == case_id and case["passed"] is True
    for s in case["samples"]:
        assert s["turns_passed"] == 3 and s["first_failing_turn"] is None
        assert [t["passed"] for t in s["turns"]] == [True, True, True]
