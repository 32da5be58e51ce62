"""The JSON-over-HTTP client of the ``openai`` agent adapter and the judge, on httpx.

One :class:`httpx2.Client` per endpoint, shared by the runner's threads: its pool keeps
one connection per concurrent request alive between requests (a new TCP connection, or
TLS handshake, per request would cost a round trip or two each). What this module adds
to httpx is what the gate needs of every exchange:

* **A bound on the whole exchange.** httpx bounds each read; a server that trickles one
  byte at a time never trips that. Every socket operation here is given the time left
  until the exchange's deadline at most (:class:`_Bounded`), so an exchange ends at its
  timeout whatever the server does — while connecting, while the headers trickle, while
  the body does — as :class:`TimeoutError`.
* **A cap on the body** (:data:`MAX_RESPONSE_BYTES`): a declared length over it is refused
  before reading, and an undeclared one at one byte past it.
* **One error tree** (:data:`TRANSPORT_ERRORS`) for a failed exchange, and
  :class:`IncompleteBody` when the peer hung up before the declared length.
* No redirects followed, no proxies or ``.netrc`` from the environment: an endpoint
  answers itself.

Waits asked for with 429 and 503 are read by :func:`retry_after_s`: ``retry-after-ms``
(milliseconds, sent by OpenAI-style APIs) first, then ``Retry-After`` as delta-seconds or an
HTTP date. Anything unreadable or not finite is "not said" (None), never an endless wait;
callers still cap the wait by their own deadline.
"""

from __future__ import annotations

import contextvars
import email.utils
import math
import socket
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

from gate.errors import IncompleteBody, ResponseTooLarge

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Largest response body read from an endpoint (a chat completion is a few KB; a flood
must not exhaust the runner's memory)."""


TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.TransportError,
    ResponseTooLarge,
    IncompleteBody,
    OSError,
)
"""What a failed exchange raises besides :class:`TimeoutError`: refused, reset or dropped
connections, unparseable HTTP, a truncated or oversized body."""


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: bytes


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "toolgate_http_deadline", default=None
)
"""The monotonic time the current thread's exchange must be over by."""


def _left(timeout: float | None) -> float | None:
    """``timeout`` cut to the time left until the exchange's deadline (none left: a
    timeout now)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore2.ReadTimeout("the exchange's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Bounded(httpcore2.NetworkStream):
    """A network stream whose every operation ends by the exchange's deadline. The
    request's head is held until its body comes, so both leave in one send (httpcore
    writes them apart: a second system call and a second wake-up of the server)."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner
        self._head = b""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush(timeout)
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not self._head and buffer.endswith(b"\r\n\r\n"):
            self._head = buffer
            return
        self._head, buffer = b"", self._head + buffer
        self._inner.write(buffer, _left(timeout))

    def _flush(self, timeout: float | None) -> None:
        if self._head:
            self._head, head = b"", self._head
            self._inner.write(head, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        return _Bounded(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.SyncBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore2.NetworkStream:
        stream = super().connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return _Bounded(stream)


class _Transport(httpx2.HTTPTransport):
    """httpx's transport over a pool whose connections are :class:`_Bounded` (the pool is
    the transport's one collaborator; httpx takes no network backend as an argument)."""

    def __init__(self) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False),
            max_connections=None,
            max_keepalive_connections=None,
            network_backend=_Backend(),
            # (http.client sets it too: a request's one send is not held back by Nagle)
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )


class HttpClient:
    """POSTs to one base URL; safe to share between threads."""

    def __init__(self, base_url: str, headers: Mapping[str, str] | None = None):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._client = httpx2.Client(
            headers=dict(headers or {}),
            transport=_Transport(),
            follow_redirects=False,
            trust_env=False,
        )

    def post(
        self, path: str, body: bytes, *, timeout: float, accept: str = "application/json"
    ) -> HttpResponse:
        """One POST, over by ``timeout`` seconds (:class:`TimeoutError` past it); raises
        one of :data:`TRANSPORT_ERRORS` when the exchange fails."""
        token = _DEADLINE.set(time.monotonic() + timeout)
        try:
            with self._client.stream(
                "POST",
                self.base_url + path,
                content=body,
                headers={"Content-Type": "application/json", "Accept": accept},
                timeout=timeout,
            ) as resp:
                declared = resp.headers.get("content-length")
                expected = int(declared) if declared and declared.isdigit() else None
                if expected is not None and expected > MAX_RESPONSE_BYTES:
                    raise ResponseTooLarge(f"response body larger than {MAX_RESPONSE_BYTES} bytes")
                parts: list[bytes] = []
                got = 0
                try:
                    for part in resp.iter_bytes():
                        got += len(part)
                        if got > MAX_RESPONSE_BYTES:
                            raise ResponseTooLarge(
                                f"response body larger than {MAX_RESPONSE_BYTES} bytes"
                            )
                        parts.append(part)
                except httpx2.RemoteProtocolError:
                    raw = resp.num_bytes_downloaded  # as sent, before any decoding
                    if expected is not None and raw < expected:
                        raise IncompleteBody(raw, expected) from None
                    raise
                # A repeated header: the last one counts (as http.client's dict of them).
                headers = {k.lower(): v for k, v in resp.headers.multi_items()}
                return HttpResponse(resp.status_code, headers, b"".join(parts))
        except httpx2.TimeoutException:
            raise TimeoutError(f"no complete answer within {timeout:.3g}s") from None
        finally:
            _DEADLINE.reset(token)

    def close(self) -> None:
        """Close the kept-alive connections (call once no request is in flight)."""
        self._client.close()


def retry_after_value(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from one ``Retry-After`` value (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def retry_after_s(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from its headers, or None when it does not say."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        seconds = retry_after_value(ms)
        if seconds is not None:
            return seconds / 1000
    return retry_after_value(headers.get("retry-after"), now=now)
