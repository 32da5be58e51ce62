"""runs.jsonl: what the agent did, one line per case × sample (docs/agent-protocol.md).

A line::

    {"case_id": "refund-017", "sample": 0,
     "turns": [{"calls": [{"id": "c1", "name": "lookup_order",
                           "arguments": {"order_id": "ord_7281"},
                           "raw_arguments": "{\\"order_id\\": \\"ord_7281\\"}",
                           "parse_ok": true}],
                "tool_results": [{"id": "c1", "content": {...}, "is_error": false}],
                "content": null}],
     "final": "…", "error": null, "latency_ms": 812.5, "usage": {"prompt_tokens": 310}}

A conversation's run marks each user turn with ``"user"`` (docs/agent-protocol.md).

A failed run also records ``"error_class"``: ``"agent"`` or ``"infrastructure"``
(:class:`gate.errors.ErrorClass`), decided by the kind its ``error`` starts with; a line
without it reads the same (older files), one that contradicts its kind is refused.

A tool result with ``"unrecorded": true`` is the runner's "no frozen response" error
(results of older files, without the field, are recognised by the key their content
carried, ``toolgate_unrecorded``). A plain ``{"name": …, "arguments": {…}}`` call is
accepted as is (``parse_ok`` true). A call whose ``arguments`` is a string is decoded here
(``raw_arguments`` keeps the string); if it is not a JSON object, the call keeps
``parse_ok: false`` and ``arguments: null`` — a parse failure is data to score, never an
input error. Anything else that does not fit (a
required field missing included) is an input error naming the line and the field.

The writer appends and flushes one line at a time so that an interrupted run loses
nothing already recorded (``--resume`` reads it back).
"""

from __future__ import annotations

import contextlib
import json
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from gate import jsonio
from gate.errors import FieldError, OutputError, Problem, RunsFileError, error_class_of
from gate.model import Case, Run, Shard, ToolCall, ToolResult, Turn
from gate.model.usage import InvalidUsage, usage_of

T = TypeVar("T")

_RUN_KEYS = frozenset(
    {
        "case_id",
        "sample",
        "turns",
        "final",
        "error",
        "error_class",
        "latency_ms",
        "usage",
        "usage_error",
        "meta",
    }
)
_TURN_KEYS = frozenset({"calls", "tool_results", "content", "user"})
_CALL_KEYS = frozenset({"id", "name", "arguments", "raw_arguments", "parse_ok", "type", "index"})
_RESULT_KEYS = frozenset({"id", "content", "is_error", "name", "unrecorded"})

UNRECORDED_KEY = "toolgate_unrecorded"
"""Marks the content of the error result a replay gives for a call with no frozen response.
Before tool results had an ``unrecorded`` field it was the only mark: such files still read."""


RUN_MAX_DEPTH = jsonio.MAX_DEPTH
"""Deepest nesting of a runs.jsonl line: the reader refuses a deeper line, so the writer
never writes one (:func:`bounded_record`)."""
ARGUMENTS_LEVEL = 5
"""How deep a call's arguments sit in a line: line › turns › turn › calls › call."""
ARGUMENTS_MAX_DEPTH = RUN_MAX_DEPTH - ARGUMENTS_LEVEL
"""Deepest arguments a call may carry when it is recorded (59 levels): deeper ones, an
object or a string alike, are a parse failure that keeps their JSON text
(:func:`decode_arguments`) — the call still counts, a must-not-call one included."""


def decode_arguments(
    raw: Any, *, depth_checked: bool = False
) -> tuple[dict[str, Any] | None, str | None, bool]:
    """(arguments, raw_arguments, parse_ok) from what a model sent as arguments.

    An object is taken as is; a string is decoded strictly and must give an object;
    anything else (or an undecodable string) is a parse failure. Arguments nested deeper
    than :data:`ARGUMENTS_MAX_DEPTH` are a parse failure too, their JSON text kept
    (``depth_checked``: an object read from a runs line, which the line's own bound
    already holds).
    """
    if isinstance(raw, dict):
        if not depth_checked and jsonio.deeper_than(raw, ARGUMENTS_MAX_DEPTH):
            return None, json_text(raw), False
        return raw, None, True
    if isinstance(raw, str):
        try:
            value = jsonio.loads_strict(raw, max_depth=ARGUMENTS_MAX_DEPTH)
        except jsonio.JsonInputError:
            return None, raw, False
        if isinstance(value, dict):
            return value, raw, True
        return None, raw, False
    return None, None, False


def json_text(value: Any) -> str:
    """``value``'s JSON text, however deep (orjson writes at most 255 levels; beyond the
    interpreter's own limit, a placeholder that says so)."""
    try:
        return jsonio.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (RecursionError, TypeError, ValueError):
        return "(nested too deep to write as text)"


def _not_object(obj: Any, keys: frozenset[str]) -> FieldError:
    """Why ``obj`` is not an object of ``keys`` only (relative to it)."""
    if not isinstance(obj, dict):
        return FieldError("", "must be an object")
    return FieldError("." + sorted(obj.keys() - keys)[0], "unknown key")


def call_from_json(obj: Any) -> ToolCall:
    if not (isinstance(obj, dict) and obj.keys() <= _CALL_KEYS):
        raise _not_object(obj, _CALL_KEYS)
    # checked inline, not through _get: this runs once per call of every line
    name, cid, raw_field = obj.get("name"), obj.get("id"), obj.get("raw_arguments")
    parse_ok = obj.get("parse_ok", True)
    if not isinstance(name, str):
        raise FieldError(".name", "must be a string")
    if cid is not None and not isinstance(cid, str):
        raise FieldError(".id", "must be a string or null")
    if raw_field is not None and not isinstance(raw_field, str):
        raise FieldError(".raw_arguments", "must be a string or null")
    if not isinstance(parse_ok, bool):
        raise FieldError(".parse_ok", "must be true or false")
    args = obj.get("arguments")
    if parse_ok is False:
        return ToolCall(name, None, cid, raw_field, False)
    if args is None and raw_field is not None:
        args = raw_field
    if args is None and "arguments" not in obj:
        args = {}
    decoded, raw, ok = decode_arguments(args, depth_checked=True)
    return ToolCall(name, decoded, cid, raw_field or raw, ok)


def _result_from_json(obj: Any) -> ToolResult:
    if not (isinstance(obj, dict) and obj.keys() <= _RESULT_KEYS):
        raise _not_object(obj, _RESULT_KEYS)
    is_error, cid = obj.get("is_error", False), obj.get("id")
    content, unrecorded = obj.get("content"), obj.get("unrecorded")
    if not isinstance(is_error, bool):
        raise FieldError(".is_error", "must be true or false")
    if cid is not None and not isinstance(cid, str):
        raise FieldError(".id", "must be a string or null")
    if unrecorded is not None and not isinstance(unrecorded, bool):
        raise FieldError(".unrecorded", "must be true or false")
    if unrecorded is None:
        unrecorded = is_error and isinstance(content, dict) and content.get(UNRECORDED_KEY) is True
    return ToolResult(cid, content, is_error, unrecorded)


def _turn_from_json(obj: Any) -> Turn:
    if not (isinstance(obj, dict) and obj.keys() <= _TURN_KEYS):
        raise _not_object(obj, _TURN_KEYS)
    calls = obj.get("calls") or []
    results = obj.get("tool_results") or []
    if not isinstance(calls, list):
        raise FieldError(".calls", "must be an array")
    if not isinstance(results, list):
        raise FieldError(".tool_results", "must be an array")
    content, user = obj.get("content"), obj.get("user")
    if content is not None and not isinstance(content, str):
        raise FieldError(".content", "must be a string or null")
    if user is not None and not isinstance(user, str):
        raise FieldError(".user", "must be a string or null (the user turn it answers)")
    try:  # a comprehension each: this runs for every turn of every line
        return Turn(
            tuple([call_from_json(c) for c in calls]),
            tuple([_result_from_json(r) for r in results]),
            content,
            user,
        )
    except FieldError:  # raised again where it is, with the item's index
        _each(calls, call_from_json, ".calls")
        _each(results, _result_from_json, ".tool_results")
        raise


def _each(items: list[Any], convert: Callable[[Any], T], field: str) -> tuple[T, ...]:
    """Every item converted; a :class:`FieldError` about an item is re-rooted at
    ``field[i]`` (the index is looked for only when something is wrong)."""
    try:
        return tuple([convert(item) for item in items])
    except FieldError as bad:
        for i, item in enumerate(items):
            try:
                convert(item)
            except FieldError:
                raise FieldError(f"{field}[{i}]{bad.field}", bad.message) from None
        raise  # pragma: no cover - the item that raised raises again


def run_from_json(obj: Any, turns: tuple[Turn, ...] | None = None, *, short: bool = False) -> Run:
    """One decoded runs.jsonl record → :class:`Run`; raises
    :class:`~gate.errors.FieldError` with the field.

    ``turns``, when given, are the converted turns of a record whose ``turns`` value is
    equal to this one's (so they convert without error to the same): every other field
    is still checked, in the same order, and the turns are not converted again.
    ``short``: the line was shorter than :data:`SHORT_LINE`, so within the bounds."""
    if not isinstance(obj, dict):
        raise FieldError("", "each line must be a JSON object")
    if not obj.keys() <= _RUN_KEYS:
        raise FieldError(sorted(obj.keys() - _RUN_KEYS)[0], "unknown key")
    case_id = obj.get("case_id")
    if not isinstance(case_id, str) or not case_id:
        raise FieldError("case_id", "must be a non-empty string")
    # `sample` and `turns` are required: a converter that forgot one must not pass every
    # no-tool case as "sample 0, no calls" (`turns: []` records an agent that did nothing).
    if "sample" not in obj:
        raise FieldError("sample", "required (the sample number, 0 for the first)")
    sample = obj["sample"]
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise FieldError("sample", "must be an integer >= 0")
    if "turns" not in obj:
        raise FieldError("turns", "required (`[]` for an agent that made no call)")
    raw_turns = obj["turns"]
    if not isinstance(raw_turns, list):
        raise FieldError("turns", "must be an array")
    error = obj.get("error")
    if error is not None and not isinstance(error, str):
        raise FieldError("error", "must be a string or null")
    cut = None if turns is not None or short else _over_bounds(raw_turns)
    if cut is not None:
        raw_turns, why = cut
    recorded_class = obj.get("error_class")
    if recorded_class is not None and recorded_class != error_class_of(error):
        expected = error_class_of(error)
        raise FieldError(
            "error_class",
            f"must be {expected.value!r} for this error (its kind decides it)"
            if expected is not None
            else "must be null when there is no error",
        )
    final = obj.get("final")
    if final is not None and not isinstance(final, str):
        raise FieldError("final", "must be a string or null")
    latency = obj.get("latency_ms")
    if latency is not None and (not isinstance(latency, int | float) or isinstance(latency, bool)):
        raise FieldError("latency_ms", "must be a number or null")
    usage = obj.get("usage")
    if usage is not None and (not isinstance(usage, dict) or not _counts_only(usage)):
        raise FieldError("usage", "must be an object of token counts (numbers)")
    usage_error, meta = obj.get("usage_error"), obj.get("meta")
    if usage_error is not None and not isinstance(usage_error, str):
        raise FieldError("usage_error", "must be a string or null")
    if meta is not None and not isinstance(meta, dict):
        raise FieldError("meta", "must be an object or null")
    if cut is not None and error is None:
        error = why  # beyond what a sample may record: failed, as a live agent would be
    return Run(
        case_id,
        sample,
        turns if turns is not None else _each(raw_turns, _turn_from_json, "turns"),
        final,
        error,
        float(latency) if latency is not None else None,
        # checked as a report is (gate.model.usage): an invalid one is recorded, never refused
        usage_of(usage, usage_error) if usage is not None or usage_error is not None else None,
        meta,
    )


MAX_RUN_TURNS = 10_000
"""Most turns one run (one sample) may record; a line with more keeps the first ones."""
MAX_RUN_CALLS = 10_000
"""Most tool calls one run may record, over all its turns; a line with more keeps the
first ones. A live agent is bounded well below (its step budget, and
:data:`gate.replay.session.MAX_BATCH_CALLS` calls a turn): this bound is the reader's,
so that a runs file from elsewhere costs time and memory in proportion to what is kept."""
SHORT_LINE = 3 * max(MAX_RUN_TURNS, MAX_RUN_CALLS)
"""A line shorter than this (bytes or characters) is within both bounds: each turn and
each call takes at least three (``{}`` and a comma), so it is not counted."""


def _over_bounds(raw_turns: list[Any]) -> tuple[list[Any], str] | None:
    """``raw_turns`` cut to :data:`MAX_RUN_TURNS` turns and :data:`MAX_RUN_CALLS` calls,
    and why (a ``step_budget`` error), when it holds more; else ``None``. Only the kept
    part is converted afterwards."""
    calls = 0
    for i, turn in enumerate(raw_turns):
        if i >= MAX_RUN_TURNS:
            return raw_turns[:i], (
                f"step_budget: the run records {len(raw_turns):,} turns; a sample records at "
                f"most {MAX_RUN_TURNS:,} (the first are kept)"
            )
        got = turn.get("calls") if isinstance(turn, dict) else None
        if not isinstance(got, list):
            continue
        if calls + len(got) > MAX_RUN_CALLS:
            total = calls + sum(
                len(t["calls"])
                for t in raw_turns[i:]
                if isinstance(t, dict) and isinstance(t.get("calls"), list)
            )
            keep = MAX_RUN_CALLS - calls
            head = {**turn, "calls": got[:keep]}
            results = turn.get("tool_results")
            if isinstance(results, list):
                head["tool_results"] = results[:keep]
            return [*raw_turns[:i], head], (
                f"step_budget: the run records {total:,} tool calls; a sample records at most "
                f"{MAX_RUN_CALLS:,} (the first are kept)"
            )
        calls += len(got)
    return None


def _counts_only(usage: dict[str, Any]) -> bool:
    for v in usage.values():
        if type(v) is not int and (not isinstance(v, int | float) or isinstance(v, bool)):
            return False
    return True


def parse_run_line(line: bytes | str, *, file: str, lineno: int) -> Run:
    """Decode and convert one line; any problem is a :class:`RunsFileError` naming it."""
    obj = decode_run_line(line, file=file, lineno=lineno)
    return convert_run(obj, file=file, lineno=lineno, short=len(line) < SHORT_LINE)


def decode_run_line(line: bytes | str, *, file: str, lineno: int) -> Any:
    """The first half of :func:`parse_run_line`: the strict JSON decode of one line."""
    try:
        return jsonio.loads_strict(line, max_depth=RUN_MAX_DEPTH)
    except jsonio.JsonInputError as exc:
        message = str(exc)
        if lineno == 1 and bytes(line if isinstance(line, bytes) else line.encode()).strip() in (
            b"{",
            b"[",
        ):
            # A pretty-printed JSON document, not one run per line: most often a
            # results.json given where runs.jsonl is expected.
            message = (
                "this looks like a JSON document spread over several lines (a results.json?), "
                "not a runs file: a runs file (runs.jsonl, written by toolgate run or check) "
                "has one run per line"
            )
        raise RunsFileError(Problem(file, lineno, None, message)) from None


def convert_run(
    obj: Any,
    *,
    file: str,
    lineno: int,
    turns: tuple[Turn, ...] | None = None,
    short: bool = False,
) -> Run:
    """The second half of :func:`parse_run_line` (``turns``, ``short``: see
    :func:`run_from_json`)."""
    try:
        return run_from_json(obj, turns, short=short)
    except FieldError as bad:
        raise RunsFileError(Problem(file, lineno, bad.field or None, bad.message)) from None


def open_runs(path: Path, display: str) -> IO[bytes]:
    """``path`` opened for reading (a :class:`RunsFileError` naming ``display`` when it
    cannot be)."""
    try:
        return path.open("rb")
    except OSError as exc:
        raise RunsFileError(
            Problem(display, None, None, f"cannot read: {exc.strerror or exc}")
        ) from None


def iter_runs(path: Path, *, display: str | None = None) -> Iterator[tuple[int, Run]]:
    """(line number, run) for every non-blank line; stops at the first bad line."""
    name = display or str(path)
    with open_runs(path, name) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            yield lineno, parse_run_line(line, file=name, lineno=lineno)


def read_runs(path: Path, *, display: str | None = None) -> list[tuple[int, Run]]:
    return list(iter_runs(path, display=display))


def run_to_json(run: Run) -> dict[str, Any]:
    """:class:`Run` → the runs.jsonl record (the inverse of :func:`run_from_json`)."""
    out: dict[str, Any] = {
        "case_id": run.case_id,
        "sample": run.sample,
        "turns": [_turn_to_json(t) for t in run.turns],
        "final": run.final,
        "error": run.error,
        "latency_ms": run.latency_ms,
        "usage": None,
    }
    # The reader's check (gate.model.usage), so that what is written reads back the same.
    usage = usage_of(run.usage) if run.usage is not None else None
    if isinstance(usage, InvalidUsage):
        out["usage_error"] = usage.reason
    elif usage is not None:
        out["usage"] = dict(usage)
    if run.error_class is not None:
        out["error_class"] = run.error_class.value
    if run.meta is not None:
        out["meta"] = dict(run.meta)
    return out


def _turn_to_json(t: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "calls": [c.to_json() for c in t.calls],
        "tool_results": [_result_to_json(r) for r in t.tool_results],
        "content": t.content,
    }
    if t.user is not None:  # a conversation's user turn starts here (one-turn runs: never)
        out["user"] = t.user
    return out


def _result_to_json(r: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"id": r.id, "content": r.content, "is_error": r.is_error}
    if r.unrecorded:
        out["unrecorded"] = True
    return out


class RunsWriter(contextlib.AbstractContextManager["RunsWriter"]):
    """Appends runs one line at a time, flushed, so a killed process loses nothing.

    ``redact`` (e.g. :meth:`gate.report.redact.Redactor.redact`) is applied to every
    string of every record — keys and values, arguments, text, errors and the stderr tails
    they carry — before it is written: runs.jsonl is uploaded as an artifact, and an agent
    may print its own keys."""

    def __init__(
        self, path: Path, *, append: bool = False, redact: Callable[[str], str] | None = None
    ):
        from gate.outdir import ensure_dir

        ensure_dir(path.parent)
        self.path = path
        self._redact = redact
        try:
            self._fh: IO[bytes] = path.open("ab" if append else "wb")
        except OSError as exc:
            raise _cannot_write(path, exc) from None

    def write(self, run: Run | Mapping[str, Any]) -> None:
        self.write_line(self.encode(run))

    def encode(self, run: Run | Mapping[str, Any]) -> bytes:
        """The line :meth:`write` would write (redacted, within :data:`RUN_MAX_DEPTH`:
        :func:`bounded_record`); thread safe, so callers can encode outside whatever
        lock orders their writes."""
        record = run_to_json(run) if isinstance(run, Run) else dict(run)
        try:
            line = jsonio.dumps_line(record)
        except orjson.JSONEncodeError:  # nesting orjson will not write (~255 levels)
            line = b""
        if not line or (
            line.count(b"[") + line.count(b"{") > RUN_MAX_DEPTH
            and jsonio.deeper_than(record, RUN_MAX_DEPTH)
        ):
            record = bounded_record(record)
            line = jsonio.dumps_line(record)
        if self._redact is not None:
            # A redactor that can vouch for the whole line (Redactor.is_clean) spares the
            # walk over every string of the record, the usual case.
            is_clean = getattr(self._redact, "is_clean", None)
            if not (callable(is_clean) and is_clean(line.decode("utf-8"))):
                line = jsonio.dumps_line(_redact_strings(record, self._redact))
        return line

    def write_line(self, line: bytes) -> None:
        """Append one line from :meth:`encode`, flushed (a failure — a full disk — is a
        located :class:`~gate.errors.OutputError`: it stops the run)."""
        try:
            self._fh.write(line)
            self._fh.flush()
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a full disk was reported by write_line
            self._fh.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cannot_write(path: Path, exc: OSError) -> OutputError:
    why = "a folder has its name" if isinstance(exc, IsADirectoryError) else exc.strerror or exc
    return OutputError(Problem(str(path), None, None, f"cannot write: {why}"))


def bounded_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` (a runs line's) within :data:`RUN_MAX_DEPTH`, so that the reader never
    refuses what the writer wrote: a call's arguments deeper than
    :data:`ARGUMENTS_MAX_DEPTH` become a parse failure keeping their JSON text (as
    :func:`decode_arguments` records them); a tool result's content as deep, or a
    ``meta`` value nested past the line's bound, is kept as its JSON text."""
    out = dict(record)
    turns = []
    for turn in record.get("turns") or ():
        t = dict(turn)
        calls = []
        for call in t.get("calls") or ():
            args = call.get("arguments")
            if isinstance(args, dict | list) and jsonio.deeper_than(args, ARGUMENTS_MAX_DEPTH):
                raw = call.get("raw_arguments")
                call = {
                    **call,
                    "arguments": None,
                    "raw_arguments": raw if isinstance(raw, str) else json_text(args),
                    "parse_ok": False,
                }
            calls.append(call)
        t["calls"] = calls
        results = []
        for result in t.get("tool_results") or ():
            content = result.get("content")
            if jsonio.deeper_than(content, ARGUMENTS_MAX_DEPTH):
                result = {**result, "content": json_text(content)}
            results.append(result)
        t["tool_results"] = results
        turns.append(t)
    out["turns"] = turns
    meta = record.get("meta")
    if isinstance(meta, Mapping):
        out["meta"] = {
            k: json_text(v) if jsonio.deeper_than(v, RUN_MAX_DEPTH - 2) else v
            for k, v in meta.items()
        }
    return out


def _redact_strings(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with ``redact`` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {
            (redact(k) if isinstance(k, str) else k): _redact_strings(v, redact)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact_strings(v, redact) for v in value]
    return value


# ─── coverage: the runs against the dataset (checked here, and only here) ──────

MAX_PROBLEMS = 50
"""Coverage problems listed before giving up (one pass reports many, not all)."""
_BITS = 4096
"""Sample numbers below this are tracked in a per-case bit set; larger ones in a dict."""


class Coverage:
    """Checks that the runs of a file cover exactly the dataset's cases (of the shard),
    each (case, sample) once and every case with the same number of samples — each problem
    naming the runs file's line (a case without runs names its dataset line). A case that
    silently vanished would raise the pass rate; a duplicated sample would count twice.

    Feed it every line in file order with :meth:`add`; :meth:`finish` raises every problem
    found (a :class:`~gate.errors.RunsFileError`). The score stage's readers, serial and
    parallel, both report their lines here."""

    def __init__(
        self,
        cases: Sequence[Case],
        *,
        runs_display: str,
        dataset_display: str,
        shard: Shard | None = None,
        equal_samples: bool = True,
    ) -> None:
        self.display = runs_display
        self.dataset_display = dataset_display
        self.shard = shard
        self.equal_samples = equal_samples
        self.index: dict[str, int] = {c.id: i for i, c in enumerate(cases)}
        self.ids = [c.id for c in cases]
        self.lines = [c.source.line for c in cases]
        self.wanted = [shard is None or shard.holds(c.id) for c in cases]
        self._bits = [0] * len(cases)
        self._big: dict[tuple[int, int], int] = {}
        # Every accepted run's line, case and sample (to name a duplicate's first line):
        # machine integers, 24 bytes a run (Python ints in lists took 88).
        self._rows_line = array("q")
        self._rows_case = array("q")
        self._rows_sample = array("q")
        self.problems: list[Problem] = []

    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def case_index(self, case_id: str) -> int:
        """The dataset index of a case id of the shard (``-1``: unknown or another shard)."""
        i = self.index.get(case_id, -1)
        return i if i >= 0 and self.wanted[i] else -1

    def add(self, lineno: int, case_id: str, sample: int) -> int:
        """Record one run; its case's dataset index when it is to be scored (a known case
        of the shard, this sample seen for the first time), else ``-1``."""
        i = self.index.get(case_id, -1)
        if i < 0:
            self._problem(lineno, "case_id", f"{case_id!r} is not a case of {self.dataset_display}")
            return -1
        return self.add_index(lineno, i, sample)

    def add_index(self, lineno: int, i: int, sample: int) -> int:
        """:meth:`add` for a run whose case is the dataset's case ``i``."""
        if not self.wanted[i]:
            case_id = self.ids[i]
            self._problem(
                lineno,
                "case_id",
                f"case {case_id!r} is not in shard {self.shard} "
                "(score each shard's runs with its own --shard)",
            )
            return -1
        if sample < _BITS:
            bit = 1 << sample
            seen = self._bits[i]
            if seen & bit:
                self._duplicate(lineno, i, sample)
                return -1
            self._bits[i] = seen | bit
        else:
            first = self._big.get((i, sample))
            if first is not None:
                self._duplicate(lineno, i, sample, first)
                return -1
            self._big[(i, sample)] = lineno
        self._rows_line.append(lineno)
        self._rows_case.append(i)
        self._rows_sample.append(sample)
        return i

    def _duplicate(self, lineno: int, i: int, sample: int, first: int | None = None) -> None:
        if first is None:
            rows = zip(self._rows_line, self._rows_case, self._rows_sample, strict=True)
            first = next(line for line, c, s in rows if c == i and s == sample)
        self._problem(
            lineno,
            "sample",
            f"case {self.ids[i]!r} sample {sample} is recorded twice (first on line {first})",
        )

    def _problem(self, lineno: int | None, field: str, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(self.display, lineno, field, message))

    def samples_of(self, i: int) -> int:
        """How many distinct samples case ``i`` has so far."""
        n = self._bits[i].bit_count()
        if self._big:
            n += sum(1 for c, _ in self._big if c == i)
        return n

    def finish(self) -> None:
        """Raise every problem found: the lines already reported, then the cases of the
        dataset (of the shard) without any run, then cases with another number of samples
        than the others."""
        counts: dict[int, list[str]] = {}
        for i, cid in enumerate(self.ids):
            if not self.wanted[i]:
                continue
            n = self.samples_of(i)
            if n == 0:
                where = f" (line {self.lines[i]} of {self.dataset_display})"
                self._problem(None, "case_id", f"case {cid!r}{where} has no run in this file")
            else:
                counts.setdefault(n, []).append(cid)
        if self.equal_samples and len(counts) > 1:
            usual = max(counts, key=lambda k: (len(counts[k]), k))
            for n, ids in sorted(counts.items()):
                if n != usual:
                    shown = ", ".join(ids[:5]) + (
                        f" and {len(ids) - 5} more" if len(ids) > 5 else ""
                    )
                    self._problem(
                        None,
                        "sample",
                        f"{len(ids)} case(s) have {n} samples, the others {usual}: {shown}",
                    )
        if self.problems:
            raise RunsFileError(
                self.problems,
                hint="Every case of the dataset must have its runs, each (case, sample) once: "
                "re-run `toolgate run` (with --resume to fill the gaps).",
            )


# ─── the runs file, opened once ───────────────────────────────────────────────


class RunsIndex(contextlib.AbstractContextManager["RunsIndex"]):
    """A runs file opened once and shared by every stage that reads it: the score stage
    (which records where each run's line is), the confirmation stage, the judge and the
    notice of calls without a frozen response. Each line is parsed once, by the score stage
    (which hands on what the later stages need); the confirmation stage copies lines through
    this object (from memory for a file read whole, else by offset), never by opening the
    file again. Use it as a context manager (the file is closed on exit)."""

    def __init__(self, path: Path, *, display: str | None = None) -> None:
        self.path = path
        self.display = display or str(path)
        self._fh = open_runs(path, self.display)
        self.size = os.fstat(self._fh.fileno()).st_size
        self._data: bytes | None = None
        self.rows: RunRows | None = None
        """Where each scored run is (set by the score stage)."""

    @property
    def fileno(self) -> int:
        return self._fh.fileno()

    def data(self) -> bytes:
        """The whole file (read on first use, then kept)."""
        if self._data is None:
            self._data = self.pread(0, self.size)
        return self._data

    def pread(self, start: int, length: int) -> bytes:
        """``length`` bytes from ``start`` (from memory when the file was read whole)."""
        if self._data is not None:
            return self._data[start : start + length]
        return read_at(self.fileno, start, length, display=self.display)

    def lines(self, rows: Iterable[int]) -> Iterator[bytes]:
        """The lines of the scored runs ``rows``, as they are in the file (read by offset
        or from the bytes the index holds; never parsed again)."""
        if self.rows is None:
            raise RuntimeError("the runs were not scored yet")  # a pipeline bug
        r = self.rows
        for k in rows:
            yield self.pread(r.start[k], r.length[k])

    def close(self) -> None:
        self._fh.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_at(fd: int, start: int, length: int, *, display: str) -> bytes:
    """``length`` bytes at ``start`` of an open file (a short read means it shrank)."""
    parts: list[bytes] = []
    while length > 0:
        try:
            chunk = os.pread(fd, min(length, 1 << 26), start)
        except OSError as exc:
            raise RunsFileError(
                Problem(display, None, None, f"cannot read: {exc.strerror or exc}")
            ) from None
        if not chunk:
            raise RunsFileError(Problem(display, None, None, "the file shrank while it was read"))
        parts.append(chunk)
        start += len(chunk)
        length -= len(chunk)
    return b"".join(parts)


@dataclass(slots=True)
class RunRows:
    """Where the scored runs of a file are, in file order: line number, byte offset and
    length of each line, its case's dataset index and its sample (the replay adapter
    keeps the first three)."""

    line: array[int] = field(default_factory=lambda: array("q"))
    start: array[int] = field(default_factory=lambda: array("q"))
    length: array[int] = field(default_factory=lambda: array("q"))
    case: array[int] = field(default_factory=lambda: array("q"))
    sample: array[int] = field(default_factory=lambda: array("q"))

    def extend(self, other: RunRows) -> None:
        for column in fields(self):
            getattr(self, column.name).extend(getattr(other, column.name))

    def __len__(self) -> int:
        return len(self.line)
