"""Self-tests of the fake chat-completions server (so other suites can trust it)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.servers.openai_server import (
    FakeOpenAIServer,
    Response,
    chat_completion,
    openai_server,  # noqa: F401 - fixture
    sequence,
    tool_call,
)


def _post(url: str, body: Any, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers.items()), exc.read()


def test_server__scripted_sequence__answers_in_order_and_records_requests(openai_server) -> None:  # noqa: F811
    srv = openai_server(
        [
            Response(429, {"error": {"message": "slow"}}, {"Retry-After": "0"}),
            Response(body=chat_completion(tool_calls=[tool_call("lookup", "{bad json")])),
        ]
    )
    status, headers, _ = _post(srv.base_url, {"model": "m", "messages": []})
    assert status == 429 and headers["Retry-After"] == "0"
    status, _, body = _post(srv.base_url, {"model": "m", "messages": [{"role": "user"}]})
    assert status == 200
    msg = json.loads(body)["choices"][0]["message"]
    assert msg["tool_calls"][0]["function"]["arguments"] == "{bad json"
    assert [r.index for r in srv.requests] == [0, 1]
    assert srv.requests[1].json["messages"] == [{"role": "user"}]
    assert srv.requests[1].path == "/v1/chat/completions"
    # the last response repeats
    assert _post(srv.base_url, {})[0] == 200


def test_server__callable_script__sees_request_json_and_index() -> None:
    seen: list[tuple[Any, int]] = []

    def script(req: Any, i: int) -> Response:
        seen.append((req, i))
        return Response(body=chat_completion(content=f"n={len(req['messages'])}"))

    with FakeOpenAIServer(script) as srv:
        _, _, body = _post(srv.base_url, {"messages": [1, 2, 3]})
    assert json.loads(body)["choices"][0]["message"]["content"] == "n=3"
    assert seen == [({"messages": [1, 2, 3]}, 0)]


def test_server__truncated_body__client_sees_incomplete_read() -> None:
    with FakeOpenAIServer(
        sequence(Response(body=chat_completion(content="x" * 100), truncate_to=20))
    ) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        resp = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead):
            resp.read()


def test_server__raw_malformed_body__sent_verbatim() -> None:
    with FakeOpenAIServer([Response(body=b"<html>oops")]) as srv:
        status, _, body = _post(srv.base_url, {})
    assert status == 200 and body == b"<html>oops"


def test_server__stall__client_times_out_and_stop_is_prompt() -> None:
    srv = FakeOpenAIServer([Response(body={}, delay_s=30)]).start()
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        _post(srv.base_url, {}, timeout=0.2)
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 3


def test_server__drop__client_sees_closed_connection() -> None:
    with FakeOpenAIServer([Response(drop=True)]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        with pytest.raises(http.client.RemoteDisconnected):
            conn.getresponse()


def test_server__sse__streams_events_then_done() -> None:
    events = [{"choices": [{"index": 0, "delta": {"content": "he"}}]}]
    with FakeOpenAIServer([Response(sse=events)]) as srv:
        _, headers, body = _post(srv.base_url, {"stream": True})
    assert headers["Content-Type"] == "text/event-stream"
    assert body.decode().splitlines()[0] == "data: " + json.dumps(events[0])
    assert body.endswith(b"data: [DONE]\n\n")


def test_server__script_raises__answers_500_and_keeps_error() -> None:
    def script(req: Any, i: int) -> Response:
        raise RuntimeError("boom")

    with FakeOpenAIServer(script) as srv:
        status, _, _ = _post(srv.base_url, {})
    assert status == 500 and isinstance(srv.errors[0], RuntimeError)
