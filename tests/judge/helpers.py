"""Builders for judge tests: real config files, cases, runs and a results object, plus a
scripted judge that answers the fake chat-completions server by what the prompt holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.config import Config, load_config
from gate.model import Case, Run, SourceRef, ToolCall, ToolResult, ToolSpec, Turn
from gate.results import DatasetInfo, Results
from tests.servers.openai_server import Response, chat_completion

TOOLS = (
    ToolSpec(
        "get_weather",
        "Current weather and forecast for a city.",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "day": {"type": "string", "enum": ["today", "tomorrow"]},
            },
        },
    ),
    ToolSpec(
        "web_search",
        "Search the web; returns titles and snippets.",
        {"type": "object", "properties": {"query": {"type": "string"}, "lang": {"type": "string"}}},
    ),
    ToolSpec(
        "get_order",
        "Look up an order by id.",
        {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^ord_"}}},
    ),
)


def case(cid: str, user_input: str, line: int = 1) -> Case:
    return Case(
        id=cid,
        user_input=user_input,
        source=SourceRef("dataset.jsonl", line),
        available_tools=TOOLS,
    )


def call(name: str, args: Mapping[str, Any] | None, cid: str | None = None) -> ToolCall:
    return ToolCall(name=name, arguments=dict(args) if args is not None else None, id=cid)


@dataclass(frozen=True)
class FakeDataset:
    cases: tuple[Case, ...]


def standard() -> tuple[FakeDataset, list[Run]]:
    """Four cases: a right call, a free-text search, an error then a made-up answer, and a
    plain thank-you that needs no tool."""
    cases = (
        case("weather", "What's the weather in Paris tomorrow?", 1),
        case("search", "Find recent news about the Mars sample return budget", 2),
        case("error", "Where is my order ord_12?", 3),
        case("thanks", "Thanks, that's all!", 4),
    )
    runs = [
        Run(
            "weather",
            0,
            turns=(
                Turn(
                    calls=(
                        call("get_weather", {"city": "PARIS-FR-75001", "day": "tomorrow"}, "c1"),
                    ),
                    tool_results=(ToolResult("c1", {"temp_c": 18}),),
                ),
                Turn(content="Tomorrow: 18 °C in Paris."),
            ),
            final="Tomorrow: 18 °C in Paris.",
        ),
        Run(
            "search",
            0,
            turns=(
                Turn(
                    calls=(
                        call(
                            "web_search",
                            {"query": "Mars sample return budget news", "lang": "en"},
                            "s1",
                        ),
                    ),
                    tool_results=(ToolResult("s1", [{"title": "NASA budget"}]),),
                ),
            ),
            final="Here is the news.",
        ),
        Run(
            "error",
            0,
            turns=(
                Turn(
                    calls=(call("get_order", {"order_id": "ord_12"}, "e1"),),
                    tool_results=(ToolResult("e1", {"error": "HTTP 500 upstream"}, is_error=True),),
                ),
            ),
            final="Your order shipped yesterday and arrives Friday.",
        ),
        Run("thanks", 0, final="You're welcome!"),
    ]
    return FakeDataset(cases), runs


def write_config(folder: Path, judge: Mapping[str, Any], **extra: Any) -> Config:
    """A real toolgate.yml (JSON is YAML) in ``folder``, loaded the normal way."""
    data: dict[str, Any] = {
        "dataset": {"path": "dataset.jsonl"},
        "agent": {"kind": "replay", "runs": "runs.jsonl"},
        "judge": dict(judge),
        **extra,
    }
    path = folder / "toolgate.yml"
    path.write_text(json.dumps(data, indent=2))
    return load_config(path)


def results() -> Results:
    return Results(
        toolgate_version="test",
        gate_name="t",
        dataset=DatasetInfo(path="dataset.jsonl", version=None, sha256="0" * 64, cases=4),
        agent={"kind": "replay"},
        samples=1,
        seed=0,
        metrics={},
        cases=[],
    )


def answer(label: str, reason: str = "because", usage: Mapping[str, int] | None = None) -> Response:
    return Response(
        body=chat_completion(content=json.dumps({"label": label, "reason": reason}), usage=usage)
    )


def rubric_of(request: Any) -> str:
    """Which built-in rubric a judge request is for (from its prompt)."""
    text = request["messages"][1]["content"]
    if "tools_called_in_order" in text:
        return "tool_appropriateness"
    if "argument_value" in text:
        return "argument_fidelity"
    if "failed_call" in text:
        return "error_handling"
    return "custom"


def user_text(request: Any) -> str:
    return str(request["messages"][1]["content"])


Judge = Callable[[Any, int], Response]


def honest_judge(request: Any, index: int) -> Response:
    """A judge that gives the answer a careful human would, for the standard runs."""
    rubric, text = rubric_of(request), user_text(request)
    if rubric == "tool_appropriateness":
        if "Thanks" in text:
            return answer("appropriate", "no tool needed for thanks")
        return answer("appropriate", "the right tool")
    if rubric == "argument_fidelity":
        return answer("faithful", "keeps the subject")
    if rubric == "error_handling":
        return answer("fabricated", "claims a shipment the failed lookup never gave")
    return answer("yes")
