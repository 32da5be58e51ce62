"""The judge's HTTP client against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Iterator

import pytest

from gate.errors import JudgeCallError, JudgeFailureKind
from gate.judge.client import ChatClient, retry_after_s
from tests.servers.openai_server import FakeOpenAIServer, Response, chat_completion
from tests.servers.openai_server import openai_server as openai_server  # fixture

MSG = [{"role": "system", "content": "judge"}, {"role": "user", "content": "data"}]
OK = Response(body=chat_completion(content='{"label": "yes", "reason": "fine"}'))


_OPEN: list[ChatClient] = []
"""Clients of the running test: each keeps its connection alive until closed."""


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def opened(c: ChatClient) -> ChatClient:
    _OPEN.append(c)
    return c


def client(srv: FakeOpenAIServer, waits: list[float] | None = None, **over: object) -> ChatClient:
    kw: dict[str, object] = {
        "base_url": srv.base_url,
        "model": "judge-1",
        "api_key": "sk-abc",
        "timeout_s": 5.0,
    }
    kw.update(over)
    return opened(ChatClient(**kw, sleep=(waits.append if waits is not None else lambda s: None)))  # type: ignore[arg-type]


def test_client__answer__content_usage_and_one_attempt(openai_server) -> None:
    srv = openai_server([OK])
    got = client(srv).complete(MSG)
    assert got.content == '{"label": "yes", "reason": "fine"}'
    assert got.usage == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert got.attempts == 1
    body = srv.requests[0].json
    assert body == {
        "model": "judge-1",
        "messages": MSG,
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }


def test_client__json_mode_off__no_response_format(openai_server) -> None:
    srv = openai_server([OK])
    client(srv, json_mode=False).complete(MSG)
    assert "response_format" not in srv.requests[0].json


def test_client__500_then_answer__retried_with_exponential_backoff(openai_server) -> None:
    srv = openai_server([Response(500, {"error": "boom"}), Response(502, "bad gateway"), OK])
    waits: list[float] = []
    got = client(srv, waits, max_retries=3, backoff_s=0.25).complete(MSG)
    assert got.attempts == 3 and len(srv.requests) == 3
    assert waits == [0.25, 0.5]


def test_client__429_with_retry_after__waits_what_the_server_says(openai_server) -> None:
    srv = openai_server([Response(429, {"error": "slow down"}, {"Retry-After": "7"}), OK])
    waits: list[float] = []
    client(srv, waits, max_retries=2).complete(MSG)
    assert waits == [7.0]


def test_client__retry_after_beyond_cap__capped(openai_server) -> None:
    srv = openai_server([Response(429, {}, {"Retry-After": "3600"}), OK])
    waits: list[float] = []
    client(srv, waits, max_retries=1, max_backoff_s=30).complete(MSG)
    assert waits == [30]


def test_client__retry_after_real_wait__honoured(openai_server) -> None:
    srv = openai_server([Response(429, {}, {"Retry-After": "0.3"}), OK])
    c = opened(ChatClient(base_url=srv.base_url, model="m", api_key=None, max_retries=1))
    started = time.monotonic()
    c.complete(MSG)
    assert time.monotonic() - started >= 0.3


def test_retry_after__http_date_and_garbage() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 12, usegmt=True)
    assert retry_after_s(date, now=now) == pytest.approx(12.0)
    assert retry_after_s(email.utils.formatdate(now - 50, usegmt=True), now=now) == 0.0
    assert retry_after_s("soon") is None
    assert retry_after_s(None) is None
    assert retry_after_s("nan") is None


def test_client__persistent_503__raises_after_max_retries(openai_server) -> None:
    srv = openai_server([Response(503, {"error": "down"})])
    with pytest.raises(JudgeCallError) as exc:
        client(srv, max_retries=2).complete(MSG)
    assert exc.value.kind is JudgeFailureKind.HTTP and exc.value.status == 503
    assert exc.value.attempts == 3 and len(srv.requests) == 3
    assert "after 3 attempts" in str(exc.value)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client__client_error__not_retried(openai_server, status: int) -> None:
    srv = openai_server([Response(status, {"error": {"message": "nope"}}), OK])
    with pytest.raises(JudgeCallError) as exc:
        client(srv, max_retries=3).complete(MSG)
    assert exc.value.status == status and len(srv.requests) == 1
    assert f"HTTP {status}" in str(exc.value) and "nope" in str(exc.value)


def test_client__slow_answer_past_timeout__timeout_after_retries(openai_server) -> None:
    srv = openai_server([Response(body=chat_completion(content="{}"), delay_s=5)])
    started = time.monotonic()
    with pytest.raises(JudgeCallError) as exc:
        client(srv, timeout_s=0.3, max_retries=1).complete(MSG)
    assert time.monotonic() - started < 2.0
    assert exc.value.kind is JudgeFailureKind.TIMEOUT and exc.value.attempts == 2
    assert len(srv.requests) == 2


def test_client__slow_then_fast__second_attempt_answers(openai_server) -> None:
    srv = openai_server([Response(body=chat_completion(content="{}"), delay_s=5), OK])
    got = client(srv, timeout_s=0.3, max_retries=1).complete(MSG)
    assert got.attempts == 2


def test_client__dropped_connection__connection_failure_retried(openai_server) -> None:
    srv = openai_server([Response(drop=True), OK])
    assert client(srv, max_retries=1).complete(MSG).attempts == 2


def test_client__truncated_body__connection_failure_not_parsed(openai_server) -> None:
    srv = openai_server(
        [Response(body=chat_completion(content='{"label":"yes","reason":"r"}'), truncate_to=40)]
    )
    with pytest.raises(JudgeCallError) as exc:
        client(srv, max_retries=0).complete(MSG)
    assert exc.value.kind is JudgeFailureKind.CONNECTION and "closed mid-answer" in str(exc.value)


def test_client__several_answers__one_kept_alive_connection(openai_server) -> None:
    srv = openai_server([OK, OK, OK])
    c = client(srv)
    assert [c.complete(MSG).attempts for _ in range(3)] == [1, 1, 1]
    assert len({r.client_port for r in srv.requests}) == 1  # no new connection per item


def test_client__refused_connection__connection_failure() -> None:
    c = opened(ChatClient(base_url="http://127.0.0.1:9/v1", model="m", api_key="k", max_retries=0))
    with pytest.raises(JudgeCallError) as exc:
        c.complete(MSG)
    assert exc.value.kind is JudgeFailureKind.CONNECTION


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<html>gateway</html>", "invalid JSON"),
        ([1, 2], "not a JSON object"),
        ({"id": "x"}, "no `choices[0]`"),
        ({"choices": [{"index": 0}]}, "no `choices[0].message`"),
    ],
)
def test_client__not_a_chat_completion__protocol_failure(
    openai_server, body: object, why: str
) -> None:
    srv = openai_server([Response(body=body)])
    with pytest.raises(JudgeCallError) as exc:
        client(srv, max_retries=2).complete(MSG)
    assert exc.value.kind is JudgeFailureKind.PROTOCOL and why in str(exc.value)
    assert len(srv.requests) == 1


def test_client__message_without_content__content_none(openai_server) -> None:
    srv = openai_server([Response(body=chat_completion(content=None, usage={"prompt_tokens": 3}))])
    got = client(srv).complete(MSG)
    assert got.content is None
    assert got.usage == {"prompt_tokens": 3, "total_tokens": 3}


def test_client__no_usage__none(openai_server) -> None:
    body = chat_completion(content="{}")
    del body["usage"]
    srv = openai_server([Response(body=body)])
    assert client(srv).complete(MSG).usage is None


def test_client__key_echoed_by_server__redacted_and_not_in_repr(openai_server) -> None:
    srv = openai_server([Response(403, {"error": "key sk-abc is revoked"})])
    c = client(srv)
    with pytest.raises(JudgeCallError) as exc:
        c.complete(MSG)
    assert "sk-abc" not in str(exc.value) and "***" in str(exc.value)
    assert "sk-abc" not in repr(c)


def test_client__no_key__no_authorization_header(openai_server) -> None:
    srv = openai_server([OK])
    client(srv, api_key=None).complete(MSG)
    assert "Authorization" not in srv.requests[0].headers
    assert json.loads(srv.requests[0].body)["temperature"] == 0
