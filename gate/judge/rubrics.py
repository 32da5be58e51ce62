"""Judge rubrics: one narrow question each, a fixed answer scale, and only the data it needs.

A rubric turns one run (one case × sample) into zero or more **judge items**: the inputs
for one judge call. docs/judge.md ("Built-in rubrics", "Custom rubrics") gives what each
rubric sees and its labels; which arguments are free text without ``scoring.free_text``
is :func:`_is_auto_free_text` (:data:`AUTO_FREE_TEXT_WORDS`), a custom rubric's inputs
:data:`CUSTOM_INPUTS`, a label's score :attr:`Rubric.values`.

Inputs are clipped deterministically (each string to :data:`MAX_INPUT_CHARS`) so one huge
tool result cannot blow the token budget; the same run always gives the same inputs, so the
cache key (``gate.judge.cache``) is stable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from gate.config import JUDGE_BUILTIN_RUBRICS, Config, RubricConfig
from gate.errors import ConfigError, Problem
from gate.jsonio import canonical
from gate.model import Case, ExpectedCall, JsonValue, Run, ToolCall, ToolResult, Turn, is_batched

MAX_INPUT_CHARS = 2000
"""Longest string passed to the judge inside any input; longer ones are cut and marked."""

AUTO_FREE_TEXT_WORDS = 3
"""Without ``scoring.free_text``, a plain string argument of at least this many words is
judged as free text."""

CUSTOM_INPUTS: dict[str, str] = {
    "user_input": "the user's turn under test (text)",
    "message_history": "the prior messages of the case (OpenAI chat shape)",
    "tools": "the available tools: name and description",
    "tool_schemas": "the available tools: name, description and JSON Schema parameters",
    "called_tools": "the names of the tools the agent called, in order",
    "calls": "the agent's calls, one list per assistant turn: name and arguments",
    "trajectory": "each assistant turn: its calls with their results, and its text",
    "final": "the agent's final answer (text or null)",
    "expected_tool_calls": "the dataset's expected calls (name and argument matchers)",
}
"""Placeholders a custom rubric template may use, each the name of one input."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """The inputs of one judge call.

    ``item`` tells items of one case-sample apart: ``""`` for per-case-sample rubrics,
    ``"<tool>#<i>.<argument>"`` for argument fidelity and ``"<tool>#<i>"`` for error
    handling, where ``i`` is the 0-based index of the call among the run's calls.
    """

    rubric: str
    case_id: str
    sample: int
    item: str
    inputs: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class ExtractContext:
    """Settings the extractors need besides the case and the run."""

    free_text: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """tool → free-text argument names (``scoring.free_text``); empty means automatic."""


Extractor = Callable[[Case, Run, ExtractContext], list[tuple[str, dict[str, JsonValue]]]]


@dataclass(frozen=True, slots=True)
class Rubric:
    """One judge question: its prompt, its scale and how to cut its items from a run."""

    name: str
    question: str
    template: str
    scale: tuple[str, ...]
    values: Mapping[str, float]
    builtin: bool
    source: str
    extract: Extractor
    system: str = ""

    @property
    def metric(self) -> str:
        return f"judge.{self.name}"

    @property
    def prompt_sha256(self) -> str:
        """sha256 of everything that shapes the judge's answer besides the inputs: the
        system prompt, this rubric's template, and its scale with values."""
        data = {
            "system": self.system,
            "template": self.template,
            "scale": list(self.scale),
            "values": dict(self.values),
        }
        return hashlib.sha256(canonical(data).encode()).hexdigest()

    def items(self, case: Case, run: Run, ctx: ExtractContext) -> list[JudgeItem]:
        return [
            JudgeItem(self.name, run.case_id, run.sample, key, inputs)
            for key, inputs in self.extract(case, run, ctx)
        ]

    def messages(self, inputs: Mapping[str, JsonValue]) -> list[dict[str, str]]:
        """The chat messages for one item: the shared system prompt with this scale, and
        the rubric's template with each ``{{name}}`` replaced by the input as JSON."""
        system = self.system.replace("{{scale}}", canonical(list(self.scale)))

        def fill(m: re.Match[str]) -> str:
            return canonical(inputs.get(m.group(1)))

        return [
            {"role": "system", "content": system},
            {"role": "user", "content": _PLACEHOLDER.sub(fill, self.template)},
        ]


# ─── helpers ─────────────────────────────────────────────────────────────────


def clip(value: JsonValue, limit: int = MAX_INPUT_CHARS) -> JsonValue:
    """``value`` with every string longer than ``limit`` cut to ``limit`` characters and
    marked with how much was cut."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}…[{len(value) - limit} more characters cut]"
    if isinstance(value, list | tuple):
        return [clip(v, limit) for v in value]
    if isinstance(value, Mapping):
        return {str(k): clip(v, limit) for k, v in value.items()}
    return value


def results_for(turn: Turn) -> list[ToolResult | None]:
    """Each call's result in one turn: matched by call id, or by position when the calls
    carry no ids."""
    by_id = {r.id: r for r in turn.tool_results if r.id is not None}
    out: list[ToolResult | None] = []
    for i, call in enumerate(turn.calls):
        if call.id is not None and call.id in by_id:
            out.append(by_id[call.id])
        elif call.id is None and i < len(turn.tool_results):
            out.append(turn.tool_results[i])
        else:
            out.append(None)
    return out


def _call_json(call: ToolCall) -> dict[str, JsonValue]:
    if call.parse_ok:
        return {"name": call.name, "arguments": clip(call.arguments)}
    return {"name": call.name, "arguments_unparsed": clip(call.raw_arguments)}


def _turn_json(turn: Turn) -> dict[str, JsonValue]:
    calls: list[JsonValue] = []
    for call, result in zip(turn.calls, results_for(turn), strict=True):
        entry = _call_json(call)
        if result is None:
            entry["result"] = None
        else:
            entry["result"] = clip(result.content)
            entry["is_error"] = result.is_error
        calls.append(entry)
    return {"calls": calls, "text": clip(turn.content)}


# ─── the built-in extractors ─────────────────────────────────────────────────


def _is_auto_free_text(case: Case, call: ToolCall, arg: str, value: JsonValue) -> bool:
    if not isinstance(value, str) or len(value.split()) < AUTO_FREE_TEXT_WORDS:
        return False
    spec = case.tool(call.name)
    props = spec.parameters.get("properties") if spec is not None else None
    prop = props.get(arg) if isinstance(props, Mapping) else None
    if not isinstance(prop, Mapping):
        # An argument the schema does not describe is not known to be free text.
        return False
    if prop.get("type") not in ("string", None):
        return False
    return not any(k in prop for k in ("enum", "const", "format", "pattern"))


def _argument_fidelity(
    case: Case, run: Run, ctx: ExtractContext
) -> list[tuple[str, dict[str, JsonValue]]]:
    out: list[tuple[str, dict[str, JsonValue]]] = []
    for i, call in enumerate(run.calls):
        if not call.parse_ok or call.arguments is None:
            continue  # a parse failure is scored by the deterministic checks
        if ctx.free_text:
            names = [
                a
                for a in ctx.free_text.get(call.name, ())
                if isinstance(call.arguments.get(a), str)
            ]
        else:
            names = sorted(
                a for a, v in call.arguments.items() if _is_auto_free_text(case, call, a, v)
            )
        for arg in names:
            inputs: dict[str, JsonValue] = {
                "user_input": clip(case.user_input),
                "tool": call.name,
                "argument": arg,
                "value": clip(call.arguments[arg]),
            }
            out.append((f"{call.name}#{i}.{arg}", inputs))
    return out


def _error_handling(
    case: Case, run: Run, ctx: ExtractContext
) -> list[tuple[str, dict[str, JsonValue]]]:
    out: list[tuple[str, dict[str, JsonValue]]] = []
    index = 0
    for t, turn in enumerate(run.turns):
        for call, result in zip(turn.calls, results_for(turn), strict=True):
            if result is not None and result.is_error:
                siblings = [
                    {
                        **_call_json(c),
                        "result": clip(r.content) if r else None,
                        "is_error": bool(r and r.is_error),
                    }
                    for c, r in zip(turn.calls, results_for(turn), strict=True)
                    if c is not call
                ]
                followed: list[JsonValue] = []
                if siblings or turn.content:
                    # Calls of the same turn ran in parallel with the failed one; the
                    # turn's own text came with them, before the error was seen.
                    followed.append({"same_turn_calls": siblings, "text": clip(turn.content)})
                followed.extend(_turn_json(later) for later in run.turns[t + 1 :])
                inputs: dict[str, JsonValue] = {
                    "failed_call": _call_json(call),
                    "error": clip(result.content),
                    "followed": followed,
                    "final": clip(run.final),
                }
                if run.error is not None:
                    inputs["followed"] = [*followed, {"agent_stopped_with_error": clip(run.error)}]
                out.append((f"{call.name}#{index}", inputs))
            index += 1
    return out


def _custom_extractor(used: tuple[str, ...]) -> Extractor:
    """One item per case-sample holding the inputs ``used`` (tool appropriateness too)."""

    def extract(
        case: Case, run: Run, ctx: ExtractContext
    ) -> list[tuple[str, dict[str, JsonValue]]]:
        return [("", {name: _custom_input(name, case, run) for name in used})]

    return extract


def _custom_input(name: str, case: Case, run: Run) -> JsonValue:
    match name:
        case "user_input":
            return clip(case.user_input)
        case "message_history":
            return clip([dict(m) for m in case.message_history])
        case "tools":
            return [
                {"name": t.name, "description": clip(t.description)} for t in case.available_tools
            ]
        case "tool_schemas":
            return clip([t.definition() for t in case.available_tools])
        case "called_tools":
            return [c.name for c in run.calls]
        case "calls":
            return [[_call_json(c) for c in batch] for batch in run.batches]
        case "trajectory":
            return [_turn_json(t) for t in run.turns]
        case "final":
            return clip(run.final)
        case "expected_tool_calls":
            return expectation_json(case.expected_tool_calls)
    raise AssertionError(f"unknown custom input {name!r}")  # checked when the template loads


# ─── the registry ────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Builtin:
    question: str
    labels: tuple[tuple[str, float], ...]
    extract: Extractor


BUILTINS: dict[str, _Builtin] = {
    "tool_appropriateness": _Builtin(
        "Was this the right tool, or should no tool have been used?",
        (
            ("appropriate", 1.0),
            ("partly_appropriate", 0.5),
            ("wrong_tool", 0.0),
            ("unnecessary_call", 0.0),
            ("missing_call", 0.0),
        ),
        _custom_extractor(("user_input", "tools", "called_tools")),
    ),
    "argument_fidelity": _Builtin(
        "Is this free-text argument a fair rendering of the user's intent?",
        (("faithful", 1.0), ("incomplete", 0.5), ("distorted", 0.0)),
        _argument_fidelity,
    ),
    "error_handling": _Builtin(
        "After an error response, did the agent retry sensibly, switch, hand back, or fabricate?",
        (
            ("retried_sensibly", 1.0),
            ("switched_tool", 1.0),
            ("handed_back", 1.0),
            ("retried_blindly", 0.0),
            ("fabricated", 0.0),
        ),
        _error_handling,
    ),
}
"""The built-in rubrics: question, (label, score) scale, extractor."""

assert tuple(BUILTINS) == JUDGE_BUILTIN_RUBRICS


def _package_text(name: str) -> str:
    # Package data of ``gate`` (templates/ is a data folder, not a package).
    return resources.files("gate").joinpath("templates", "judge", name).read_text(encoding="utf-8")


def system_prompt() -> str:
    """The system prompt every rubric shares (asks for the strict JSON answer)."""
    return _package_text("system.txt")


def builtin_rubric(name: str) -> Rubric:
    spec = BUILTINS[name]
    return Rubric(
        name=name,
        question=spec.question,
        template=_package_text(f"{name}.txt"),
        scale=tuple(label for label, _ in spec.labels),
        values=dict(spec.labels),
        builtin=True,
        source=f"gate/templates/judge/{name}.txt",
        extract=spec.extract,
        system=system_prompt(),
    )


def default_values(scale: Sequence[str]) -> dict[str, float]:
    """Label i of k scores 1 - i / (k - 1): the first label 1.0, the last 0.0."""
    k = len(scale)
    return {label: round(1.0 - i / (k - 1), 6) for i, label in enumerate(scale)}


def custom_rubric(cfg: RubricConfig, path: Path, display: str) -> Rubric:
    """A user-defined rubric from its config entry and prompt file.

    Raises :class:`ConfigError` naming the file and line when the file cannot be read,
    uses a placeholder that is not an input (:data:`CUSTOM_INPUTS`), or uses none.
    """
    try:
        template = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            Problem(display, None, None, f"cannot read the prompt of rubric {cfg.name!r}: {why}")
        ) from None
    problems: list[Problem] = []
    used: list[str] = []
    for lineno, line in enumerate(template.splitlines(), start=1):
        for m in _PLACEHOLDER.finditer(line):
            name = m.group(1)
            if name not in CUSTOM_INPUTS:
                from gate.config import did_you_mean

                problems.append(
                    Problem(
                        display,
                        lineno,
                        None,
                        f"unknown placeholder {{{{{name}}}}}{did_you_mean(name, CUSTOM_INPUTS)}; "
                        f"a template may use: {', '.join(CUSTOM_INPUTS)}",
                    )
                )
            elif name not in used:
                used.append(name)
    if not used and not problems:
        problems.append(
            Problem(
                display,
                None,
                None,
                f"rubric {cfg.name!r}: the template uses no placeholder, so the judge would "
                f"see no data; use some of: {', '.join('{{' + n + '}}' for n in CUSTOM_INPUTS)}",
            )
        )
    if problems:
        raise ConfigError(problems)
    values = dict(cfg.values) if cfg.values is not None else default_values(cfg.scale)
    return Rubric(
        name=cfg.name,
        question=_first_line(template) or cfg.name,
        template=template,
        scale=tuple(cfg.scale),
        values={label: values[label] for label in cfg.scale},
        builtin=False,
        source=display,
        extract=_custom_extractor(tuple(used)),
        system=system_prompt(),
    )


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not _PLACEHOLDER.search(line):
            return line.removeprefix("QUESTION:").strip()[:200]
    return ""


def load_rubrics(config: Config) -> list[Rubric]:
    """The enabled rubrics, in order: ``judge.rubrics`` first, then every custom rubric
    not already listed there (defining a custom rubric enables it)."""
    judge = config.judge
    if judge is None:
        return []
    custom = {r.name: r for r in judge.custom_rubrics}
    order = list(dict.fromkeys([*judge.rubrics, *custom]))
    out: list[Rubric] = []
    for name in order:
        if name in BUILTINS:
            out.append(builtin_rubric(name))
        else:
            cfg = custom[name]
            path = config.resolve(cfg.prompt_file)
            out.append(custom_rubric(cfg, path, display(path)))
    return out


def display(path: Path) -> str:
    """A path as messages show it: relative to the working folder when it lies below it,
    else as it is."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def describe(rubric: Rubric) -> dict[str, Any]:
    """The static description of a rubric, as results.json shows it."""
    return {
        "metric": rubric.metric,
        "question": rubric.question,
        "scale": list(rubric.scale),
        "values": dict(rubric.values),
        "builtin": rubric.builtin,
        "prompt": rubric.source,
        "prompt_sha256": rubric.prompt_sha256,
    }


def expectation_json(calls: Sequence[ExpectedCall]) -> list[JsonValue]:
    """An expectation list in the dataset's syntax, reading back to the same calls: a
    plain list as it was; in a batched list a batch of several calls as an array and a
    batch of one bare (``[[a, b], c]``), unless no batch holds two calls (``[[a], [b]]``,
    which a plain ``[a, b]`` would not mean)."""
    if not is_batched(calls):
        return [c.to_json() for c in calls]
    groups: list[list[dict[str, JsonValue]]] = []
    last: int | None = None
    for c in calls:
        if c.batch != last:
            groups.append([])
            last = c.batch
        groups[-1].append(c.to_json())
    if all(len(g) == 1 for g in groups):
        return list(groups)
    return [g if len(g) > 1 else g[0] for g in groups]
