"""A small HTTP/1.1 JSON client on the standard library, with keep-alive per thread.

The ``openai`` agent adapter posts thousands of requests at a bounded concurrency; a new
TCP connection per request (``urllib``) costs a round trip each. Each runner thread keeps
one persistent ``http.client`` connection per host and reopens it after any error. The
timeout is applied to the connect and to every socket read (a stalled server cannot hold
a thread longer than that between bytes), and a watchdog bounds the whole exchange by the
same timeout (a server that trickles one byte at a time cannot hold it either) — on every
kind of connection: it holds the exchange's socket itself, which a closing response
(``Connection: close``, HTTP/1.0, no length) takes from the connection, and an exchange it
cut is a timeout even when what was read looks whole.

Waits asked for with 429 and 503 are read by :func:`gate.http_retry.retry_after_s`.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, http.client.HTTPException)
"""What a failed exchange raises: timeouts, resets, refused connections, truncated or
unparseable HTTP (``IncompleteRead``, ``RemoteDisconnected``, ``BadStatusLine``)."""


_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Largest response body read from an endpoint (a chat completion is a few KB; a flood
must not exhaust the runner's memory)."""


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: bytes


class _OneSend:
    """Headers and a bytes body in one ``send``: ``http.client`` sends them in two, which
    costs a second system call and a second wake-up of the server for every request
    (measured: 87 µs of the runner's CPU per send on loopback) and, over TLS, a second
    record. ``_buffer`` (the pending header lines) is ``http.client``'s own attribute;
    anything else takes the standard path."""

    _buffer: list[bytes]

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        if isinstance(message_body, bytes) and not encode_chunked:
            self._buffer.extend((b"", b""))
            head = b"\r\n".join(self._buffer)
            del self._buffer[:]
            self.send(head + message_body)  # type: ignore[attr-defined]
            return
        super()._send_output(message_body, encode_chunked)  # type: ignore[misc]


class _Connection(_OneSend, http.client.HTTPConnection):
    pass


class _TLSConnection(_OneSend, http.client.HTTPSConnection):
    pass


class HttpClient:
    """POSTs to one base URL, one keep-alive connection per calling thread."""

    def __init__(self, base_url: str, headers: Mapping[str, str] | None = None):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.scheme = url.scheme
        self.host = url.hostname
        self.port = url.port
        self.prefix = url.path.rstrip("/")
        self.headers = dict(headers or {})
        self._local = threading.local()
        self._all: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._open = True
        _DEADLINES.retain()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            cls = _TLSConnection if self.scheme == "https" else _Connection
            conn = cls(self.host, self.port, timeout=timeout)
            self._local.conn = conn
            with self._lock:
                self._all.add(conn)
        if conn.timeout != timeout:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                self._all.discard(conn)

    def post(
        self, path: str, body: bytes, *, timeout: float, accept: str = "application/json"
    ) -> HttpResponse:
        """One POST; raises one of :data:`TRANSPORT_ERRORS` when the exchange fails."""
        headers = {
            **self.headers,
            "Content-Type": "application/json",
            "Accept": accept,
            "Content-Length": str(len(body)),
        }
        for fresh in (False, True):
            conn = self._connection(timeout)
            reused = conn.sock is not None
            # The socket timeout bounds each read; a server that trickles a byte at a time
            # would never trip it. The watchdog bounds the whole exchange: at `timeout` it
            # shuts the socket, and the blocked read fails.
            watchdog = _Watchdog(conn, timeout)
            try:
                conn.request("POST", self.prefix + path, body=body, headers=headers)
                # The socket itself: a closing response (Connection: close, HTTP/1.0, no
                # length) takes it from the connection, which then holds None.
                watchdog.sock = conn.sock
                resp = conn.getresponse()
                # An endpoint that floods is not answering: cap the body. A declared length
                # is checked before reading (read() then still detects a truncated body);
                # without one, read at most one byte past the cap.
                too_big = resp.length is not None and resp.length > MAX_RESPONSE_BYTES
                if not too_big:
                    if resp.length is not None:
                        data = resp.read()
                    else:
                        data = resp.read(MAX_RESPONSE_BYTES + 1)
                    too_big = len(data) > MAX_RESPONSE_BYTES
                if too_big:
                    self._drop()
                    raise http.client.HTTPException(
                        f"response body larger than {MAX_RESPONSE_BYTES} bytes"
                    )
                if watchdog.fired:  # what was read ends where the watchdog cut it
                    self._drop()
                    raise TimeoutError(f"no complete answer within {timeout:.3g}s")
                break
            except _STALE as exc:
                self._drop()
                if watchdog.fired:
                    raise TimeoutError(f"no complete answer within {timeout:.3g}s") from None
                # The server closed an idle kept-alive connection: that is not a failed
                # attempt; send once more on a new connection.
                if reused and not fresh:
                    continue
                raise exc
            except TRANSPORT_ERRORS:
                self._drop()
                if watchdog.fired:
                    raise TimeoutError(f"no complete answer within {timeout:.3g}s") from None
                raise
            finally:
                watchdog.cancel()
        if resp.will_close:
            self._drop()
        return HttpResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)

    def close(self) -> None:
        """Close every thread's connection (call once no request is in flight)."""
        with self._lock:
            conns, self._all = self._all, set()
        for conn in conns:
            conn.close()
        self._local = threading.local()
        with self._lock:
            was_open, self._open = self._open, False
        if was_open:
            _DEADLINES.release()


class _Watchdog:
    """Shuts a connection's socket down if the exchange outlasts ``timeout`` seconds.

    Every exchange of every client shares one :class:`_Deadlines` thread: a thread per
    request (``threading.Timer``) cost a thread start — and the wait for it to be
    scheduled — on every request, which at concurrency 32 was a measurable part of the
    runner's overhead."""

    __slots__ = ("_conn", "_entry", "fired", "sock")

    def __init__(self, conn: http.client.HTTPConnection, timeout: float):
        self.fired = False
        self._conn = conn
        self.sock: socket.socket | None = None
        """The exchange's socket once connected (the connection may let go of it)."""
        self._entry = _DEADLINES.add(time.monotonic() + timeout, self._fire)

    def _fire(self) -> None:
        self.fired = True
        sock = self.sock if self.sock is not None else self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        _DEADLINES.cancel(self._entry)


class _Deadlines:
    """One daemon thread that calls each registered function at its deadline unless it
    was cancelled first (a heap; cancelled entries are dropped when they come up).

    It runs while some :class:`HttpClient` is open (:meth:`retain` / :meth:`release`):
    once the last one closes, the thread ends — a process with a live thread does not
    fork its scoring workers (:func:`gate.pipeline._scorepool.default_executor`)."""

    def __init__(self) -> None:
        self._heap: list[list[Any]] = []  # [deadline, seq, fn | None]
        self._cond = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._users = 0

    def retain(self) -> None:
        with self._cond:
            self._users += 1

    def release(self) -> None:
        with self._cond:
            self._users = max(0, self._users - 1)
            if self._users or self._thread is None:
                return
            thread, self._thread = self._thread, None
            self._heap = []
            self._cond.notify()
        if thread is not threading.current_thread():
            thread.join(timeout=5)

    def add(self, deadline: float, fn: Callable[[], None]) -> list[Any]:
        entry = [deadline, next(self._seq), fn]
        with self._cond:
            if self._thread is None or self._pid != os.getpid():  # first use, or forked
                self._pid = os.getpid()
                self._heap = []
                self._thread = threading.Thread(
                    target=self._loop, name="toolgate-http-deadlines", daemon=True
                )
                self._thread.start()
            first = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, entry)
            if first:  # the thread sleeps until a later deadline: wake it to re-arm
                self._cond.notify()
        return entry

    def cancel(self, entry: list[Any]) -> None:
        entry[2] = None  # no lock needed: the thread reads it once, under the lock

    def _loop(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                if self._thread is not me:  # released (or replaced after a fork)
                    return
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                left = self._heap[0][0] - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                fn = heapq.heappop(self._heap)[2]
            if fn is not None:
                fn()


_DEADLINES = _Deadlines()
