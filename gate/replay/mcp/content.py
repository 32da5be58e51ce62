"""Frozen responses ↔ MCP tool results: how a JSON value becomes what an MCP client sees
(:func:`to_result`), and how a real server's answer is frozen into the dataset
(:func:`from_result`), as docs/agent-protocol.md says ("What the server answers", "Your
real MCP servers"). An object is sent as text and as ``structuredContent`` (the MCP spec
asks for both, so clients that read either agree); serving a frozen value gives the agent
what the real server gave it.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from gate import jsonio
from gate.model import JsonValue

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})
_BLOCKS: TypeAdapter[list[types.ContentBlock]] = TypeAdapter(list[types.ContentBlock])


def _as_blocks(value: JsonValue) -> list[types.ContentBlock] | None:
    """``value`` as MCP content blocks, when it is a non-empty list of them."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, dict) and v.get("type") in _CONTENT_TYPES for v in value):
        return None
    try:
        return _BLOCKS.validate_python(value)
    except ValidationError:
        return None


def to_result(content: JsonValue, *, is_error: bool) -> types.CallToolResult:
    """The MCP result an agent gets for a frozen (or error) value (module docstring)."""
    blocks = _as_blocks(content)
    if blocks is not None:
        return types.CallToolResult(content=blocks, is_error=is_error)
    text = content if isinstance(content, str) else jsonio.dumps(content).decode()
    structured = content if isinstance(content, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


def from_result(result: types.CallToolResult) -> tuple[JsonValue, bool]:
    """What to freeze for a real server's answer, and whether it was an error."""
    is_error = bool(result.is_error)
    if result.structured_content is not None:
        return dict(result.structured_content), is_error
    blocks = list(result.content)
    if len(blocks) == 1 and isinstance(blocks[0], types.TextContent):
        return blocks[0].text, is_error
    dumped: list[Any] = [
        b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks
    ]
    return dumped, is_error
