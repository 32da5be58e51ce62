"""The dataset's columns (docs/dataset.md), shared by the readers and the validator."""

from __future__ import annotations

import json

COLUMNS: tuple[str, ...] = (
    "id",
    "user_input",
    "message_history",
    "available_tools",
    "expected_tool_calls",
    "expected_no_tool",
    "acceptable_alternatives",
    "must_not_call",
    "difficulty",
    "source_trace_id",
    "notes",
    "order",
    "tool_responses",
    "step_budget",
    "tags",
    "conversation",
    "pass_on",
)
"""Every column docs/dataset.md lists; any other key is an error."""

TEXT_COLUMNS: frozenset[str] = frozenset(
    {"id", "user_input", "difficulty", "source_trace_id", "notes", "order", "pass_on"}
)
"""Columns whose CSV cells are raw text (the rest are JSON-encoded)."""

ENUM_COLUMNS: frozenset[str] = frozenset({"difficulty", "order", "pass_on"})
"""Text columns holding an enum value (a CSV cell may also quote it as a JSON string)."""


def csv_cell(column: str, value: object) -> str:
    """The CSV cell that reads back as ``value`` in ``column`` (docs/dataset.md, CSV
    rules): text columns raw, an ``@file`` tools reference raw, everything else — call
    lists with their batches (nested arrays) included — compact JSON; ``None`` is the
    empty cell. The reader gives back the same case as the JSONL line."""
    if value is None:
        return ""
    if column in TEXT_COLUMNS and isinstance(value, str):
        return value
    if column == "available_tools" and isinstance(value, str) and value.startswith("@"):
        return value
    return json.dumps(value, ensure_ascii=False)
