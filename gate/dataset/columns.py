"""The dataset's columns (docs/dataset.md), shared by the readers and the validator."""

from __future__ import annotations

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
)
"""Every column docs/dataset.md lists; any other key is an error."""

TEXT_COLUMNS: frozenset[str] = frozenset(
    {"id", "user_input", "difficulty", "source_trace_id", "notes", "order"}
)
"""Columns whose CSV cells are raw text (the rest are JSON-encoded)."""

ENUM_COLUMNS: frozenset[str] = frozenset({"difficulty", "order"})
"""Text columns holding an enum value (a CSV cell may also quote it as a JSON string)."""
