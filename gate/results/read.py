"""Reading results.json: bytes in, a validated :class:`~gate.results.schema.Results` out,
older layouts migrated first (one function per layout: :func:`from_schema1`)."""

from __future__ import annotations

import contextlib
import os
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import orjson
from pydantic import ValidationError

from gate import jsonio
from gate import model as m
from gate.errors import Problem, ResultsFileError
from gate.model import HardFailureKind, Tallies, ToolCall, ToolTally
from gate.results.schema import (
    READS,
    SCHEMA_VERSION,
    STOCK_REASONS,
    CaseResult,
    HardFailureResult,
    Results,
    SampleResult,
    wrong_arity,
)


def read_results(path: Path, *, display: str | None = None) -> Results:
    """Read and validate a results.json (ours, a baseline, a shard's; schema 1 or 2)."""
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _unreadable(name, exc) from None
    return _results_of(raw, name)


def _unreadable(name: str, exc: OSError) -> ResultsFileError:
    return ResultsFileError(Problem(name, None, None, f"cannot read: {exc.strerror or exc}"))


def _results_of(raw: bytes, name: str) -> Results:
    try:
        data = jsonio.loads_strict(raw, max_depth=128)
    except jsonio.JsonInputError as exc:
        raise ResultsFileError(Problem(name, None, None, _not_results(raw) or str(exc))) from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(data, dict) and version not in (None, *READS):
        raise ResultsFileError(
            Problem(
                name,
                None,
                "schema_version",
                f"{version!r} is not supported (this ToolGate reads "
                f"{' and '.join(map(str, READS))})",
            )
        )
    if isinstance(data, dict) and (version == 1 or "schema_version" not in data):
        data = from_schema1(data)
    try:
        table = data.get("stock_reasons") if isinstance(data, dict) else None
        results = Results.model_validate(
            data, context={"stock_reasons": table if isinstance(table, dict) else {}}
        )
        results.stock_reasons = dict(STOCK_REASONS)  # rewritten with this release's table
        return results
    except ValidationError as exc:
        raise ResultsFileError(_problems(exc, name)) from None


def _problems(exc: ValidationError, name: str, at: str = "") -> list[Problem]:
    return [
        Problem(name, None, at + ".".join(str(p) for p in e["loc"]) or None, e["msg"])
        for e in exc.errors(include_url=False)[:20]
    ]


# ─── reading a file this release wrote, its samples left in the file ─────────

_CASES_OPEN = b'  "cases": [\n'
_CASES_CLOSE = b"  ]"
_SAMPLES_OPEN = b'      "samples": [\n'
_SAMPLES_CLOSE = b"      ]"
_RECORD_PAD = b"        "


class _RecordFile:
    """An open results.json its sample records are read from, a record at a time
    (``os.pread``: nothing of the file is mapped or held)."""

    def __init__(self, path: Path, stock: Mapping[str, str]) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        self.context = {"stock_reasons": dict(stock)}

    def record(self, offset: int, size: int) -> SampleResult:
        return SampleResult.model_validate_json(
            os.pread(self.fd, size, offset), context=self.context
        )

    def __copy__(self) -> _RecordFile:
        return self  # one descriptor, closed once

    def __deepcopy__(self, memo: dict[int, Any]) -> _RecordFile:
        return self

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)


class SampleView(Sequence[SampleResult]):
    """A case's samples as :func:`open_results` gives them: read from the file when asked,
    never all in memory (a record is validated again on each read)."""

    __slots__ = ("_file", "_spans")

    def __init__(self, file: _RecordFile, spans: array[int]) -> None:
        self._file = file
        self._spans = spans  # offset, size, offset, size, …

    def __len__(self) -> int:
        return len(self._spans) // 2

    @overload
    def __getitem__(self, i: int) -> SampleResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[SampleResult]: ...
    def __getitem__(self, i: int | slice) -> SampleResult | list[SampleResult]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        return self._file.record(self._spans[2 * i], self._spans[2 * i + 1])

    def __iter__(self) -> Iterator[SampleResult]:
        spans, record = self._spans, self._file.record
        for i in range(0, len(spans), 2):
            yield record(spans[i], spans[i + 1])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SampleView({len(self)} samples)"


def open_results(path: Path, *, display: str | None = None) -> Results:
    """The results of a results.json this release wrote (:mod:`gate.results.write`'s
    layout: each sample record on its own line), with each case's samples a
    :class:`SampleView` over the file: every record is validated here, one at a time, and
    read again when a reporter asks for it. What the file holds but its samples is read
    as :func:`read_results` reads it. A file in another layout is read whole."""
    name = display or str(path)
    try:
        skeleton, spans = _skeleton(path)
    except OSError as exc:
        raise _unreadable(name, exc) from None
    if spans is None:
        return read_results(path, display=display)
    results = _skeleton_results(skeleton, name)
    if len(spans) != len(results.cases):
        return read_results(path, display=display)
    table = results.stock_reasons
    file = _RecordFile(path, table)
    k = len(results.metric_names)
    for i, (case, case_spans) in enumerate(zip(results.cases, spans, strict=True)):
        if not case_spans:
            continue
        view = SampleView(file, case_spans)
        for j in range(len(view)):
            try:
                s = view[j]
            except ValidationError as exc:
                raise ResultsFileError(_problems(exc, name, f"cases.{i}.samples.{j}.")) from None
            if len(s.scores) != k:
                raise ResultsFileError(
                    Problem(
                        name,
                        None,
                        f"cases.{i}.samples.{j}",
                        f"cases[{i}] ({case.id!r}) sample {s.sample}: its scores must have "
                        f"one entry per metric_names ({k})",
                    )
                )
        case.samples = view  # type: ignore[assignment]
    return results


def _skeleton_results(skeleton: bytes, name: str) -> Results:
    """:func:`_results_of` of a file without its samples, its cases validated one at a
    time (each case's parsed form let go as it is validated) and equal numbers shared:
    the cases' score and std arrays repeat a few values many times."""
    try:
        data = jsonio.loads_strict(skeleton, max_depth=128)
    except jsonio.JsonInputError:
        return _results_of(skeleton, name)  # names the problem
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        return _results_of(skeleton, name)
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list):
        return _results_of(skeleton, name)
    data["cases"] = []
    results = _results_of(orjson.dumps(data), name)
    shared: dict[float, float] = {}
    k = len(results.metric_names)
    cases: list[CaseResult] = []
    for i, raw in enumerate(raw_cases):
        raw_cases[i] = None
        if isinstance(raw, dict):
            for key in ("scores", "std"):
                values = raw.get(key)
                if isinstance(values, list):
                    raw[key] = [shared.setdefault(v, v) if type(v) is float else v for v in values]
        try:
            case = CaseResult.model_validate(raw)
        except ValidationError as exc:
            raise ResultsFileError(_problems(exc, name, f"cases.{i}.")) from None
        wrong = wrong_arity(i, case, k)
        if wrong is not None:
            raise ResultsFileError(Problem(name, None, f"cases.{i}", wrong))
        cases.append(case)
    results.cases = cases
    return results


def _skeleton(path: Path) -> tuple[bytes, list[array[int]] | None]:
    """The file with every case's sample records left out (``"samples": []``) and, per
    case, where its records are (offset and size of each); ``None`` when the file is not
    in the written layout."""
    parts: list[bytes] = []
    spans: list[array[int]] = []
    state = 0  # 0: before the cases, 1: in them, 2: in a case's samples, 3: after
    offset = 0
    with path.open("rb") as f:
        for line in f:
            start, offset = offset, offset + len(line)
            if state == 0:
                parts.append(line)
                if line == _CASES_OPEN:
                    state = 1
            elif state == 1:
                if line.startswith(_SAMPLES_OPEN[:-2]):
                    if line == _SAMPLES_OPEN:
                        parts.append(b'      "samples": []')
                        spans.append(array("q"))
                        state = 2
                        continue
                    spans.append(array("q"))  # "samples": [] on one line
                elif line.startswith(_CASES_CLOSE) and not line.startswith(b"   "):
                    state = 3
                parts.append(line)
            elif state == 2:
                if line.startswith(_SAMPLES_CLOSE) and not line.startswith(_RECORD_PAD):
                    parts.append(line[len(_SAMPLES_CLOSE) :])
                    state = 1
                    continue
                if not line.startswith(_RECORD_PAD + b"{"):
                    return b"", None
                body = line[len(_RECORD_PAD) :].rstrip(b"\n")
                if body.endswith(b","):
                    body = body[:-1]
                spans[-1].extend((start + len(_RECORD_PAD), len(body)))
            else:
                parts.append(line)
    if state != 3:
        return b"", None
    return b"".join(parts), spans


def _not_results(raw: bytes) -> str | None:
    """What a file that is not a results.json is, when it is recognisably another kind."""
    first = raw.split(b"\n", 1)[0]
    try:
        obj = jsonio.loads_strict(first)
    except jsonio.JsonInputError:
        return None
    if isinstance(obj, dict) and "case_id" in obj and "turns" in obj:
        return (
            "this is a runs file (one run per line, as toolgate run writes runs.jsonl), not a "
            "results.json: score it first (toolgate score --runs FILE), or give the "
            "results.json that toolgate check or score wrote"
        )
    if isinstance(obj, dict) and ("messages" in obj or "expected_tool_calls" in obj):
        return "this is a dataset (one case per line), not a results.json"
    return None


def from_schema1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 document (the previous release's) in schema 2's shape: scores by name
    become arrays over ``metric_names`` (:data:`SCHEMA1_METRICS`' order, then any other
    name, sorted), and each sample keeps the reasons a schema-2 record keeps
    (:func:`schema1_reasons`). The evidence stays as the file has it."""
    out = dict(data)
    out["schema_version"] = SCHEMA_VERSION
    cases = data.get("cases")
    if not isinstance(cases, list):
        return out
    seen: set[str] = set()
    for c in cases:
        if isinstance(c, dict):
            for key in ("scores", "std"):
                if isinstance(c.get(key), dict):
                    seen.update(c[key])
            for s in c.get("samples") or []:
                if isinstance(s, dict) and isinstance(s.get("scores"), dict):
                    seen.update(s["scores"])
    names = [n for n in SCHEMA1_METRICS if n in seen] + sorted(seen.difference(SCHEMA1_METRICS))
    out["metric_names"] = names
    new_cases = []
    for c in cases:
        if not isinstance(c, dict):
            new_cases.append(c)
            continue
        c = dict(c)
        for key in ("scores", "std"):
            if isinstance(c.get(key), dict):
                c[key] = [c[key].get(n) for n in names]
        samples = []
        for s in c.get("samples") or []:
            if isinstance(s, dict) and isinstance(s.get("scores"), dict):
                s = {
                    **s,
                    "scores": [s["scores"].get(n) for n in names],
                    "reasons": schema1_reasons(s),
                }
            samples.append(s)
        if "samples" in c:
            c["samples"] = samples
        new_cases.append(c)
    out["cases"] = new_cases
    return out


def tallies_of(t: Mapping[str, Any]) -> Tallies:
    """Tallies read back from a sample record (tolerant of the shapes of schema 1)."""
    per_tool = t.get("per_tool") or {}
    confusion = t.get("confusion") or []
    malformed = t.get("malformed") or {}
    if not isinstance(malformed, Mapping):  # a list of classes, in older files
        malformed = Counter(str(kind) for kind in malformed)
    return Tallies(
        calls=int(t.get("calls", 0) or 0),
        calls_on_no_tool=int(t.get("calls_on_no_tool", 0) or 0),
        per_tool={str(n): ToolTally(int(e), int(mm), int(c)) for n, (e, mm, c) in per_tool.items()},
        confusion=tuple((str(e), None if a is None else str(a)) for e, a in confusion),
        malformed={str(k): int(v) for k, v in malformed.items()},
        unrecorded=int(t.get("unrecorded", 0) or 0),
    )


def hard_failure_of(h: HardFailureResult) -> m.HardFailure:
    """A hard failure as results.json holds it, typed again (a kind an earlier release
    named otherwise read as the nearest one)."""
    call = h.call
    args = call.get("arguments")
    raw = call.get("raw_arguments")
    try:
        kind = HardFailureKind(h.kind)
    except ValueError:
        kind = HardFailureKind.MUST_NOT_CALL if "must" in h.kind else HardFailureKind.ARG_SCOPE
    return m.HardFailure(
        kind=kind,
        case_id=h.case_id,
        sample=h.sample,
        call=ToolCall(
            name=str(call.get("name", "?")),
            arguments=args if isinstance(args, dict) else None,
            id=call.get("id") if isinstance(call.get("id"), str) else None,
            raw_arguments=raw if isinstance(raw, str) else None,
            parse_ok=bool(call.get("parse_ok", isinstance(args, dict))),
        ),
        message=h.message,
        line=h.line,
    )


SCHEMA1_METRICS: tuple[str, ...] = (
    "tool_selection_precision", "tool_selection_recall", "tool_selection_f1", "tool_set_iou",
    "call_accuracy", "partial_credit_accuracy", "schema_validity", "parse_failure_rate",
    "required_args_match", "order_score", "trajectory_match", "name_sequence_similarity",
    "batching", "unnecessary_call_rate", "no_tool_respected", "must_not_call_violations",
    "step_budget_exceeded", "duplicate_calls", "repeated_failing_calls",
    "required_step_missing", "tool_error_rate", "malformed_call_rate",
    "execution_failure_rate", "recovery_rate", "composite_clean_rate",
    "risk_weighted_precision", "write_precision", "write_recall", "extra_writes",
    "missing_writes", "free_text_similarity", "agent_error_rate", "case_passed",
    "tool_calls", "steps", "prompt_tokens", "completion_tokens", "total_tokens", "cost",
)  # fmt: skip
"""The metrics as the previous release ordered them (``metric_names`` of a migrated file)."""

_SCHEMA1_AT_ZERO = frozenset({
    "parse_failure_rate", "unnecessary_call_rate", "must_not_call_violations",
    "step_budget_exceeded", "duplicate_calls", "repeated_failing_calls",
    "required_step_missing", "tool_error_rate", "malformed_call_rate",
    "execution_failure_rate", "extra_writes", "missing_writes", "agent_error_rate",
})  # fmt: skip
"""The previous release's metrics whose best value is 0 (the others' is 1)."""
_SCHEMA1_COST = frozenset({
    "tool_calls", "steps", "prompt_tokens", "completion_tokens", "total_tokens", "cost"
})  # fmt: skip
"""The previous release's cost metrics: their figure is their reason."""


def schema1_reasons(sample: Mapping[str, Any]) -> Any:
    """A schema-1 sample's reasons (every metric's) cut to those a schema-2 record keeps:
    of the metrics that missed their best value or do not apply, of any metric the
    previous release did not have, and of failed checks."""
    reasons = sample.get("reasons")
    scores = sample.get("scores")
    if not isinstance(reasons, dict) or not isinstance(scores, dict):
        return reasons
    checks = sample.get("failed_checks")
    checks = checks if isinstance(checks, list) else []
    out: dict[str, Any] = {}
    for name, why in reasons.items():
        if name in checks or name not in SCHEMA1_METRICS:
            out[name] = why
        elif name not in _SCHEMA1_COST:
            best = 0.0 if name in _SCHEMA1_AT_ZERO else 1.0
            if scores.get(name) != best:
                out[name] = why
    return out
