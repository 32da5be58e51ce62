"""gate.replay.http: the keep-alive JSON client the openai adapter and the judge share."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from gate.replay.http import HttpClient
from tests.servers.openai_server import Response, chat_completion
from tests.servers.openai_server import openai_server as openai_server  # fixture


def test_post__headers_and_body__one_send(openai_server: Any, monkeypatch: Any) -> None:
    """One send per request (httpcore makes two: a second syscall and server wake-up)."""
    srv = openai_server([Response(body=chat_completion(content="a"))] * 3)
    sent: list[bytes] = []
    real = socket.socket.send

    def send(self: socket.socket, data: Any, *args: Any) -> int:
        if self.getpeername()[1] == srv.port:  # the client's socket, not the server's
            sent.append(bytes(data))
        return real(self, data, *args)

    monkeypatch.setattr(socket.socket, "send", send)
    client = HttpClient(srv.base_url, {"Authorization": "Bearer k"})
    try:
        body = b'{"model": "m", "messages": []}'
        for _ in range(3):
            resp = client.post("/chat/completions", body, timeout=5)
            assert resp.status == 200
    finally:
        client.close()
    assert len(sent) == 3
    assert all(s.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n") for s in sent)
    assert all(s.endswith(b"\r\n\r\n" + body) for s in sent)
    assert [r.body for r in srv.requests] == [body] * 3


@pytest.mark.parametrize("body", [b"", b"x" * 200_000])
def test_post__empty_or_large_body__arrives_whole(openai_server: Any, body: bytes) -> None:
    srv = openai_server([Response(body=chat_completion(content="a"))])
    client = HttpClient(srv.base_url)
    try:
        assert client.post("/chat/completions", body, timeout=5).status in (200, 400)
    finally:
        client.close()
    assert srv.requests[0].body == body
