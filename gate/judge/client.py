"""The judge's HTTP client: any OpenAI-compatible chat-completions endpoint.

One request per judge item; docs/judge.md ("The judge call and its answer") gives the
request, what is retried and the answer's shape. ``timeout_s`` bounds the whole exchange.
The transport is :class:`gate.replay.http.HttpClient` (httpx), the agent loop's: a
kept-alive connection per judging thread (a TLS handshake per item would add a round trip
or two to every request to a hosted judge). Parsing the answer is strict
(:func:`parse_answer`): anything else is recorded as *unparsable* with the raw text
truncated to :data:`RAW_CHARS` — never guessed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
from pydantic import BaseModel, ConfigDict, ValidationError

from gate import __version__, jsonio
from gate.errors import IncompleteBody, JudgeFailureKind

# Re-exported: the judge client's error (defined with every other error).
from gate.errors import JudgeCallError as JudgeCallError
from gate.replay.http import TRANSPORT_ERRORS, HttpClient
from gate.replay.http import retry_after_value as retry_after_s

RAW_CHARS = 500
"""How much of an unparsable answer (or an error body) is kept."""

REASON_CHARS = 300
"""Longest reason kept from a judge answer."""

_RETRY_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True, slots=True)
class Completion:
    """The judge's reply: the message content (``None`` when the message had none, e.g. a
    refusal or a tool call), the message itself, token usage if the server sent it, and
    how many HTTP attempts it took."""

    content: str | None
    message: Mapping[str, Any]
    usage: Mapping[str, int] | None
    attempts: int


class _Answer(BaseModel):
    """The one answer shape a judge may give."""

    model_config = ConfigDict(extra="forbid", strict=True)
    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """``label`` and ``reason`` when the answer parsed and its label is on the scale;
    otherwise ``label`` is None, ``problem`` says what was wrong and ``raw`` keeps the
    answer, truncated."""

    label: str | None
    reason: str | None
    problem: str | None = None
    raw: str | None = None


def truncate(text: str, limit: int = RAW_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…[{len(text) - limit} more characters]"


def parse_answer(content: str | None, scale: Sequence[str]) -> ParsedAnswer:
    """Parse one judge answer strictly against ``scale`` (docs/judge.md)."""
    if content is None:
        return ParsedAnswer(None, None, "the answer has no text content", None)
    text = content.strip()
    if text.startswith("```") and text.endswith("```") and text.count("```") == 2:
        body = text[3:-3]
        first, _, rest = body.partition("\n")
        text = (rest if first.strip().lower() in ("", "json") else body).strip()
    try:
        value = jsonio.loads_strict(text)
    except jsonio.JsonInputError as exc:
        return ParsedAnswer(None, None, f"not one JSON object: {exc}", truncate(content))
    try:
        answer = _Answer.model_validate(value)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "answer"
        return ParsedAnswer(None, None, f"{where}: {err['msg']}", truncate(content))
    if answer.label not in scale:
        return ParsedAnswer(
            None,
            None,
            f"label {answer.label!r} is not on the scale {list(scale)}",
            truncate(content),
        )
    return ParsedAnswer(answer.label, truncate(answer.reason.strip(), REASON_CHARS))


class ChatClient:
    """A chat-completions client with retries, backoff and an overall timeout per attempt.

    ``sleep`` is injectable so tests can check the waits without waiting.
    ``api_key`` is never put into an error message or a repr.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        json_mode: bool = True,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.lower().startswith(("http://", "https://")):
            raise ValueError(f"the judge's base URL must be http(s), not {base_url!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.json_mode = json_mode
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        headers = {"User-Agent": f"toolgate/{__version__} (judge)"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # Kept-alive connections; the timeout bounds each whole exchange
        # (gate.replay.http), so a trickling server cannot outlast it.
        self._http = HttpClient(base_url.rstrip("/"), headers)

    def __repr__(self) -> str:
        return f"ChatClient(url={self.url!r}, model={self.model!r})"

    def body(self, messages: Sequence[Mapping[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": 0,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion:
        """Send one request (retrying as the module docstring says) and return the reply.

        Raises :class:`JudgeCallError` when no answer could be had.
        """
        payload = jsonio.dumps(self.body(messages))
        attempt = 0
        while True:
            attempt += 1
            try:
                status, headers, raw = self._post(payload)
            except JudgeCallError as exc:
                failure = exc
                wait: float | None = None
            else:
                if 200 <= status < 300:
                    return self._completion(raw, attempt)
                text = truncate(raw.decode("utf-8", "replace").strip(), 200)
                failure = JudgeCallError(
                    JudgeFailureKind.HTTP,
                    f"HTTP {status}: {self._redact(text)}",
                    status=status,
                )
                if status not in _RETRY_STATUS:
                    failure.attempts = attempt
                    raise failure
                wait = retry_after_s(headers.get("retry-after"))  # names in lower case
            if attempt > self.max_retries:
                failure.attempts = attempt
                if attempt > 1:
                    failure.args = (f"{failure.args[0]} (after {attempt} attempts)",)
                raise failure
            if wait is None:
                wait = self.backoff_s * 2 ** (attempt - 1)
            self._sleep(min(wait, self.max_backoff_s))

    def _post(self, payload: bytes) -> tuple[int, Mapping[str, str], bytes]:
        try:
            resp = self._http.post("/chat/completions", payload, timeout=self.timeout_s)
        except TimeoutError:
            why = f"no answer within {self.timeout_s:g} s"
            raise JudgeCallError(JudgeFailureKind.TIMEOUT, why) from None
        except IncompleteBody as err:
            # The peer hung up before the declared Content-Length: never parse half a body.
            raise JudgeCallError(
                JudgeFailureKind.CONNECTION, f"connection closed mid-answer ({err})"
            ) from None
        except httpx2.ConnectError as err:
            raise JudgeCallError(
                JudgeFailureKind.CONNECTION, f"cannot reach the judge: {self._redact(str(err))}"
            ) from None
        except TRANSPORT_ERRORS as err:
            # Dropped connections, resets, bad status lines, oversized bodies.
            what = type(err).__name__ + (f": {err}" if str(err) else "")
            raise JudgeCallError(
                JudgeFailureKind.CONNECTION,
                f"connection failed: {self._redact(truncate(what, 200))}",
            ) from None
        return resp.status, resp.headers, resp.body

    def close(self) -> None:
        """Close the kept-alive connections (once no request is in flight)."""
        self._http.close()

    def _completion(self, raw: bytes, attempts: int) -> Completion:
        def bad(why: str) -> JudgeCallError:
            return JudgeCallError(
                JudgeFailureKind.PROTOCOL, f"not a chat completion: {why}", attempts=attempts
            )

        try:
            data = jsonio.loads_strict(raw)
        except jsonio.JsonInputError as exc:
            raise bad(
                f"{exc}; body starts {truncate(raw.decode('utf-8', 'replace'), 120)!r}"
            ) from None
        if not isinstance(data, dict):
            raise bad("the body is not a JSON object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise bad("no `choices[0]`")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise bad("no `choices[0].message`")
        content = message.get("content")
        return Completion(
            content=content if isinstance(content, str) else None,
            message=message,
            usage=_usage(data.get("usage")),
            attempts=attempts,
        )

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text


def _usage(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    out = {
        k: v
        for k, v in value.items()
        if k in ("prompt_tokens", "completion_tokens", "total_tokens")
        and isinstance(v, int)
        and not isinstance(v, bool)
        and v >= 0
    }
    if not out:
        return None
    if "total_tokens" not in out:
        out["total_tokens"] = out.get("prompt_tokens", 0) + out.get("completion_tokens", 0)
    return out
