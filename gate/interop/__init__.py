"""Interop: bring other tools' data in, send ToolGate's results out (docs/interop.md).

One module per source (:mod:`~gate.interop.bfcl`, :mod:`~gate.interop.transcripts`,
:mod:`~gate.interop.otel`, :mod:`~gate.interop.tau2`, :mod:`~gate.interop.mcp_tools`) and
one for CSV exports (:mod:`~gate.interop.export`). Every importer validates its input and
reports problems as :class:`InteropError` (an ``InputError``: exit code 2) naming the
file, the record (line, or index in a JSON array) and the field.
"""

from __future__ import annotations

from gate.errors import InteropError

__all__ = ["InteropError"]
