"""Interop: bring other tools' data in, send ToolGate's results out.

* :mod:`gate.interop.bfcl` — Berkeley Function Calling Leaderboard questions, function docs
  and possible answers → a ToolGate dataset and a ready ``toolgate.yml`` (``bfcl`` profile);
* :mod:`gate.interop.transcripts` — recorded provider conversations (OpenAI chat, OpenAI
  Responses, Anthropic Messages, Gemini generateContent) → runs.jsonl, and optionally
  dataset cases (the production-trace → regression-case loop; a conversation of several
  user messages is a conversation case);
* :mod:`gate.interop.otel` — OpenTelemetry GenAI spans (OTLP JSON) and Langfuse
  observation exports → runs.jsonl, and optionally dataset cases (the traces of one
  session are one conversation);
* :mod:`gate.interop.export` — results.json → CSV per case and per tool.

Every importer validates its input and reports problems as :class:`InteropError` (an
``InputError``: exit code 2) naming the file, the record (line, or index in a JSON array)
and the field.
"""

from __future__ import annotations

from gate.errors import InteropError

__all__ = ["InteropError"]
