"""A scripted fake OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benches.

Real HTTP (``http.server.ThreadingHTTPServer`` in a background thread, HTTP/1.1 keep-alive,
random free port), no network beyond loopback. What it answers is decided by a *script*.

API
---
``Response(status=200, body=None, headers={}, delay_s=0.0, truncate_to=None, drop=False, sse=None)``
    One scripted answer.
    - ``body``: a JSON value (encoded with ``json.dumps``, ``Content-Type: application/json``)
      or ``bytes``/``str`` sent verbatim (use this for malformed bodies).
    - ``headers``: extra headers, e.g. ``{"Retry-After": "0.05"}``.
    - ``delay_s``: sleep before answering (stalls / latency). Stopping the server cuts it short.
    - ``truncate_to``: advertise the full ``Content-Length`` but send only the first N body
      bytes, then close the connection (a truncated body).
    - ``drop``: close the connection without sending anything.
    - ``sse``: a list of JSON events streamed as ``text/event-stream`` (``data: {...}`` lines,
      then ``data: [DONE]``); ``body`` is ignored.

``Script = Callable[[Any, int], Response]``
    Called as ``script(request_json, call_index)`` for every request, where ``request_json``
    is the decoded request body (``None`` when the body is empty or not JSON) and
    ``call_index`` is 0-based, counted over all requests this server has received (thread
    safe). A plain sequence of ``Response`` is accepted too: the k-th request gets the k-th
    response, the last one repeats (see ``sequence``).

``FakeOpenAIServer(script)``
    Context manager (``with FakeOpenAIServer(script) as srv:``) or ``start()``/``stop()``.
    ``srv.base_url`` is ``http://127.0.0.1:<port>/v1`` (clients post to
    ``base_url + "/chat/completions"``); ``srv.requests`` lists every ``Request(index, method,
    path, headers, body, json)`` received, in arrival order. A script that raises answers 500
    with the exception text, and the exception is kept in ``srv.errors``.

Helpers that build real-shaped bodies (per the OpenAI chat-completions API reference):
    ``chat_completion(content=None, tool_calls=(), model="fake-model", usage=None,
    finish_reason=None)`` → a ``chat.completion`` object;
    ``tool_call(name, arguments, id=None)`` → one ``message.tool_calls`` entry (``arguments``
    given as ``str`` is sent verbatim, so invalid JSON is possible; anything else is
    ``json.dumps``-ed);
    ``sequence(*responses)`` → a script.

Pytest fixture ``openai_server``: a factory ``openai_server(script) -> FakeOpenAIServer``
(started; stopped at teardown). Import it explicitly in the test module::

    from tests.servers.openai_server import Response, chat_completion, openai_server, tool_call

    def test_x(openai_server):
        srv = openai_server([Response(429, {"error": {"message": "slow down"}},
                                      {"Retry-After": "0"}),
                             Response(body=chat_completion(content="hi"))])
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "FakeOpenAIServer",
    "Request",
    "Response",
    "Script",
    "chat_completion",
    "openai_server",
    "sequence",
    "tool_call",
]


@dataclass(frozen=True)
class Response:
    """One scripted answer (see the module docstring for each field)."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    truncate_to: int | None = None
    drop: bool = False
    sse: Sequence[Any] | None = None


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    client_port: int = 0
    """The client's TCP port: requests on one kept-alive connection share it."""


Script = Callable[[Any, int], Response]

_ids = itertools.count(1)


def tool_call(name: str, arguments: Any, id: str | None = None) -> dict[str, Any]:
    """One ``choices[0].message.tool_calls`` entry; a ``str`` ``arguments`` is sent verbatim."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": id or f"call_{next(_ids):06d}",
        "type": "function",
        "function": {"name": name, "arguments": args},
    }


def chat_completion(
    *,
    content: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    model: str = "fake-model",
    usage: Mapping[str, int] | None = None,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` object with one choice, shaped like the real API's."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(tc) for tc in tool_calls]
    return {
        "id": f"chatcmpl-{next(_ids):06d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": dict(usage)
        if usage is not None
        else {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def sequence(*responses: Response) -> Script:
    """A script answering the k-th request with the k-th response; the last one repeats."""
    if not responses:
        raise ValueError("sequence() needs at least one Response")
    items = list(responses)

    def script(_request: Any, index: int) -> Response:
        return items[min(index, len(items) - 1)]

    return script


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog (5) refuses bursts from a concurrency-32 client.
    request_queue_size = 256
    owner: FakeOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output clean

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            decoded: Any = json.loads(raw) if raw else None
        except ValueError:
            decoded = None
        index = owner._next_index()
        owner.requests.append(
            Request(
                index,
                self.command,
                self.path,
                dict(self.headers.items()),
                raw,
                decoded,
                self.client_address[1],
            )
        )
        try:
            resp = owner._script(decoded, index)
        except Exception as exc:  # a broken script must show up in the test, not hang it
            owner.errors.append(exc)
            resp = Response(500, {"error": {"message": f"script error: {exc!r}"}})
        if resp.delay_s > 0 and owner._sleep(resp.delay_s):
            self.close_connection = True
            return
        if resp.drop:
            self.close_connection = True
            return
        if resp.sse is not None:
            self._send_sse(resp)
            return
        if isinstance(resp.body, bytes):
            payload, ctype = resp.body, "application/octet-stream"
        elif isinstance(resp.body, str):
            payload, ctype = resp.body.encode(), "text/plain; charset=utf-8"
        else:
            payload, ctype = json.dumps(resp.body).encode(), "application/json"
        self.send_response(resp.status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in resp.headers.items():
            self.send_header(key, value)
        if resp.truncate_to is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        if resp.truncate_to is not None:
            self.wfile.write(payload[: resp.truncate_to])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(payload)

    def _send_sse(self, resp: Response) -> None:
        assert resp.sse is not None
        chunks = [f"data: {json.dumps(ev)}\n\n".encode() for ev in resp.sse]
        chunks.append(b"data: [DONE]\n\n")
        payload = b"".join(chunks)
        self.send_response(resp.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in resp.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


class FakeOpenAIServer:
    """A scripted chat-completions server on 127.0.0.1 (see the module docstring)."""

    def __init__(self, script: Script | Sequence[Response]) -> None:
        self._script: Script = (
            script if callable(script) else sequence(*script)  # type: ignore[arg-type]
        )
        self.requests: list[Request] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._count = 0
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds`` (in slices, so that stopping cuts it short); True if stopped.
        ``time.sleep`` rather than ``Event.wait``: its wake-up is several times more
        punctual, which the runner benchmark's latency figures depend on."""
        end = time.monotonic() + seconds
        while not self._stopping.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, 0.05))
        return True

    def _next_index(self) -> int:
        with self._lock:
            index = self._count
            self._count += 1
            return index

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def openai_server() -> Iterator[Callable[[Script | Sequence[Response]], FakeOpenAIServer]]:
    """Factory fixture: ``openai_server(script)`` starts a server, stopped at teardown."""
    started: list[FakeOpenAIServer] = []

    def start(script: Script | Sequence[Response]) -> FakeOpenAIServer:
        srv = FakeOpenAIServer(script).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
