"""What every provider adapter returns, and the one error type adapters raise.

An adapter turns one provider payload (a chat completion, a Responses object, an Anthropic
message, a Gemini ``GenerateContentResponse``, a plain ``{name, arguments}`` list) into an
:class:`AssistantTurn`: the tool calls of one assistant message — a parallel batch — plus
its text and token usage. Calls are read from the provider's structured field, never by
parsing text. Arguments that are not a JSON object keep ``parse_ok=False`` and their raw
string (:func:`gate.runsfile.decode_arguments`): a parse failure is data to score.

A payload that does not have the provider's shape at all (no ``choices``, a call without a
name) raises :class:`PayloadError`, which names the JSON path; the runner records it as the
case-sample's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Re-exported: the adapters' error type (defined with every other error).
from gate.errors import PayloadError as PayloadError
from gate.model import ToolCall
from gate.runsfile import decode_arguments


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """One assistant message, provider-neutral.

    ``message`` keeps the provider's own message object when the agent loop must send it
    back in the history (OpenAI chat); adapters that do not need it leave it ``None``.
    """

    calls: tuple[ToolCall, ...] = ()
    content: str | None = None
    usage: Mapping[str, int | float] | None = None
    """As the provider reported it (:func:`int_counts`): checked by the session."""
    finish_reason: str | None = None
    message: Mapping[str, Any] | None = None


def make_call(name: Any, arguments: Any, call_id: Any, path: str) -> ToolCall:
    """A :class:`ToolCall` from the structured fields; ``arguments`` may be an object or
    the JSON string the model sent (decoded strictly; failure → ``parse_ok=False``).
    A missing ``arguments`` field is passed as ``None`` by callers that mean "no args"."""
    if not isinstance(name, str) or not name:
        raise PayloadError(f"{path}.name", "must be a non-empty string")
    if call_id is not None and not isinstance(call_id, str):
        raise PayloadError(f"{path}.id", "must be a string")
    args, raw, ok = decode_arguments(arguments)
    return ToolCall(name=name, arguments=args, id=call_id, raw_arguments=raw, parse_ok=ok)


def int_counts(raw: Any, rename: Mapping[str, str] | None = None) -> dict[str, int | float] | None:
    """The token counts of a provider ``usage`` object, renamed to the OpenAI chat names
    (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) so usage adds up across
    providers. Nested detail objects and what is not a number are left out; the numbers
    are kept as sent, for the session to check (:mod:`gate.model.usage`: a negative, fractional
    or huge count makes the sample's usage invalid)."""
    if not isinstance(raw, Mapping):
        return None
    rename = rename or {}
    out: dict[str, int | float] = {}
    for key, value in raw.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[rename.get(key, key)] = value
    return out or None


def refuse_error(obj: Mapping[str, Any], answer: str, path: str = "error") -> None:
    """A body holding ``error`` and not the ``answer`` field is the endpoint's error."""
    if "error" in obj and answer not in obj:
        raise PayloadError(path, f"the endpoint returned an error: {obj['error']!r:.300}")


def expect_mapping(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PayloadError(path, "must be an object")
    return value


def expect_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise PayloadError(path, "must be an array")
    return value


def expect_index(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise PayloadError(path, "must be an integer")
    return value


def optional_text(value: Any, path: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise PayloadError(path, "must be a string or null")
    return value
