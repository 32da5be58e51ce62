"""The ``openai`` agent adapter: the runner is the agent loop over a chat-completions API.

Any OpenAI-compatible endpoint (``agent.base_url``). What is sent, what is recorded
(``meta.request``, never the key), the retries, the circuit breaker and streaming are
the user's contract, written once in docs/agent-protocol.md (section "``openai``: ToolGate
is the agent loop"). Here: each request is bounded by ``agent.timeout_s``
(:class:`gate.replay.http.HttpClient`); retries wait ``Retry-After`` when the server sends
one, else ``backoff_base_s · 2^attempt`` (capped at :data:`MAX_BACKOFF_S`) times a jitter
drawn from the case-sample's seed; a wait past the global deadline ends the case-sample
at once; a ``Retry-After`` over :data:`MAX_RETRY_AFTER_S` fails it at once; after
``agent.breaker_after`` case-samples in a row gave up the same way the rest are
``not_attempted``. A stream that ends before ``data: [DONE]``, and a body whose JSON ends
before its last bracket closes, count as truncated and are retried.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import random
import re
import threading
import time
import urllib.parse
from typing import Any

from gate import __version__, jsonio
from gate.adapters.interface import AssistantTurn, PayloadError
from gate.adapters.openai_chat import StreamAccumulator, parse_completion
from gate.adapters.sse import iter_events
from gate.agents.openai import OpenAIAgent
from gate.config import Config
from gate.errors import ConfigError, Problem, StreamTruncated
from gate.model import Run
from gate.replay.http import TRANSPORT_ERRORS, HttpClient, HttpResponse, retry_after_s
from gate.replay.interface import Agent
from gate.replay.session import (
    AgentFailure,
    ErrorKind,
    Job,
    Session,
    assistant_message,
    tool_messages,
)

RETRY_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_BACKOFF_S = 30.0
MAX_RETRY_AFTER_S = 120.0
"""The longest ``Retry-After`` honoured: an endpoint asking for more (a quota exhausted
until tomorrow) fails the case-sample at once, without waiting or retrying."""

_DIGITS = re.compile(r"\d+")
_STATUS = re.compile(r"HTTP \d{3}")


_RETRYABLE: tuple[type[BaseException], ...] = (*TRANSPORT_ERRORS, StreamTruncated)


def _is_loopback(base_url: str) -> bool:
    host = urllib.parse.urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIChatAgent(Agent):
    """The ``openai`` adapter (module docstring)."""

    kind = "openai"
    backoff_base_s = 0.5
    """First retry wait without a Retry-After header (tests lower it)."""

    def __init__(self, config: Config, cfg: OpenAIAgent):
        file = str(config.source) if config.source else "toolgate.yml"

        def bad(field: str, message: str) -> ConfigError:
            return ConfigError(Problem(file, None, f"agent.{field}", message))

        self._cfg = cfg
        key = os.environ.get(cfg.api_key_env, "")
        if not key and not _is_loopback(cfg.base_url):
            raise bad(
                "api_key_env",
                f"the environment variable {cfg.api_key_env} is not set "
                f"(it holds the API key for {cfg.base_url})",
            )
        self._system: str | None = None
        system_sha = None
        if cfg.system_prompt_file:
            path = config.resolve(cfg.system_prompt_file)
            try:
                raw = path.read_bytes()
            except OSError as exc:
                raise bad("system_prompt_file", f"cannot read {path}: {exc.strerror}") from None
            self._system = raw.decode("utf-8", "replace")
            system_sha = hashlib.sha256(raw).hexdigest()
        try:
            self._client = HttpClient(
                cfg.base_url,
                {"User-Agent": f"toolgate/{__version__}"}
                | ({"Authorization": f"Bearer {key}"} if key else {}),
            )
        except ValueError as exc:
            raise bad("base_url", str(exc)) from None
        self._stream = bool(cfg.params.get("stream"))
        self._breaker_lock = threading.Lock()
        self._streak = 0
        self._streak_of: str | None = None
        self._open_because: str | None = None
        self._request_meta: dict[str, Any] = {
            "model": cfg.model,
            "base_url": cfg.base_url,
            "temperature": cfg.temperature,
            "params": dict(cfg.params),
            "system_prompt_sha256": system_sha,
            "timeout_s": cfg.timeout_s,
            "max_retries": cfg.max_retries,
        }

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, **self._request_meta}

    def close(self) -> None:
        self._client.close()

    def run(self, job: Job, session: Session) -> Run | None:
        with self._breaker_lock:
            if self._open_because is not None:
                raise AgentFailure(ErrorKind.NOT_ATTEMPTED, self._open_because)
        try:
            self._converse(job, session)
        except AgentFailure as failure:
            self._count(failure)
            raise
        self._count(None)
        return None

    def _count(self, failure: AgentFailure | None) -> None:
        """The circuit breaker (``agent.breaker_after``): consecutive identical give-ups."""
        with self._breaker_lock:
            if failure is None or failure.kind is not ErrorKind.HTTP:
                self._streak, self._streak_of = 0, None
                return
            last = failure.message.rsplit("last: ", 1)[-1]
            status = _STATUS.match(last)  # the status itself tells failures apart
            key = status.group(0) if status else _DIGITS.sub("#", last.split(":", 1)[0])
            if key == self._streak_of:
                self._streak += 1
            else:
                self._streak, self._streak_of = 1, key
            after = self._cfg.breaker_after
            if after and self._streak >= after and self._open_because is None:
                self._open_because = (
                    f"the endpoint failed {self._streak} case-samples in a row the same way "
                    f"({failure.message.splitlines()[0][:300]}); the rest are not sent"
                )

    def _converse(self, job: Job, session: Session) -> None:
        system = [{"role": "system", "content": self._system}] if self._system is not None else []
        messages: list[dict[str, Any]] = [*system, *job.messages]
        tools = job.tools
        session.meta["request"] = self._request_meta
        rng = random.Random(job.seed)
        attempts = 0
        while True:
            body: dict[str, Any] = {
                "model": self._cfg.model,
                "messages": messages,
                "temperature": self._cfg.temperature,
            }
            if tools:
                body["tools"] = tools
            body.update(self._cfg.params)
            turn, used = self._request(jsonio.dumps(body), job, rng)
            attempts += used
            session.meta["http_attempts"] = attempts
            session.add_usage(turn.usage)
            if not turn.calls:
                if session.next_user(turn.content) is None:
                    return
                # the next scripted user turn, after the conversation so far
                messages = [*system, *session.messages()]
                continue
            results = session.answer(turn.calls, turn.content)
            messages = [
                *messages,
                assistant_message(session.turns[-1]),
                *tool_messages(results),
            ]

    def _request(self, data: bytes, job: Job, rng: random.Random) -> tuple[AssistantTurn, int]:
        """One completion, with retries; (the parsed turn, HTTP attempts made)."""
        last = "no attempt made"
        last_kind = ErrorKind.HTTP
        tries = self._cfg.max_retries + 1
        accept = "text/event-stream" if self._stream else "application/json"
        for attempt in range(tries):
            timeout = job.step_timeout()
            wait: float | None = None
            try:
                resp = self._client.post("/chat/completions", data, timeout=timeout, accept=accept)
                if resp.status == 200:
                    return self._parse(resp), attempt + 1
                last, last_kind = f"HTTP {resp.status}: {_excerpt(resp.body)}", ErrorKind.HTTP
                if resp.status not in RETRY_STATUSES:
                    raise AgentFailure(ErrorKind.HTTP, last)
                wait = retry_after_s(resp.headers)
                if wait is not None and wait > MAX_RETRY_AFTER_S:
                    raise AgentFailure(
                        ErrorKind.HTTP,
                        f"gave up at once: the endpoint asks to wait {wait:.0f}s, over the "
                        f"{MAX_RETRY_AFTER_S:.0f}s cap; last: {last}",
                    )
            except TimeoutError:  # the endpoint's, not the agent's: infrastructure
                last, last_kind = f"no answer within {timeout:.3g}s", ErrorKind.HTTP
            except _RETRYABLE as exc:
                last, last_kind = f"{type(exc).__name__}: {exc}", ErrorKind.HTTP
            if attempt == tries - 1:
                break
            if wait is None:
                wait = min(MAX_BACKOFF_S, self.backoff_base_s * 2**attempt) * (
                    0.5 + rng.random() / 2
                )
            if job.deadline is not None and time.monotonic() + wait > job.deadline:
                raise AgentFailure(
                    ErrorKind.DEADLINE,
                    f"waiting {wait:.3g}s to retry ({last}) would pass the global deadline",
                )
            time.sleep(wait)
        raise AgentFailure(last_kind, f"gave up after {tries} attempt(s); last: {last}")

    def _parse(self, resp: HttpResponse) -> AssistantTurn:
        try:
            if self._stream or resp.headers.get("content-type", "").startswith("text/event-stream"):
                acc = StreamAccumulator()
                for _name, event in iter_events(resp.body.splitlines(keepends=True)):
                    acc.add(event)
                if b"data: [DONE]" not in resp.body:
                    raise StreamTruncated("the stream ended before data: [DONE]")
                return acc.finish()
            try:
                payload = jsonio.loads_strict(resp.body)
            except jsonio.JsonInputError as exc:
                if _cut_short(resp.body):
                    raise StreamTruncated(
                        f"the response body ends in the middle of its JSON "
                        f"({len(resp.body)} bytes): {_excerpt(resp.body, 80)}"
                    ) from None
                raise AgentFailure(
                    ErrorKind.PAYLOAD,
                    f"the response body is not JSON ({exc}): {_excerpt(resp.body)}",
                ) from None
            return parse_completion(payload)
        except PayloadError as exc:
            raise AgentFailure(ErrorKind.PAYLOAD, str(exc)) from None


def _cut_short(body: bytes) -> bool:
    """Whether a body that is not JSON is a JSON object or array cut short: valid up to
    its last byte (a body whose declared length was itself truncated by a proxy, or by a
    server that gave up mid-reply). That is a transport failure, retried like a body the
    connection lost, not an answer from the model."""
    text = body.decode("utf-8", "replace").rstrip()
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        # "Unterminated string" points at the string's start: it runs to the end
        return exc.pos >= len(text) or exc.msg.startswith("Unterminated string")
    except ValueError:
        return False
    return False


def _excerpt(body: bytes, limit: int = 300) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return text + ("…" if len(body) > limit else "")
