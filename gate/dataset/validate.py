"""Validating a dataset row into a :class:`gate.model.Case`.

Validation is by hand rather than with pydantic: every message names the file, the line
and the field in the dataset's own words (``expected_tool_calls[1].name: 'refund_ordr' is
not among available_tools (did you mean 'refund_order'?)``), every problem of the whole
file is collected in one pass, and a 100,000-case file loads in seconds
(``bench/load_bench.py``). Tools are resolved by :mod:`gate.dataset.tools`; argument
matchers are parsed by :mod:`gate.dataset.matchers`.

``must_not_call`` may name a tool the case does not offer (an agent can hold tools beyond
``available_tools``, and models invent names): it is accepted, guarded like any other, and
the run's notices list it (:func:`unoffered_forbidden`). A *look-alike* of an offered tool
(:func:`look_alike`: the same name up to case, spacing, punctuation and look-alike
letters, or one or two letters off) is refused with the did-you-mean, since the typo would
guard nothing the model is offered.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeGuard

from gate.dataset.columns import COLUMNS
from gate.dataset.matchers import check_against_schema, did_you_mean, json_kind, parse_args
from gate.dataset.problems import Problems
from gate.dataset.tools import ToolFile, ToolResolver
from gate.errors import Problem
from gate.model import (
    ArgsMatch,
    Case,
    Difficulty,
    ExpectedCall,
    FrozenResponse,
    OrderMode,
    PassOn,
    SourceRef,
    ToolSpec,
    UserTurn,
)
from gate.scorers.rules import name_skeleton

MAX_ID_LENGTH = 200
MAX_STEP_BUDGET = 1000
TAG = re.compile(r"^[^\s,=]{1,64}$")
"""A tag: 1-64 characters, no whitespace, comma or ``=`` (tags name slices ``tag=x``)."""

_CALL_KEYS = ("name", "args", "args_match", "required_args_only", "required")
# Sets for the membership tests every row and call makes (the tuples keep the order the
# did-you-mean hints search).
_COLUMN_SET = frozenset(COLUMNS)
_CALL_KEY_SET = frozenset(_CALL_KEYS)
_RESPONSE_KEYS = ("name", "args", "response", "error")
_TURN_KEYS = (
    "user",
    "expected_tool_calls",
    "expected_no_tool",
    "alternatives",
    "order",
    "args_match",
    "tool_responses",
    "must_not_call",
)
"""The keys of one user turn of a ``conversation``."""
MAX_CONVERSATION_TURNS = 100
"""Most user turns one conversation case may have (docs/dataset.md): every turn sends the
agent the whole conversation so far, so a sample's cost grows with the square of its
turns (4,000 turns once took 37 s for one sample)."""
_TURN_KEY_SET = frozenset(_TURN_KEYS)
_ONE_TURN_ONLY = (
    "user_input",
    "expected_tool_calls",
    "expected_no_tool",
    "acceptable_alternatives",
)
"""Columns a conversation case gives per turn instead."""
_ROLES = ("system", "developer", "user", "assistant", "tool")
_MESSAGE_KEYS = (
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "refusal",
    "function_call",
    "audio",
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def look_alike(name: str, offered: Iterable[str]) -> str | None:
    """The offered tool ``name`` misspells, if any: the same tool-name skeleton (case,
    spacing, punctuation, look-alike letters: :func:`gate.scorers.rules.name_skeleton`)
    or skeletons at most one edit apart (two for names of eight letters or more)."""
    key = name_skeleton(name)
    best: tuple[int, str] | None = None
    for tool in offered:
        other = name_skeleton(tool)
        limit = 2 if min(len(key), len(other)) >= 8 else 1
        d = _edits(key, other, limit)
        if d <= limit and (best is None or (d, tool) < best):
            best = (d, tool)
    return None if best is None else best[1]


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[-1]


def unoffered_forbidden(cases: Iterable[Case]) -> str | None:
    """The notice for ``must_not_call`` names no case offers (accepted: module docstring),
    or ``None``."""
    names: dict[str, None] = {}
    n = 0
    for c in cases:
        offered = {t.name for t in c.available_tools}
        extra = [m for m in c.must_not_call if m not in offered]
        if extra:
            n += 1
            names.update(dict.fromkeys(extra))
    if not names:
        return None
    shown = ", ".join(sorted(names)[:5]) + (", …" if len(names) > 5 else "")
    return (
        f"must_not_call names tools a case does not offer ({shown}, in {n} case(s)): "
        "guarded all the same, a call to one is a hard failure"
    )


class _Report(Protocol):
    def __call__(self, fld: str | None, message: str, once: str | None = None) -> None: ...


_Tools = Mapping[str, ToolSpec] | None
"""A case's tools by name; ``None`` when they are invalid (their checks are skipped)."""


class CaseBuilder:
    """Validates one row at a time into a :class:`Case`, reporting into ``problems``."""

    def __init__(self, display: str, resolver: ToolResolver, problems: Problems, track_ids: bool):
        self.display = display
        self.resolver = resolver
        self.problems = problems
        self.ids: dict[str, int] | None = {} if track_ids else None
        self.tools: dict[str, ToolSpec] = {}
        self._reported_files: set[Path] = set()
        # The tools of the previous case and their index by name: the cases of one
        # ``@tools.json`` share one tuple, so it is indexed and merged once, not per case.
        self._last_tools: tuple[ToolSpec, ...] | None = None
        self._last_by_name: dict[str, ToolSpec] = {}

    def build(self, line: int, row: Any) -> Case | None:
        before = self.problems.count

        def report(fld: str | None, message: str, once: str | None = None) -> None:
            problem = Problem(self.display, line, fld or None, message)
            if once is None:
                self.problems.add(problem)
            else:
                self.problems.add_once(once, problem)

        if not isinstance(row, dict):
            report(None, f"a case must be a JSON object, not {json_kind(row)}")
            return None
        for key in row:
            if key not in _COLUMN_SET:
                report(key, f"unknown column{did_you_mean(key, COLUMNS)}")
        get = {k: v for k, v in row.items() if v is not None}.get

        case_id = self._id(get("id"), line, report)
        history = self._history(get("message_history"), report)
        tools = self._tools(get("available_tools"), report)
        by_name: dict[str, ToolSpec] | None = None
        if tools is not None:
            same = tools is self._last_tools
            by_name = self._last_by_name if same else {t.name: t for t in tools}
        if get("conversation") is not None:
            return self._conversation_case(row, line, case_id, history, tools, by_name, report)
        user_input = get("user_input")
        if user_input is None:
            report(
                "user_input",
                "required: the user turn under test (or `conversation`: the user turns of a "
                "conversation)",
            )
        elif not isinstance(user_input, str) or not user_input.strip():
            report("user_input", f"must be a non-empty string, not {user_input!r}"[:200])

        no_tool = get("expected_no_tool")
        if no_tool is not None and not isinstance(no_tool, bool):
            report("expected_no_tool", f"must be true or false, not {no_tool!r}")
            no_tool = "invalid"  # reported; the labelling rules below would only echo it
        raw_expected = get("expected_tool_calls")
        expected = self._calls(raw_expected, "expected_tool_calls", by_name, report)
        if no_tool == "invalid":
            pass
        elif raw_expected is None and no_tool is None:
            report(
                "expected_tool_calls",
                "required: the calls the agent should make, or `expected_no_tool: true` for a "
                "case that needs no tool",
            )
        elif no_tool is True and isinstance(raw_expected, list) and raw_expected:
            report(
                "expected_no_tool",
                f"is true but expected_tool_calls lists {len(raw_expected)} call(s); keep one "
                "of the two",
            )
        elif raw_expected == [] and no_tool is not True:
            report(
                "expected_tool_calls",
                "is empty: set `expected_no_tool: true` to label a case that needs no tool (an "
                "empty list alone is ambiguous)",
            )

        raw_alts = get("acceptable_alternatives")
        if no_tool is True and isinstance(raw_alts, list) and raw_alts:
            report(
                "acceptable_alternatives",
                "expected_no_tool is true, so no call is acceptable; to accept either "
                "no call or some "
                "calls, list the calls in expected_tool_calls and add [] as an alternative",
            )
        alternatives = self._alternatives(raw_alts, "acceptable_alternatives", by_name, report)

        must_not = self._must_not_call(get("must_not_call"), by_name, report)
        if must_not:
            lists = [("expected_tool_calls", expected or ())] + [
                (f"acceptable_alternatives[{i}]", alt) for i, alt in enumerate(alternatives)
            ]
            for where, calls in lists:
                clash = sorted({c.name for c in calls} & set(must_not))
                if clash:
                    report(
                        "must_not_call",
                        f"{clash[0]!r} is also expected in {where}; a tool cannot be both",
                    )

        shared = self._shared(get, by_name, report)
        if self.problems.count != before or case_id is None or tools is None:
            return None
        assert isinstance(user_input, str) and expected is not None
        self._remember(tools, by_name)
        return Case(
            id=case_id,
            user_input=user_input,
            source=SourceRef(self.display, line),
            message_history=history,
            available_tools=tools,
            expected_tool_calls=expected,
            expected_no_tool=no_tool is True,
            acceptable_alternatives=tuple(alternatives),
            must_not_call=must_not,
            **shared,
        )

    def _shared(
        self, get: Callable[[str], Any], by_name: _Tools, report: _Report
    ) -> dict[str, Any]:
        """The columns a one-turn and a conversation case read alike, as :class:`Case`'s
        keyword arguments (valid only when nothing was reported)."""
        return {
            "difficulty": self._enum(get("difficulty"), "difficulty", Difficulty, report),
            "order": self._enum(get("order"), "order", OrderMode, report),
            "pass_on": self._enum(get("pass_on"), "pass_on", PassOn, report),
            "tool_responses": self._responses(get("tool_responses"), by_name, report),
            "step_budget": self._step_budget(get("step_budget"), report),
            "tags": self._tags(get("tags"), report),
            **self._texts(get, report),
        }

    def _step_budget(self, value: Any, report: _Report) -> int | None:
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 1 <= value <= MAX_STEP_BUDGET
        ):
            report(
                "step_budget", f"must be a whole number from 1 to {MAX_STEP_BUDGET}, not {value!r}"
            )
            return None
        return value

    def _texts(self, get: Callable[[str], Any], report: _Report) -> dict[str, str | None]:
        texts: dict[str, str | None] = {}
        for key in ("source_trace_id", "notes"):
            value = get(key)
            if value is not None and not isinstance(value, str):
                report(key, f"must be a string, not {json_kind(value)}")
                value = None
            texts[key] = value
        return texts

    def _remember(self, tools: tuple[ToolSpec, ...], by_name: dict[str, ToolSpec] | None) -> None:
        """The dataset's tools by name, merged once per tools file."""
        if tools is not self._last_tools and by_name is not None:
            for t in tools:
                self.tools.setdefault(t.name, t)
            self._last_tools, self._last_by_name = tools, by_name

    def _conversation_case(
        self,
        row: Mapping[str, Any],
        line: int,
        case_id: str | None,
        history: tuple[Mapping[str, Any], ...],
        tools: tuple[ToolSpec, ...] | None,
        by_name: dict[str, ToolSpec] | None,
        report: _Report,
    ) -> Case | None:
        """A case of several user turns (``conversation``): the turns replace
        ``user_input`` and the case's expectations; frozen responses, must-not-call and
        the order mode may be given for the whole case (the default of every turn) and
        per turn."""
        before = self.problems.count
        get = {k: v for k, v in row.items() if v is not None}.get
        for key in _ONE_TURN_ONLY:
            if get(key) is not None:
                report(
                    key,
                    "a conversation case gives it per turn (in `conversation`), not for the "
                    "whole case",
                )
        must_not = self._must_not_call(get("must_not_call"), by_name, report)
        turns = self._turns(get("conversation"), by_name, must_not, report)
        shared = self._shared(get, by_name, report)
        if self.problems.count != before or case_id is None or tools is None:
            return None
        assert turns is not None
        self._remember(tools, by_name)
        return Case(
            id=case_id,
            user_input=turns[0].user,
            source=SourceRef(self.display, line),
            message_history=history,
            available_tools=tools,
            expected_tool_calls=tuple(c for t in turns for c in t.expected_tool_calls),
            expected_no_tool=all(t.expected_no_tool for t in turns),
            must_not_call=must_not,
            conversation=turns,
            **shared,
        )

    def _turns(
        self, value: Any, tools: _Tools, case_must_not: tuple[str, ...], report: _Report
    ) -> tuple[UserTurn, ...] | None:
        if not isinstance(value, list) or not value:
            report(
                "conversation",
                "must be a non-empty array of user turns {user, expected_tool_calls, …}, "
                f"not {json_kind(value)}" + (" (empty)" if value == [] else ""),
            )
            return None
        if len(value) > MAX_CONVERSATION_TURNS:
            report(
                "conversation",
                f"has {len(value):,} user turns; a case has at most {MAX_CONVERSATION_TURNS} "
                "(each turn sends the agent the whole conversation so far, so its cost grows "
                "with the square of the turns): split it into several cases",
            )
            return None
        out: list[UserTurn] = []
        ok = True
        for i, obj in enumerate(value):
            turn = self._turn(obj, f"conversation[{i}]", tools, case_must_not, report)
            if turn is None:
                ok = False
            else:
                out.append(turn)
        return tuple(out) if ok else None

    def _turn(
        self, obj: Any, fld: str, tools: _Tools, case_must_not: tuple[str, ...], report: _Report
    ) -> UserTurn | None:
        if not isinstance(obj, dict):
            report(
                fld,
                "a user turn must be an object {user, expected_tool_calls, …}, not "
                f"{json_kind(obj)}",
            )
            return None
        before = self.problems.count
        for key in obj:
            if key not in _TURN_KEY_SET:
                report(f"{fld}.{key}", f"unknown key{did_you_mean(key, _TURN_KEYS)}")
        get = {k: v for k, v in obj.items() if v is not None}.get
        user = get("user")
        if user is None:
            report(f"{fld}.user", "required: what the user says in this turn")
        elif not isinstance(user, str) or not user.strip():
            report(f"{fld}.user", f"must be a non-empty string, not {user!r}"[:200])
        default_mode = None
        if get("args_match") is not None:
            default_mode = self._args_match({"args_match": get("args_match")}, fld, report)

        def with_mode(calls: Any) -> Any:
            # The turn's args_match is the default of its calls that set none.
            if default_mode is None or not isinstance(calls, list):
                return calls
            out = []
            for c in calls:
                if isinstance(c, list):
                    out.append(with_mode(c))
                elif (
                    isinstance(c, dict) and "args_match" not in c and "required_args_only" not in c
                ):
                    out.append({**c, "args_match": default_mode.value})
                else:
                    out.append(c)
            return out

        no_tool = get("expected_no_tool")
        if no_tool is not None and not isinstance(no_tool, bool):
            report(f"{fld}.expected_no_tool", f"must be true or false, not {no_tool!r}")
            no_tool = None
        raw = get("expected_tool_calls")
        expected = self._calls(with_mode(raw), f"{fld}.expected_tool_calls", tools, report)
        if raw is None and no_tool is None:
            report(
                f"{fld}.expected_tool_calls",
                "required: the calls the agent should make in this turn, [] for none (a "
                "clarifying question, say)",
            )
        elif no_tool is True and isinstance(raw, list) and raw:
            report(
                f"{fld}.expected_no_tool",
                f"is true but expected_tool_calls lists {len(raw)} call(s); keep one of the two",
            )
        elif no_tool is False and raw == []:
            report(
                f"{fld}.expected_no_tool",
                "is false but expected_tool_calls is []: a turn that expects no call says "
                "`expected_tool_calls: []` (or `expected_no_tool: true`)",
            )
        alts = get("alternatives")
        alternatives = self._alternatives(alts, f"{fld}.alternatives", tools, report, with_mode)
        must_not = self._must_not_call(get("must_not_call"), tools, report, f"{fld}.must_not_call")
        for where, calls in [("expected_tool_calls", expected or ())] + [
            (f"alternatives[{i}]", alt) for i, alt in enumerate(alternatives)
        ]:
            clash = sorted({c.name for c in calls} & {*case_must_not, *must_not})
            if clash:
                report(
                    f"{fld}.{where}",
                    f"{clash[0]!r} is on the must-not-call list; a tool cannot be both",
                )
        order = self._enum(get("order"), f"{fld}.order", OrderMode, report)
        responses = self._responses(get("tool_responses"), tools, report, f"{fld}.tool_responses")
        if self.problems.count != before or expected is None or responses is None:
            return None
        assert isinstance(user, str)
        return UserTurn(
            user=user,
            expected_tool_calls=expected,
            expected_no_tool=no_tool is True or (raw == [] and not alternatives),
            acceptable_alternatives=tuple(alternatives),
            order=order,
            tool_responses=responses,
            must_not_call=must_not,
        )

    # ── columns ──

    def _id(self, value: Any, line: int, report: _Report) -> str | None:
        if value is None:
            report("id", "required: a stable, unique case id")
            return None
        if not isinstance(value, str) or not value.strip():
            report("id", f"must be a non-empty string, not {value!r}")
            return None
        if value != value.strip() or _CONTROL.search(value) or len(value) > MAX_ID_LENGTH:
            report(
                "id",
                f"{value[:60]!r}: at most {MAX_ID_LENGTH} characters, no control characters or "
                "surrounding spaces",
            )
            return None
        if self.ids is not None:
            first = self.ids.get(value)
            if first is not None:
                report(
                    "id",
                    f"duplicate id {value!r} (first at line {first}); ids are unique and never "
                    "reused",
                )
                return None
            self.ids[value] = line
        return value

    def _history(self, value: Any, report: _Report) -> tuple[Mapping[str, Any], ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            report("message_history", f"must be an array of chat messages, not {json_kind(value)}")
            return ()
        call_ids: set[str] = set()
        for i, msg in enumerate(value):
            fld = f"message_history[{i}]"
            if not isinstance(msg, dict):
                report(fld, f"a message must be an object with a role, not {json_kind(msg)}")
                continue
            for key in msg:
                if key not in _MESSAGE_KEYS:
                    report(f"{fld}.{key}", f"unknown message key{did_you_mean(key, _MESSAGE_KEYS)}")
            role = msg.get("role")
            if role not in _ROLES:
                hint = did_you_mean(role, _ROLES) if isinstance(role, str) else ""
                report(f"{fld}.role", f"must be one of {', '.join(_ROLES)}, not {role!r}{hint}")
                continue
            content = msg.get("content")
            if content is not None and not isinstance(content, str | list):
                report(
                    f"{fld}.content",
                    "must be a string, an array of content parts or null, not "
                    f"{json_kind(content)}",
                )
            if role == "assistant" and msg.get("tool_calls") is not None:
                calls = msg["tool_calls"]
                if not isinstance(calls, list):
                    report(f"{fld}.tool_calls", f"must be an array, not {json_kind(calls)}")
                    continue
                for j, call in enumerate(calls):
                    cfld = f"{fld}.tool_calls[{j}]"
                    fn = call.get("function") if isinstance(call, dict) else None
                    if (
                        not isinstance(call, dict)
                        or not isinstance(call.get("id"), str)
                        or not isinstance(fn, dict)
                    ):
                        report(
                            cfld,
                            'must be {"id": ..., "type": "function", '
                            '"function": {"name": ..., "arguments": ...}}',
                        )
                        continue
                    if not isinstance(fn.get("name"), str):
                        report(f"{cfld}.function.name", "required: the tool name")
                    if not isinstance(fn.get("arguments"), str | dict):
                        report(f"{cfld}.function.arguments", "must be a JSON string or an object")
                    call_ids.add(call["id"])
            elif role == "tool":
                ref = msg.get("tool_call_id")
                if not isinstance(ref, str):
                    report(
                        f"{fld}.tool_call_id",
                        "required: the id of the assistant tool call this answers",
                    )
                elif ref not in call_ids:
                    report(
                        f"{fld}.tool_call_id",
                        f"{ref!r} answers no earlier assistant tool "
                        f"call{did_you_mean(ref, call_ids)}",
                    )
        return tuple(m for m in value if isinstance(m, dict))

    def _tools(self, value: Any, report: _Report) -> tuple[ToolSpec, ...] | None:
        if value is None:
            report(
                "available_tools", 'required: the tools the model saw (an array, or "@tools.json")'
            )
            return None
        if isinstance(value, str):
            if not value.startswith("@"):
                # A file name written without its `@` is the usual slip: say how to write it.
                hint = (
                    f" (did you mean {'@' + value.strip()!r}? a file is named with @)"
                    if value.strip().lower().endswith(".json")
                    else ""
                )
                report(
                    "available_tools",
                    'must be an array of tools or an "@file.json" reference, not the string '
                    f"{value[:60]!r}{hint}",
                )
                return None
            tf, why = self.resolver.reference(value)
            if tf is None:
                report("available_tools", why or "cannot be read", once=value)
                return None
            self._report_file(tf)
            return tf.tools if not tf.problems else None
        if not isinstance(value, list):
            report(
                "available_tools",
                f'must be an array of tools or an "@file.json" reference, not {json_kind(value)}',
            )
            return None
        specs: list[ToolSpec] = []
        seen: set[str] = set()
        ok = True
        for i, obj in enumerate(value):
            spec, issues = self.resolver.inline(obj)
            for sub, msg in issues:
                report(f"available_tools[{i}]{sub}", msg)
            if spec is None:
                ok = False
                continue
            if spec.name in seen:
                report(f"available_tools[{i}].name", f"duplicate tool {spec.name!r}")
                ok = False
                continue
            seen.add(spec.name)
            specs.append(spec)
        return tuple(specs) if ok else None

    def _report_file(self, tf: ToolFile) -> None:
        if tf.path not in self._reported_files:
            self._reported_files.add(tf.path)
            for p in tf.problems:
                self.problems.add(p)

    def _calls(
        self, value: Any, fld: str, tools: _Tools, report: _Report
    ) -> tuple[ExpectedCall, ...] | None:
        """A call list; an element that is an array is one batch (one assistant turn):
        then every element of the list is a batch, a bare call being a batch of one."""
        if value is None:
            return ()
        if not isinstance(value, list):
            report(fld, f"must be an array of {{name, args}} calls, not {json_kind(value)}")
            return None
        batched = any(isinstance(obj, list) for obj in value)
        out: list[ExpectedCall] = []
        ok = True
        for i, obj in enumerate(value):
            where = f"{fld}[{i}]"
            if not isinstance(obj, list):
                members: list[tuple[str, Any]] = [(where, obj)]
            elif not obj:
                report(
                    where,
                    "an empty batch: a batch lists the calls of one assistant turn, at least "
                    "one (remove it, or write the calls inside)",
                )
                ok = False
                continue
            else:
                members = [(f"{where}[{k}]", m) for k, m in enumerate(obj)]
            for at, member in members:
                if isinstance(member, list):
                    report(
                        at,
                        "a batch inside a batch: a batch is one assistant turn, so batches "
                        "do not nest (write [[a, b], c] for a and b together, then c)",
                    )
                    ok = False
                    continue
                call = self._call(member, at, tools, report)
                if call is None:
                    ok = False
                elif batched:
                    out.append(dataclasses.replace(call, batch=i))
                else:
                    out.append(call)
        return tuple(out) if ok else None

    def _alternatives(
        self,
        value: Any,
        fld: str,
        tools: _Tools,
        report: _Report,
        prepare: Callable[[Any], Any] = lambda calls: calls,
    ) -> list[tuple[ExpectedCall, ...]]:
        """The valid call lists of an array of them (each ``prepare``-d first)."""
        if value is None:
            return []
        if not isinstance(value, list):
            report(fld, f"must be an array of call lists, not {json_kind(value)}")
            return []
        found = (
            self._calls(prepare(alt), f"{fld}[{i}]", tools, report) for i, alt in enumerate(value)
        )
        return [calls for calls in found if calls is not None]

    def _call(self, obj: Any, fld: str, tools: _Tools, report: _Report) -> ExpectedCall | None:
        if not isinstance(obj, dict):
            report(
                fld,
                f"a call must be an object {{name, args, args_match?}}, not {json_kind(obj)}",
            )
            return None
        ok = True
        for key in obj:
            if key not in _CALL_KEY_SET:
                report(f"{fld}.{key}", f"unknown key{did_you_mean(key, _CALL_KEYS)}")
                ok = False
        name = obj.get("name")
        if tools is None or not (isinstance(name, str) and name and name in tools):
            name = self._tool_name(name, f"{fld}.name", tools, report)
        args_fld = f"{fld}.args"
        args = parse_args(obj.get("args", {}), args_fld, report)
        mode = self._args_match(obj, fld, report)
        if mode is None:
            ok = False
        required = obj.get("required", False)
        if not isinstance(required, bool):
            report(f"{fld}.required", f"must be true or false, not {required!r}")
            ok = False
        if name is None or args is None or mode is None or not ok:
            return None
        spec = tools.get(name) if tools is not None else None
        if spec is not None:
            before = self.problems.count
            check_against_schema(args, spec.parameters, name, args_fld, report)
            if self.problems.count != before:
                return None
        return ExpectedCall(name=name, args=args, args_match=mode, required=required is True)

    @staticmethod
    def _args_match(obj: Mapping[str, Any], fld: str, report: _Report) -> ArgsMatch | None:
        """``args_match`` (:class:`ArgsMatch`), or its older spelling ``required_args_only``
        (true = ``subset``, false = ``exact``); not both."""
        if "args_match" not in obj and "required_args_only" not in obj:
            return ArgsMatch.SUBSET  # what the default below gives, without the lookups
        has_new = obj.get("args_match") is not None
        has_old = obj.get("required_args_only") is not None
        if has_new and has_old:
            report(
                f"{fld}.required_args_only",
                "give one of args_match and required_args_only (its older spelling: true is "
                "args_match: subset, false is args_match: exact); keep args_match",
            )
            return None
        if has_new:
            raw = obj["args_match"]
            try:
                return ArgsMatch(raw)
            except ValueError:
                options = [m.value for m in ArgsMatch]
                report(
                    f"{fld}.args_match",
                    f"must be one of {', '.join(options)}, not {raw!r}"
                    f"{did_you_mean(raw, options) if isinstance(raw, str) else ''}",
                )
                return None
        rao = obj.get("required_args_only", True)
        if not isinstance(rao, bool):
            report(f"{fld}.required_args_only", f"must be true or false, not {rao!r}")
            return None
        return ArgsMatch.SUBSET if rao else ArgsMatch.EXACT

    def _tool_name(self, name: Any, fld: str, tools: _Tools, report: _Report) -> str | None:
        if not _named(name, fld, report):
            return None
        if tools is not None and name not in tools:
            report(
                fld,
                f"{name!r} is not among available_tools{did_you_mean(name, tools)}; "
                f"available: {offered_list(tools)}",
            )
            return None
        return name

    def _forbidden_name(self, name: Any, fld: str, tools: _Tools, report: _Report) -> str | None:
        # Not offered: accepted, a look-alike of an offered tool refused (module docstring).
        if not _named(name, fld, report):
            return None
        if tools is None or name in tools:
            return name
        offered = look_alike(name, tools)
        if offered is not None:
            report(
                fld,
                f"{name!r} is not among available_tools (did you mean {offered!r}?); a name "
                "that is not offered is accepted only when it is not a misspelling of one",
            )
            return None
        return name

    def _must_not_call(
        self, value: Any, tools: _Tools, report: _Report, fld: str = "must_not_call"
    ) -> tuple[str, ...]:
        def name(raw: Any, at: str) -> str | None:
            return self._forbidden_name(raw, at, tools, report)

        return _unique(value, fld, "tool names", name, report)

    def _enum(self, value: Any, fld: str, enum: Any, report: _Report) -> Any:
        if value is None:
            return None
        member = _members(enum).get(value) if isinstance(value, str) else None
        if member is not None:
            return member
        choices = [m.value for m in enum]
        if not isinstance(value, str) or value not in choices:
            hint = did_you_mean(value, choices) if isinstance(value, str) else ""
            report(fld, f"must be one of {', '.join(choices)}, not {value!r}{hint}")
            return None
        return enum(value)

    def _responses(
        self, value: Any, tools: _Tools, report: _Report, column: str = "tool_responses"
    ) -> tuple[FrozenResponse, ...] | None:
        if value is None:
            return ()
        if not isinstance(value, list):
            report(
                column,
                f"must be an array of {{name, args?, response | error}}, not {json_kind(value)}",
            )
            return None
        out: list[FrozenResponse] = []
        ok = True
        for i, obj in enumerate(value):
            fld = f"{column}[{i}]"
            if not isinstance(obj, dict):
                report(
                    fld,
                    f"must be an object {{name, args?, response | error}}, not {json_kind(obj)}",
                )
                ok = False
                continue
            bad = False
            for key in obj:
                if key not in _RESPONSE_KEYS:
                    report(f"{fld}.{key}", f"unknown key{did_you_mean(key, _RESPONSE_KEYS)}")
                    bad = True
            name = self._tool_name(obj.get("name"), f"{fld}.name", tools, report)
            args = None
            if obj.get("args") is not None:
                args = parse_args(obj["args"], f"{fld}.args", report)
                bad = bad or args is None
            if "response" in obj and "error" in obj:
                report(
                    fld, "has both `response` and `error`; a frozen response is one or the other"
                )
                bad = True
            elif "response" not in obj and "error" not in obj:
                report(
                    fld,
                    "needs `response` (the result, may be empty) or `error` (delivered as a "
                    "failed call)",
                )
                bad = True
            elif "error" in obj and obj["error"] is None:
                report(
                    f"{fld}.error",
                    "is null; give the error (a message or an object), or use `response`",
                )
                bad = True
            if name is None or bad:
                ok = False
                continue
            out.append(
                FrozenResponse(
                    name=name, args=args, response=obj.get("response"), error=obj.get("error")
                )
            )
        return tuple(out) if ok else None

    def _tags(self, value: Any, report: _Report) -> tuple[str, ...]:
        def tag(raw: Any, at: str) -> str | None:
            if isinstance(raw, str) and TAG.match(raw):
                return raw
            report(at, f"must be 1-64 characters without spaces, commas or '=', not {raw!r}")
            return None

        return _unique(value, "tags", "strings", tag, report)


def _unique(
    value: Any, fld: str, what: str, check: Callable[[Any, str], str | None], report: _Report
) -> tuple[str, ...]:
    """An array of names, each ``check``-ed (which reports a bad one) and listed once."""
    if value is None:
        return ()
    if not isinstance(value, list):
        report(fld, f"must be an array of {what}, not {json_kind(value)}")
        return ()
    out: list[str] = []
    for i, raw in enumerate(value):
        name = check(raw, f"{fld}[{i}]")
        if name is not None and name in out:
            report(f"{fld}[{i}]", f"{name!r} is listed twice")
        elif name is not None:
            out.append(name)
    return tuple(out)


@functools.cache
def _members(kind: type[enum.Enum]) -> dict[str, enum.Enum]:
    """An enum's members by value (the values a dataset writes)."""
    return {m.value: m for m in kind}


def offered_list(tools: Mapping[str, ToolSpec], limit: int = 20) -> str:
    """The tools a case offers, as a message lists them (at most ``limit`` names)."""
    names = sorted(tools)
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (shown + more) if names else "none"


def _named(name: Any, fld: str, report: _Report) -> TypeGuard[str]:
    """Whether ``name`` is a non-empty string (else reported at ``fld``)."""
    if isinstance(name, str) and name:
        return True
    report(fld, f"required: a tool name, not {name!r}")
    return False
