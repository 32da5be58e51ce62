"""The MCP host: 127.0.0.1 only, one endpoint per case-sample, gone when it ends."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from gate.replay.frozen import ReplayBackend
from gate.replay.mcp import bridge, endpoint
from gate.replay.mcp.content import from_result, to_result
from gate.replay.mcp.endpoint import Endpoint
from gate.replay.mcp.host import McpHost
from gate.replay.session import Job, Session
from tests.mcp.helpers import order_case


@pytest.fixture
def host() -> Iterator[McpHost]:
    h = McpHost()
    h.start()
    yield h
    h.stop()


def _endpoint(case_id: str = "c1") -> Endpoint:
    case = order_case(case_id)
    job = Job(case=case, sample=0, seed=1, step_budget=5, timeout_s=5)
    return Endpoint(Session(job, ReplayBackend(case)), batch_window_s=0, max_connections=5)


def _status(url: str) -> int:
    request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def _lookup(url: str) -> str:
    async with Client(url) as client:
        result = await client.call_tool("lookup_order", {"order_id": "ord_1"})
        return str(result.content[0].text)  # type: ignore[union-attr]


def test_host__binds_loopback_only(host: McpHost) -> None:
    url = host.open(_endpoint())
    assert url.startswith(f"http://127.0.0.1:{host.port}/mcp/")
    assert host._server is not None
    addresses = {s.getsockname()[0] for srv in host._server.servers for s in srv.sockets}
    assert addresses == {"127.0.0.1"}


def test_host__other_case_token_or_closed_endpoint__404(host: McpHost) -> None:
    a, b = _endpoint("a"), _endpoint("b")
    url_a, url_b = host.open(a), host.open(b)
    assert asyncio.run(_lookup(url_a)) == '{"status":"shipped"}'
    assert len(a.session.turns) == 1 and b.session.turns == []  # b's session saw nothing
    host.close(a)
    assert _status(url_a) == 404
    assert _status(url_b.rsplit("/", 1)[0] + "/not-a-token") == 404
    assert _status(f"http://127.0.0.1:{host.port}/") == 404
    assert asyncio.run(_lookup(url_b)) == '{"status":"shipped"}'


def test_bridge__raw_arguments_key__is_the_endpoints() -> None:
    assert bridge.RAW_ARGUMENTS_META == endpoint.RAW_ARGUMENTS_META


@pytest.mark.parametrize(
    ("value", "frozen"),
    [
        ({"status": "shipped"}, {"status": "shipped"}),  # text + structuredContent
        ("plain text", "plain text"),
        ([1, 2], "[1,2]"),  # a list that is not content blocks: its JSON text
        (None, "null"),
        (
            [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
            ],
            [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
            ],
        ),
    ],
)
def test_content__frozen_value__served_and_frozen_again(value: object, frozen: object) -> None:
    result = to_result(value, is_error=True)  # type: ignore[arg-type]
    assert result.is_error
    assert from_result(result) == (frozen, True)


def test_endpoint__arguments_not_an_object__recorded_as_parse_failure_and_error_answer() -> None:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext

    ep = _endpoint()
    seen: list[ServerRequestContext[Any, Any]] = []

    async def call_next(ctx: ServerRequestContext[Any, Any]) -> Any:
        seen.append(ctx)
        return await ep._call_tool(ctx, types.CallToolRequestParams.model_validate(ctx.params))

    ctx = ServerRequestContext(
        session=None,  # type: ignore[arg-type]
        lifespan_context={},
        protocol_version="2026-07-28",
        method="tools/call",
        params={"name": "lookup_order", "arguments": ["ord_1"]},
        request_id=1,
    )
    result = asyncio.run(ep._observe(ctx, call_next))
    assert result.is_error
    (call,) = ep.session.turns[0].calls
    assert (call.name, call.arguments, call.parse_ok) == ("lookup_order", None, False)
    assert call.raw_arguments == '["ord_1"]'
    assert ep.requests == 1 and ep.failure is None
