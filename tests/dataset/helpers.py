"""Shared builders for the dataset tests: tools, a valid base row, JSONL/CSV writers."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gate.dataset import COLUMNS, TEXT_COLUMNS

LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look up an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "include_items": {"type": "boolean"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
}
REFUND = {
    "name": "refund_order",
    "description": "Refund an order.",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount": {"type": "number"},
            "reason": {"type": "string", "enum": ["damaged", "late", "other"]},
        },
        "required": ["order_id", "amount"],
        "additionalProperties": False,
    },
}
TOOLS = [LOOKUP, REFUND]


def row(**overrides: Any) -> dict[str, Any]:
    """A valid case; keyword arguments replace columns (None removes one)."""
    base: dict[str, Any] = {
        "id": "c1",
        "user_input": "Where is order 1?",
        "available_tools": copy.deepcopy(TOOLS),
        "expected_tool_calls": [{"name": "lookup_order", "args": {"order_id": "1"}}],
    }
    for key, value in overrides.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def rows(n: int, **overrides: Any) -> list[dict[str, Any]]:
    return [row(**{"id": f"c{i + 1}", **overrides}) for i in range(n)]


def write_jsonl(path: Path, items: Iterable[Mapping[str, Any] | str]) -> Path:
    lines = [x if isinstance(x, str) else json.dumps(x) for x in items]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def to_csv(items: Iterable[Mapping[str, Any]], columns: Iterable[str] = COLUMNS) -> str:
    """Rows as CSV: text columns raw, the rest JSON-encoded (an @ref stays raw)."""
    cols = list(columns)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for item in items:
        cells = []
        for c in cols:
            v = item.get(c)
            if v is None:
                cells.append("")
            elif c in TEXT_COLUMNS or (c == "available_tools" and isinstance(v, str)):
                cells.append(str(v))
            else:
                cells.append(json.dumps(v))
        writer.writerow(cells)
    return out.getvalue()


def write_csv(path: Path, items: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text(to_csv(items), encoding="utf-8")
    return path
