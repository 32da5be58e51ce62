"""The openai adapter as the agent loop, against a real chat-completions server on
127.0.0.1 scripted per request (tests/servers/openai_server.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gate.errors import ConfigError
from gate.model import Run
from gate.replay.openai_agent import OpenAIChatAgent
from gate.replay.runner import run_all
from gate.runsfile import read_runs
from tests.replay.helpers import FakeDataset, case, config
from tests.servers.openai_server import (
    FakeOpenAIServer,
    Response,
    Script,
    chat_completion,
    tool_call,
)

Serve = Callable[[Script | list[Response]], FakeOpenAIServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start fake chat-completions servers; stopped at teardown."""
    started: list[FakeOpenAIServer] = []

    def start(script: Script | list[Response]) -> FakeOpenAIServer:
        started.append(FakeOpenAIServer(script).start())
        return started[-1]

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OpenAIChatAgent, "backoff_base_s", 0.01)
    monkeypatch.setenv("TOOLGATE_TEST_KEY", "sk-test-123")


def _agent_cfg(srv: FakeOpenAIServer, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "openai",
        "model": "gpt-test",
        "base_url": srv.base_url,
        "api_key_env": "TOOLGATE_TEST_KEY",
        "temperature": 0.0,
        "timeout_s": 2,
        "max_retries": 3,
        **extra,
    }


def _run(
    tmp_path: Path, srv: FakeOpenAIServer, ids: list[str] | None = None, **extra: Any
) -> list[Run]:
    cfg = config(tmp_path, _agent_cfg(srv, **extra), concurrency=1)
    run_all(
        cfg,
        FakeDataset([case(i) for i in (ids or ["a"])]),
        tmp_path / "out",
        samples=1,
        shard=None,
        resume=False,
        progress=False,
    )
    return [r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")]


def _tools_done(req: Any) -> bool:
    return any(m.get("role") == "tool" for m in req["messages"])


def test_openai__tool_call_then_final__loop_records_turns_and_sends_results_back(
    tmp_path: Path, serve: Serve
) -> None:
    def script(req: Any, i: int) -> Response:
        if not _tools_done(req):
            return Response(
                body=chat_completion(
                    content="Let me look.",
                    tool_calls=[tool_call("lookup_order", {"order_id": "ord_1"}, id="call_1")],
                    usage={"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
                )
            )
        return Response(
            body=chat_completion(
                content="It shipped.",
                usage={"prompt_tokens": 60, "completion_tokens": 4, "total_tokens": 64},
            )
        )

    srv = serve(script)
    (tmp_path / "prompt.txt").write_text("You are a support agent.")
    (run,) = _run(
        tmp_path, srv, system_prompt_file="prompt.txt", params={"seed": 7, "tool_choice": "auto"}
    )
    assert run.error is None and run.final == "It shipped."
    (turn,) = run.turns
    assert turn.content == "Let me look."
    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("call_1", "lookup_order", {"order_id": "ord_1"})
    ]
    assert run.usage == {"prompt_tokens": 100, "completion_tokens": 13, "total_tokens": 113}

    first, second = (r.json for r in srv.requests)
    assert first["model"] == "gpt-test" and first["temperature"] == 0.0
    assert first["seed"] == 7 and first["tool_choice"] == "auto"
    assert first["messages"] == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "where is my order ord_1?"},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup_order", "issue_refund"]
    assert second["messages"][2] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "lookup_order", "arguments": '{"order_id": "ord_1"}'}}
        ],
    }  # fmt: skip
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"status": "shipped"}',
    }
    assert srv.requests[0].headers["Authorization"] == "Bearer sk-test-123"
    assert run.meta is not None
    request = run.meta["request"]
    assert request["model"] == "gpt-test" and request["params"] == {
        "seed": 7,
        "tool_choice": "auto",
    }
    assert request["system_prompt_sha256"] is not None
    assert "sk-test-123" not in json.dumps(run.meta)


def test_openai__invalid_json_arguments__parse_failure_recorded_and_model_told(
    tmp_path: Path, serve: Serve
) -> None:
    def script(req: Any, i: int) -> Response:
        if not _tools_done(req):
            return Response(
                body=chat_completion(
                    tool_calls=[tool_call("lookup_order", '{"order_id": ord_1}', id="c9")]
                )
            )
        return Response(body=chat_completion(content="sorry"))

    srv = serve(script)
    (run,) = _run(tmp_path, srv)
    (call,) = run.calls
    assert (call.parse_ok, call.arguments, call.raw_arguments) == (
        False,
        None,
        '{"order_id": ord_1}',
    )
    tool_msg = srv.requests[1].json["messages"][-1]
    assert tool_msg["tool_call_id"] == "c9" and "not a valid JSON object" in tool_msg["content"]
    # the model's own text is sent back verbatim
    assert (
        srv.requests[1].json["messages"][-2]["tool_calls"][0]["function"]["arguments"]
        == '{"order_id": ord_1}'
    )


def test_openai__429_with_retry_after__waits_then_succeeds(tmp_path: Path, serve: Serve) -> None:
    srv = serve(
        [
            Response(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0.3"}),
            Response(body=chat_completion(content="done")),
        ]
    )
    t0 = time.monotonic()
    (run,) = _run(tmp_path, srv)
    assert time.monotonic() - t0 >= 0.3
    assert run.error is None and run.final == "done"
    assert run.meta is not None and run.meta["http_attempts"] == 2


def test_openai__5xx_every_time__http_error_after_retries(tmp_path: Path, serve: Serve) -> None:
    srv = serve([Response(503, {"error": {"message": "overloaded"}})])
    (run,) = _run(tmp_path, srv, max_retries=2)
    assert run.error is not None
    assert run.error.startswith("http: gave up after 3 attempt(s); last: HTTP 503:")
    assert len(srv.requests) == 3


def test_openai__400__not_retried(tmp_path: Path, serve: Serve) -> None:
    srv = serve([Response(400, {"error": {"message": "bad tools"}})])
    (run,) = _run(tmp_path, srv)
    assert run.error == 'http: HTTP 400: {"error": {"message": "bad tools"}}'
    assert len(srv.requests) == 1


def test_openai__malformed_body__payload_error(tmp_path: Path, serve: Serve) -> None:
    srv = serve([Response(body=b"<html>gateway</html>")])
    (run,) = _run(tmp_path, srv)
    assert (run.error or "").startswith("payload: the response body is not JSON")


def test_openai__body_without_choices__payload_error_names_path(
    tmp_path: Path, serve: Serve
) -> None:
    srv = serve([Response(body={"id": "x", "object": "chat.completion"})])
    (run,) = _run(tmp_path, srv)
    assert run.error == "payload: choices: must be an array"


def test_openai__truncated_body_then_ok__retried(tmp_path: Path, serve: Serve) -> None:
    srv = serve(
        [
            Response(body=chat_completion(content="x" * 200), truncate_to=30),
            Response(body=chat_completion(content="whole")),
        ]
    )
    (run,) = _run(tmp_path, srv)
    assert run.error is None and run.final == "whole"


def test_openai__stall_past_timeout__http_error_of_the_infrastructure(
    tmp_path: Path, serve: Serve
) -> None:
    srv = serve([Response(body=chat_completion(content="late"), delay_s=5)])
    (run,) = _run(tmp_path, srv, timeout_s=0.3, max_retries=1)
    assert run.error == "http: gave up after 2 attempt(s); last: no answer within 0.3s"


def test_openai__streaming__deltas_accumulated(tmp_path: Path, serve: Serve) -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_s", "type": "function",
             "function": {"name": "lookup_order", "arguments": '{"order_'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": 'id": "ord_1"}'}}]},
            "finish_reason": "tool_calls"}]},
    ]  # fmt: skip

    def script(req: Any, i: int) -> Response:
        if not _tools_done(req):
            return Response(sse=chunks)
        return Response(sse=[{"choices": [{"index": 0, "delta": {"content": "shipped"}}]}])

    srv = serve(script)
    (run,) = _run(tmp_path, srv, params={"stream": True})
    assert run.error is None and run.final == "shipped"
    assert run.calls[0].arguments == {"order_id": "ord_1"} and run.calls[0].id == "call_s"
    assert srv.requests[0].json["stream"] is True


def _sse_bytes(events: list[Any], *, done: bool = True) -> bytes:
    body = b"".join(f"data: {json.dumps(ev)}\n\n".encode() for ev in events)
    return body + (b"data: [DONE]\n\n" if done else b"")


_STREAM_CALL = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_s", "type": "function",
         "function": {"name": "lookup_order", "arguments": '{"order_id": "ord_1"}'}}]}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]  # fmt: skip


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda b: b[: b.index(b"\n\n") + 2 + 20], id="inside_the_json"),
        pytest.param(lambda b: b[: b.index(b"\n", b.index(b"\n\n") + 2) + 1], id="no_blank_line"),
    ],
)
def test_openai__stream_cut_mid_event__retried_like_a_truncated_stream(
    tmp_path: Path, serve: Serve, cut: Callable[[bytes], bytes]
) -> None:
    whole = _sse_bytes(_STREAM_CALL)
    cut_body = cut(whole)
    assert not cut_body.endswith(b"\n\n")  # really mid-event
    headers = {"Content-Type": "text/event-stream"}
    seen: dict[int, int] = {}

    def script(req: Any, i: int) -> Response:
        n = len(req["messages"])
        seen[n] = seen.get(n, 0) + 1
        if not _tools_done(req):  # the first attempt of the first turn is cut
            return Response(body=cut_body if seen[n] == 1 else whole, headers=headers)
        done = [{"choices": [{"index": 0, "delta": {"content": "shipped"}}]}]
        return Response(body=_sse_bytes(done), headers=headers)

    srv = serve(script)
    (run,) = _run(tmp_path, srv, params={"stream": True})
    assert run.error is None and run.final == "shipped"
    assert run.calls[0].arguments == {"order_id": "ord_1"}
    assert len(srv.requests) == 3


def test_openai__full_length_body_cut_short__retried(tmp_path: Path, serve: Serve) -> None:
    whole = json.dumps(chat_completion(content="whole")).encode()
    srv = serve([Response(body=whole[:60]), Response(body=whole)])
    (run,) = _run(tmp_path, srv)
    assert run.error is None and run.final == "whole"
    assert len(srv.requests) == 2


def test_openai__body_not_json_at_all__payload_error_not_retried(
    tmp_path: Path, serve: Serve
) -> None:
    srv = serve([Response(body=b'{"choices": [}'), Response(body=chat_completion(content="x"))])
    (run,) = _run(tmp_path, srv)
    assert run.error is not None and run.error.startswith("payload: ")
    assert len(srv.requests) == 1


def test_openai__retry_after_over_the_cap__fails_at_once_without_waiting(
    tmp_path: Path, serve: Serve
) -> None:
    srv = serve([Response(429, {"error": {"message": "quota"}}, {"Retry-After": "3600"})])
    t0 = time.monotonic()
    (run,) = _run(tmp_path, srv, max_retries=4)
    assert time.monotonic() - t0 < 5
    assert run.error is not None and run.error.startswith(
        "http: gave up at once: the endpoint asks to wait 3600s, over the 120s cap"
    )
    assert len(srv.requests) == 1


def test_openai__endpoint_fails_every_case_the_same_way__breaker_stops_sending(
    tmp_path: Path, serve: Serve
) -> None:
    from gate.agents.openai import DEFAULT_BREAKER_AFTER as BREAKER_AFTER

    srv = serve([Response(500, {"error": {"message": "upstream down"}})])
    ids = [f"c{i}" for i in range(BREAKER_AFTER + 3)]
    runs = _run(tmp_path, srv, ids=ids, max_retries=1)
    kinds = [r.error.split(":", 1)[0] for r in sorted(runs, key=lambda r: int(r.case_id[1:]))]
    assert kinds == ["http"] * BREAKER_AFTER + ["not_attempted"] * 3
    assert len(srv.requests) == BREAKER_AFTER * 2  # nothing sent once the breaker opened
    assert all(r.error_class == "infrastructure" for r in runs)


@pytest.mark.parametrize(("after", "sent"), [(2, 2), (0, 6)])
def test_openai__breaker_after_set__opens_after_that_many_or_never(
    tmp_path: Path, serve: Serve, after: int, sent: int
) -> None:
    srv = serve([Response(500, {"error": {"message": "upstream down"}})])
    ids = [f"c{i}" for i in range(6)]
    runs = _run(tmp_path, srv, ids=ids, max_retries=0, breaker_after=after)
    kinds = [r.error.split(":", 1)[0] for r in sorted(runs, key=lambda r: int(r.case_id[1:]))]
    assert kinds == ["http"] * sent + ["not_attempted"] * (6 - sent)
    assert len(srv.requests) == sent


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_config__breaker_after_invalid__located_error(tmp_path: Path, value: str) -> None:
    from gate.config import load_config
    from gate.errors import ConfigError

    path = tmp_path / "toolgate.yml"
    path.write_text(
        "dataset: {path: d.jsonl}\n"
        "agent:\n"
        "  kind: openai\n"
        "  model: m\n"
        f"  breaker_after: {value}\n",
        "utf-8",
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (5, "agent.breaker_after"), problem


def test_openai__failures_that_differ__breaker_stays_closed(tmp_path: Path, serve: Serve) -> None:
    from gate.agents.openai import DEFAULT_BREAKER_AFTER as BREAKER_AFTER

    def script(req: Any, i: int) -> Response:
        return Response(500 + i % 2, {"error": {"message": "flaky"}})

    ids = [f"c{i}" for i in range(BREAKER_AFTER + 2)]
    runs = _run(tmp_path, serve(script), ids=ids, max_retries=0)
    assert all(r.error is not None and r.error.startswith("http: ") for r in runs)


def test_openai__step_budget__stops_the_loop(tmp_path: Path, serve: Serve) -> None:
    srv = serve(
        [
            Response(
                body=chat_completion(tool_calls=[tool_call("lookup_order", {"order_id": "ord_1"})])
            )
        ]
    )
    (run,) = _run(tmp_path, srv, step_budget=2)
    assert (
        run.error == "step_budget: the agent asked for tool-calling turn 3 with a step budget of 2"
    )
    assert len(srv.requests) == 3 and len(run.turns) == 3


def test_openai__key_missing_for_remote_endpoint__config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    cfg = config(
        tmp_path,
        {
            "kind": "openai",
            "model": "m",
            "base_url": "https://api.example.com/v1",
            "api_key_env": "NO_SUCH_KEY_VAR",
        },
    )
    with pytest.raises(ConfigError) as exc:
        OpenAIChatAgent(cfg, cfg.agent)  # type: ignore[arg-type]
    assert exc.value.problems[0].field == "agent.api_key_env"
    assert "NO_SUCH_KEY_VAR is not set" in exc.value.problems[0].message


def test_openai__concurrent_case_samples__each_conversation_kept_apart(
    tmp_path: Path, serve: Serve
) -> None:
    def script(req: Any, i: int) -> Response:
        user = req["messages"][-1]["content"] if not _tools_done(req) else None
        if user is not None:
            oid = user.rsplit(" ", 1)[-1]
            return Response(
                body=chat_completion(tool_calls=[tool_call("lookup_order", {"order_id": oid})]),
                delay_s=0.05,
            )
        return Response(body=chat_completion(content=req["messages"][-1]["content"]), delay_s=0.05)

    srv = serve(script)
    cases = [case(f"c{i}", user=f"order ord_{i}") for i in range(12)]
    cfg = config(tmp_path, _agent_cfg(srv), concurrency=6)
    summary = run_all(
        cfg,
        FakeDataset(cases),
        tmp_path / "out",
        samples=1,
        shard=None,
        resume=False,
        progress=False,
    )
    runs = {r.case_id: r for _, r in read_runs(tmp_path / "out" / "runs.jsonl")}
    assert summary.written == 12
    assert runs["c1"].final == '{"status": "shipped"}'
    for i in range(12):
        assert runs[f"c{i}"].calls[0].arguments == {"order_id": f"ord_{i}"}


def test_openai__after_the_run__no_runner_thread_left(tmp_path: Path, serve: Serve) -> None:
    # A thread left alive would keep `toolgate check` from forking its scoring workers.
    import threading

    srv = serve([Response(body=chat_completion(content="done"))] * 3)
    before = {t.name for t in threading.enumerate()}
    (run,) = _run(tmp_path, srv)
    assert run.error is None
    left = {t.name for t in threading.enumerate()} - before
    assert not {n for n in left if n.startswith("toolgate-")}, left
