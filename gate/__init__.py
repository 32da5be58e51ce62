"""ToolGate: a CI gate for LLM agents' tool calling.

The public Python API is small on purpose; everything else is reached through the
``toolgate`` command line (``gate.cli``) or the Action entrypoint (``gate.action``).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
