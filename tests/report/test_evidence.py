"""Evidence items: the scorers' shapes and older flat ones, most telling first."""

from __future__ import annotations

from gate.report.evidence import items

ACTUAL = [
    {"name": "lookup_order", "arguments": {"order_id": "ord_1"}, "parse_ok": True, "turn": 0},
    {"name": "issue_refund", "arguments": {"amount": 1.0}, "parse_ok": True, "turn": 1},
    {"name": "delete_account", "arguments": {"user": "u"}, "parse_ok": True, "turn": 1},
]


def test_items__scorer_shape__pairs_folded_and_indices_resolved() -> None:
    ev = {
        "expected": [{"name": "lookup_order", "args": {}}, {"name": "issue_refund", "args": {}}],
        "actual": ACTUAL,
        "missing": [{"index": 1, "name": "issue_refund", "why": "called with different arguments"}],
        "extra": [{"index": 1, "name": "issue_refund"}, {"index": 2, "name": "delete_account"}],
        "arg_diffs": [
            {
                "expected_index": 1,
                "actual_index": 1,
                "tool": "issue_refund",
                "diffs": [{"argument": "amount", "expected": 99, "actual": 1.0, "why": "differs"}],
            }
        ],
        "violations": [
            {"rule": "must_not_call", "index": 2, "name": "delete_account", "message": "no"}
        ],
        "unrecorded": [2],
        "summary": "1 exact, 1 name-only; 2 expected, 3 actual",
    }
    assert items(ev, "boom") == [
        ("forbidden", 'delete_account(user="u")', None),
        ("arguments", "issue_refund.amount: expected 99, got 1.0 (differs)", None),
        ("extra", 'delete_account(user="u")', None),
        ("no recorded response", 'delete_account(user="u")', None),
        ("agent error", "boom", None),
        ("", None, "1 exact, 1 name-only; 2 expected, 3 actual"),
    ]


def test_items__flat_older_shape__still_read() -> None:
    ev = {
        "missing": [{"name": "refund", "args": {"id": 1}}],
        "extra": [{"name": "search", "arguments": {"q": "x"}}],
        "arg_diffs": [{"name": "refund", "arg": "id", "expected": 1, "actual": 2}],
        "violations": ["delete_account"],
        "malformed": [{"name": "refund", "class": "InvalidJson"}],
    }
    assert items(ev) == [
        ("forbidden", "delete_account", None),
        ("missing", "refund(id=1)", None),
        ("arguments", "refund.id: expected 1, got 2", None),
        ("extra", 'search(q="x")', None),
        ("malformed", "refund: InvalidJson", None),
    ]


def test_items__required_before_and_scope__message_kept() -> None:
    ev = {
        "actual": ACTUAL,
        "violations": [
            {
                "rule": "required_before",
                "index": 1,
                "name": "issue_refund",
                "message": "verify first",
            },
            {"rule": "arg_scope", "index": 1, "name": "issue_refund", "message": "amount > 500"},
        ],
    }
    assert items(ev) == [
        ("no prerequisite for", "issue_refund(amount=1.0)", "verify first"),
        ("out of scope", "issue_refund(amount=1.0)", "amount > 500"),
    ]


def test_items__nothing__empty() -> None:
    assert items({}) == []
