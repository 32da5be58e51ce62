"""ToolGate: a CI gate for LLM agents' tool calling.

The public Python API is small on purpose; everything else is reached through the
``toolgate`` command line (``gate.cli``) or the Action entrypoint (``gate.action``).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "assert_tool_calls"]


def __getattr__(name: str) -> object:
    # Lazy, so that `import gate` stays cheap (the scorers load only when asserted with).
    if name == "assert_tool_calls":
        from gate.api import assert_tool_calls

        return assert_tool_calls
    raise AttributeError(f"module 'gate' has no attribute {name!r}")
