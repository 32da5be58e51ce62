"""Writing results.json: typed values in, canonical bytes out.

**Schema 2 (lean).** Per sample: its scores always, its ``failed_checks`` when there are
some; the reasons it was given (``gate.pipeline.records`` keeps those of the metrics that
missed their best value or do not apply) — a reason that is one of the file's
``stock_reasons`` (:data:`~gate.results.schema.STOCK_REASONS`) named in the sample's
``reasons_stock`` instead of written out; the evidence only for a sample that did not
pass; tallies without their zero entries. Per-sample and per-case ``scores`` (and per-case
``std``) are arrays in the order of the top-level ``metric_names``.

**Layout.** Keys sorted and two-space indentation, except that an object or array of
scalars nested two or more levels deep (a metric's statistics, a tool's counts, a case's
scores) is written on one line, and each sample record on one line (its keys sorted, the
evidence keeping the calls' argument order as the dataset and the model wrote them). The same
inputs give the same bytes; everything outside ``timing`` is deterministic (wall times,
latencies and dates live there: reproducibility tests compare files without it).

A value of :mod:`gate.model` is written as it is declared, but for the fields whose
``metadata`` says ``written: False`` (the verdict's notices, written with the run's).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson
from pydantic import BaseModel

from gate import model as m
from gate.model import ActualCall, ArgDiff, Evidence, Tallies
from gate.model.usage import InvalidUsage, usage_of
from gate.results.read import SampleView
from gate.results.schema import (
    SCHEMA_VERSION,
    STOCK_REASONS,
    CaseResult,
    HardFailureResult,
    MissingInfo,
    PolicyInfo,
    Results,
    RunError,
    SampleResult,
)


class SampleRecords(Protocol):
    """The results.json records of a run's samples, by case (dataset index in scope),
    each case's in the reduction's order: regular samples by number, then confirmation
    samples."""

    def of_case(self, case: int) -> Sequence[bytes]: ...


class ListRecords:
    """:class:`SampleRecords` already in the reduction's order, per case."""

    def __init__(self, by_case: Sequence[Sequence[bytes]]) -> None:
        self._by_case = by_case

    def of_case(self, case: int) -> Sequence[bytes]:
        return self._by_case[case]


@dataclasses.dataclass(frozen=True, slots=True)
class PolicyFields:
    """What the tests against the base history add to results.json
    (:meth:`gate.pipeline.sequential.Tests.fields`): the top-level ``policy`` and, per case id,
    its ``hash``, ``setup``, ``history`` and ``test``."""

    info: PolicyInfo
    cases: Mapping[str, Mapping[str, Any]]
    hash_version: int = m.CASE_HASH_VERSION
    """What the cases' hashes cover (``Results.case_hash_version``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Decisions:
    """What a run's results.json holds beside its statistics and sample records: what
    was decided about it (:func:`assemble`, :func:`write_scored`)."""

    verdict: m.Verdict | None = None
    comparison: m.Comparison | None = None
    judge: Mapping[str, Any] | None = None
    notices: Sequence[str] = ()
    timing: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    mcp_tool_drift: Sequence[m.ToolDrift] = ()
    policy: PolicyFields | None = None
    validity: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """:func:`validity_fields`, as :func:`gate.pipeline.publish.write_checked` adds them."""


# ─── per-sample records ──────────────────────────────────────────────────────


def _lean_tallies(t: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in t.items() if v}


@m.value
class RecordTemplate:
    """A sample record but its ``sample``, its ``usage`` and the scores taken from its
    usage (:data:`gate.scorers.usage.USAGE_METRICS`): the samples of one scored run
    (identical runs are scored once) differ in nothing else, so the record is rendered
    once and each sample only fills in those (:meth:`render`)."""

    head: bytes
    """``{`` and the keys before ``sample`` (error, evidence, extra, failed_checks,
    first_failing_turn, passed, reasons), each with its comma."""
    tail: bytes
    """``scores``, ``tallies`` and a conversation's ``turns`` (the keys between ``sample``
    and ``usage``)."""
    scores: tuple[float | None, ...] = ()
    """The scores, when :attr:`usage_at` names some to fill in per sample."""
    usage_at: tuple[int, ...] = ()
    """Where the usage metrics stand in ``scores`` (empty: nothing to fill in)."""
    rest: bytes = b""
    """The keys after ``scores`` in ``tail``, with their leading comma."""

    def render(
        self,
        sample: int,
        usage: Mapping[str, int | float] | None,
        usage_scores: Sequence[float | None] | None = None,
    ) -> bytes:
        """The record of sample ``sample``; ``usage_scores``: its usage metrics (in
        :data:`~gate.scorers.usage.USAGE_METRICS` order) when they differ from the
        scored run's."""
        # (orjson sorts keys by their UTF-8 bytes: the order of code points, as sorted() does)
        usage_part = (
            b""
            if usage is None
            else b',"usage_error":' + orjson.dumps(usage.reason)
            if type(usage) is InvalidUsage
            else b',"usage":'
            + orjson.dumps(usage if type(usage) is dict else dict(usage), option=_SORTED)
        )
        tail = self.tail
        if (
            usage_scores is not None
            and self.usage_at
            and tuple(self.scores[i] for i in self.usage_at) != tuple(usage_scores)
        ):
            scores = list(self.scores)
            for at, value in zip(self.usage_at, usage_scores, strict=True):
                scores[at] = value
            tail = b'"scores":' + orjson.dumps(scores, option=_RECORD_OPTIONS) + self.rest
        return b"".join(
            (self.head, b'"sample":', str(sample).encode(), b",", tail, usage_part, b"}")
        )


def record_parts(
    *,
    passed: bool,
    scores: list[float | None],
    failed_checks: Sequence[str],
    reasons: Mapping[str, str],
    evidence: Mapping[str, Any] | None,
    tallies: Mapping[str, Any],
    error: str | None,
    extra: bool,
    turns: Sequence[Mapping[str, Any]] | None = None,
    usage_at: tuple[int, ...] = (),
) -> RecordTemplate:
    """One sample record (compact, its keys in sorted order, its defaults left out) as a
    template. ``turns``: a conversation's user turns (``TurnResult`` fields); ``usage_at``:
    where the usage metrics stand in ``scores``, to be filled in per sample."""
    head: dict[str, Any] = {}
    if error is not None:
        head["error"] = error
    if evidence and not passed:
        head["evidence"] = evidence
    if extra:
        head["extra"] = True
    if failed_checks:
        head["failed_checks"] = list(failed_checks)
    if turns is not None:
        head["first_failing_turn"] = next(
            (i for i, t in enumerate(turns, start=1) if not t["passed"]), None
        )
    head["passed"] = passed
    own: dict[str, str] = {}
    stock: list[str] = []
    stock_of = STOCK_REASONS.get
    for k, v in reasons.items():  # one pass: this runs for every scored run
        if stock_of(k) == v:
            stock.append(k)
        else:
            own[k] = v
    if own:
        head["reasons"] = dict(sorted(own.items()))
    if stock:
        head["reasons_stock"] = sorted(stock)
    rest: dict[str, Any] = {"tallies": dict(sorted(tallies.items()))}
    if turns is not None:
        rest["turns"] = [dict(sorted(t.items())) for t in turns]
        rest["turns_passed"] = sum(1 for t in turns if t["passed"])
    rest_bytes = b"," + orjson.dumps(rest, default=_default, option=_RECORD_OPTIONS)[1:-1]
    return RecordTemplate(
        head=orjson.dumps(head, default=_default, option=_RECORD_OPTIONS)[:-1] + b",",
        tail=b'"scores":'
        + orjson.dumps(scores, default=_default, option=_RECORD_OPTIONS)
        + rest_bytes,
        scores=tuple(scores) if usage_at else (),
        usage_at=usage_at,
        rest=rest_bytes if usage_at else b"",
    )


_RECORD_OPTIONS = orjson.OPT_NON_STR_KEYS
_SORTED = orjson.OPT_SORT_KEYS


Keep = Callable[[Mapping[str, str], Mapping[str, float | None], Sequence[str]], Mapping[str, str]]
"""Which of a sample's reasons its record keeps, given its reasons, scores by name and
failed checks (``gate.pipeline.records.kept_reasons``); without one, every reason."""


def result_record(
    s: SampleResult,
    *,
    names: Sequence[str],
    write: Sequence[str] | None = None,
    keep: Keep | None = None,
) -> bytes:
    """A :class:`SampleResult`'s record, written as a scored sample's is (``names`` are
    its results' ``metric_names``; ``write``, the names to write its scores over, when
    they differ)."""

    def over(values: Sequence[float | None]) -> list[float | None]:
        if write is None:
            return list(values)
        by = dict(zip(names, values, strict=True))
        return [by.get(n) for n in write]

    turns = (
        [
            {
                "called": list(t.called),
                "failed_checks": list(t.failed_checks),
                "passed": t.passed,
                "scores": over(t.scores),
                **({} if t.user is None else {"user": t.user}),
                **({} if t.ran else {"ran": False}),
            }
            for t in s.turns
        ]
        if s.turns is not None
        else None
    )
    return record_parts(
        passed=s.passed,
        scores=over(s.scores),
        failed_checks=s.failed_checks,
        reasons=s.reasons
        if keep is None
        else keep(s.reasons, dict(zip(names, s.scores, strict=True)), s.failed_checks),
        evidence=s.evidence,
        tallies=_lean_tallies(s.tallies),
        error=s.error,
        extra=s.extra,
        turns=turns,
    ).render(s.sample, usage_of(s.usage, s.usage_error))


# ─── typed values → results.json ─────────────────────────────────────────────


def _actual_json(a: ActualCall) -> dict[str, Any]:
    out = a.call.to_json()
    out["turn"] = a.turn
    return out


def _arg_diff_json(d: ArgDiff) -> dict[str, Any]:
    diffs = []
    for p in d.diffs:
        entry: dict[str, Any] = {"argument": p.argument, "expected": p.expected, "why": p.why}
        if p.present:
            entry["actual"] = p.actual
        diffs.append(entry)
    return {
        "expected_index": d.expected_index,
        "actual_index": d.actual_index,
        "tool": d.tool,
        "diffs": diffs,
    }


def expected_json(calls: Sequence[m.ExpectedCall]) -> list[dict[str, Any]]:
    """An expectation list as a sample's evidence lists it (docs/scoring.md): flat, each
    call in the dataset's syntax, and in a list written with batches each with its
    ``batch`` (the reports read it: no order is expected inside a batch)."""
    if not m.is_batched(calls):
        return [e.to_json() for e in calls]
    out = []
    for e in calls:
        call = e.to_json()
        call["batch"] = e.batch
        out.append(call)
    return out


def evidence_json(ev: Evidence, *, expected: Any = None) -> dict[str, Any]:
    """A sample's :class:`~gate.model.Evidence` as results.json holds it (the keys are
    documented in ``docs/scoring.md``); ``expected``, the JSON of ``ev.expected`` when the
    caller has it already (:func:`_expected_fragment`)."""
    out: dict[str, Any] = {
        "expected": expected_json(ev.expected) if expected is None else expected,
        "actual": [_actual_json(a) for a in ev.actual],
        "alternative": ev.alternative,
        "matched": [[i, j] for i, j in ev.matched],
        "missing": [{"index": m.index, "name": m.name, "why": m.why.value} for m in ev.missing],
        "extra": [{"index": x.index, "name": x.name} for x in ev.extra],
        "arg_diffs": [_arg_diff_json(d) for d in ev.arg_diffs],
        "malformed": [
            {"index": m.index, "name": m.name, "kind": m.kind.value, "detail": m.detail}
            for m in ev.malformed
        ],
        "violations": [
            {"rule": v.rule.value, "index": v.index, "name": v.name, "message": v.message}
            for v in ev.violations
        ],
        "summary": ev.summary,
    }
    if ev.unrecorded:
        out["unrecorded"] = list(ev.unrecorded)
    if ev.agent_error is not None:
        out["agent_error"] = ev.agent_error
    if ev.batching:
        out["batching"] = [
            {
                "kind": b.kind.value,
                "expected": list(b.expected),
                "names": list(b.names),
                "turns": list(b.turns),
            }
            for b in ev.batching
        ]
    if ev.turn is not None:
        out["turn"] = {"index": ev.turn.index, "of": ev.turn.of, "user": ev.turn.user}
    if ev.effects is not None:
        fx = ev.effects
        out["effects"] = {
            "made": list(fx.made),
            "failed": list(fx.failed),
            "matched": [[i, j] for i, j in fx.matched],
            "missing": [{"index": m.index, "name": m.name, "why": m.why.value} for m in fx.missing],
            "extra": [{"index": x.index, "name": x.name} for x in fx.extra],
            "arg_diffs": [_arg_diff_json(d) for d in fx.arg_diffs],
            "order": fx.order,
        }
        if fx.repeated:
            out["effects"]["repeated"] = list(fx.repeated)
    return out


def tallies_json(t: Tallies) -> dict[str, Any]:
    """A sample's :class:`~gate.model.Tallies` as results.json holds them (whole; a
    sample record leaves out the zero entries)."""
    return {
        "calls": t.calls,
        "calls_on_no_tool": t.calls_on_no_tool,
        "per_tool": {n: [x.expected, x.matched, x.called] for n, x in t.per_tool.items()},
        "confusion": [[e, a] for e, a in t.confusion],
        "malformed": dict(t.malformed),
        "unrecorded": t.unrecorded,
    }


def _hard_json(h: m.HardFailure) -> HardFailureResult:
    return HardFailureResult(
        kind=str(h.kind),
        case_id=h.case_id,
        sample=h.sample,
        call=h.call.to_json(),
        message=h.message,
        line=h.line,
    )


def _outline(stats: m.SuiteStats, d: Decisions) -> dict[str, Any]:
    """Every field of the results but the cases."""
    h = stats.header
    verdict = d.verdict
    return {
        "schema_version": SCHEMA_VERSION,
        "stock_reasons": dict(STOCK_REASONS),
        "case_hash_version": m.CASE_HASH_VERSION,
        **{f.name: getattr(h, f.name) for f in dataclasses.fields(h)},  # by the same names
        "samples": stats.samples,
        "metric_names": list(stats.metric_names),
        "metrics": dict(stats.metrics),
        "slices": dict(stats.slices),
        "per_tool": dict(stats.per_tool),
        "confusion": {k: dict(v) for k, v in stats.confusion.items()},
        "malformed": dict(stats.malformed),
        "hard_failures": [_hard_json(h) for h in stats.hard_failures],
        "usage": dict(stats.usage),
        "pass_hat": list(stats.pass_hat),
        "verdict": verdict,
        "comparison": d.comparison,
        "mcp_tool_drift": list(d.mcp_tool_drift),
        "advisor": stats.advisor,
        "confirm": stats.confirm,
        "policy": None if d.policy is None else d.policy.info,
        "judge": None if d.judge is None else dict(d.judge),
        "notices": [*stats.notices, *(verdict.notices if verdict else ()), *d.notices],
        "timing": {**stats.timing, **d.timing},
        **({} if d.policy is None else {"case_hash_version": d.policy.hash_version}),
        **d.validity,
    }


def validity_fields(
    verdict: m.Verdict | None, missing: m.MissingSamples, invalid: m.RunInvalid | None
) -> dict[str, Any]:
    """The top-level fields a run's missing samples and, for a run that is not valid, its
    error set (``missing``, ``run_error``, the verdict "error"); empty for a valid run
    without missing samples."""
    update: dict[str, Any] = {}
    if missing.count:
        update["missing"] = MissingInfo(
            count=missing.count,
            planned=missing.planned,
            per_case=dict(missing.per_case),
            by_reason=dict(missing.by_reason),
            first_errors=list(missing.first_errors),
            not_run=dict(missing.not_run),
        )
    if invalid is not None:
        error = RunError(
            reason=invalid.reason,
            first_errors=list(invalid.first_errors),
            headline=invalid.headline or None,
            hint=invalid.hint,
        )
        update["run_error"] = error
        if verdict is not None:
            # Nothing was measured: no gate, variance rule or regression was evaluated on
            # it, and none is named as missed.
            update["verdict"] = m.Verdict(
                passed=False,
                summary=f"ERROR — {error.first_line}",
                reasons=(error.first_line,),
                hard_failures=verdict.hard_failures,
            )
    return update


def _cases_fields(stats: m.SuiteStats, d: Decisions) -> Iterator[dict[str, Any]]:
    """A case's fields but its samples, as results.json holds them, case by case (from
    the reduction's arrays when it can), with what the policy adds to each."""
    names, cases = stats.metric_names, stats.cases
    rows = getattr(cases, "score_rows", None)
    fields = (
        (_fields(c, [c.scores.get(n) for n in names], [c.std.get(n) for n in names]) for c in cases)
        if rows is None
        else (_fields(*row) for row in rows(names))
    )
    extras = d.policy.cases if d.policy is not None else {}
    for f in fields:
        yield {**f, **extras.get(f["id"], {})} if extras else f


def _fields(c: m.CaseStats, scores: list[float | None], std: list[float | None]) -> dict[str, Any]:
    return {
        "id": c.id,
        "line": c.line,
        "difficulty": c.difficulty,
        "tags": list(c.tags),
        "expected_no_tool": c.expected_no_tool,
        "must_not_call": list(c.must_not_call),
        "tools": list(c.tools),
        "passed": c.passed,
        "pass_rate": c.pass_rate,
        "flaky": c.flaky,
        "scores": scores,
        "std": std,
        "extra_samples": c.extra_samples,
        "hash": None,
        "setup": None,
        "history": [],
        "test": None,
    }


def assemble(
    stats: m.SuiteStats, records: SampleRecords, decisions: Decisions | None = None
) -> Results:
    """The :class:`Results` of a run: its statistics, its sample records (read back from
    the bytes results.json gets), and what was decided about it."""
    d = decisions or Decisions()
    cases = [
        # (the records name this release's STOCK_REASONS, the validator's default)
        CaseResult(**f, samples=[SampleResult.model_validate_json(r) for r in records.of_case(i)])
        for i, f in enumerate(_cases_fields(stats, d))
    ]
    return Results(**_outline(stats, d), cases=cases)


# ─── writing ──────────────────────────────────────────────────────────────────


_DUMP_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
_CASE_KEYS = tuple(sorted((*CaseResult.model_fields,)))
_SCALARS = (str, int, float, bool, type(None))


_WRITTEN: dict[type, tuple[str, ...]] = {}


def _fields_of(value: Any) -> dict[str, Any]:
    """The fields of a :mod:`gate.model` value that results.json holds."""
    cls = type(value)
    names = _WRITTEN.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("written", True))
        _WRITTEN[cls] = names
    return {name: getattr(value, name) for name in names}


def _default(obj: Any) -> Any:
    # orjson calls this for what it cannot serialise itself. A model's ``__dict__`` holds
    # exactly its fields (extra keys are forbidden, private attributes live elsewhere).
    if isinstance(obj, BaseModel):
        return obj.__dict__
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _fields_of(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, SampleView):
        return list(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    if isinstance(obj, enum.Enum):
        return obj.value
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def _compact(value: Any) -> str:
    return orjson.dumps(value, default=_default, option=_DUMP_OPTIONS).decode()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, tuple | SampleView):
        return list(value)
    if isinstance(value, BaseModel | set | frozenset | enum.Enum) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        return _default(value)  # a value of gate.model held as it is (declared once, there)
    return value


def _layout(value: Any, depth: int, pad: str) -> str:
    """The layout of the module docstring for one value at ``depth`` (the root is 0): an
    object or array of scalars nested two or more levels deep on one line, everything
    else indented by two spaces, keys sorted."""
    value = _plain(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        if depth >= 2 and all(isinstance(_plain(v), _SCALARS) for v in value.values()):
            return _compact(value)
        inner = pad + "  "
        items = sorted(value.items(), key=_key_of)
        body = ",\n".join(
            f"{inner}{_compact(str(k))}: {_layout(v, depth + 1, inner)}" for k, v in items
        )
        return "{\n" + body + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if depth >= 2 and all(isinstance(_plain(v), _SCALARS) for v in value):
            return _compact(value)
        inner = pad + "  "
        body = ",\n".join(f"{inner}{_layout(v, depth + 1, inner)}" for v in value)
        return "[\n" + body + "\n" + pad + "]"
    return _compact(value)


def _key_of(item: tuple[Any, Any]) -> str:
    return str(item[0])


def dumps_results(results: Any, *, indent: bool = True) -> bytes:
    """Canonical bytes of any part of a results file (the layout of the module docstring;
    compact with ``indent=False``); a whole :class:`Results` is :func:`results_bytes`."""
    if isinstance(results, Results):
        results = _present(results.__dict__)
    if not indent:
        return orjson.dumps(results, default=_default, option=_DUMP_OPTIONS)
    return (_layout(results, 0, "") + "\n").encode()


def _case_bytes(fields: Mapping[str, Any], samples: Sequence[bytes], lead: bytes = b"") -> bytes:
    """One case: a field a line (its samples a record a line), at the case's depth, after
    ``lead``; built in bytes and joined once (the sample records are never decoded)."""
    parts = [lead, b"{\n"]
    for key, head in _CASE_HEADS:
        parts.append(head)
        if key == "samples":
            if samples:
                parts += (b"[\n        ", b",\n        ".join(samples), b"\n      ]")
            else:
                parts.append(b"[]")
        else:
            # A case's other fields are scalars or arrays of scalars: one line each (what
            # _layout gives at this depth, without walking them).
            parts.append(orjson.dumps(fields[key], default=_default, option=_DUMP_OPTIONS))
        parts.append(b",\n")
    parts[-1] = b"\n    }"
    return b"".join(parts)


_CASE_HEADS = tuple((key, f'      "{key}": '.encode()) for key in _CASE_KEYS)
"""Each case key and the start of its line."""


_ABSENT_WHEN_NONE = frozenset({"missing", "run_error"})


def _present(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level fields a results file holds: those of :data:`_ABSENT_WHEN_NONE` only
    when set (a valid run without missing samples has neither)."""
    return {k: v for k, v in fields.items() if not (k in _ABSENT_WHEN_NONE and v is None)}


def _document(
    outline: Mapping[str, Any], cases: Iterable[tuple[Mapping[str, Any], Sequence[bytes]]]
) -> Iterator[bytes]:
    """The bytes of a results file in pieces, a case at a time (the text is never whole).
    The keys of :data:`_ABSENT_WHEN_NONE` are left out when None (a valid run has none)."""
    outline = _present(outline)
    keys = sorted([*outline, "cases"])
    parts = ["{\n"]
    for i, key in enumerate(keys):
        end = ",\n" if i < len(keys) - 1 else "\n"
        if key != "cases":
            parts.append(f"  {_compact(key)}: {_layout(outline[key], 1, '  ')}{end}")
            continue
        yield "".join(parts).encode()
        parts = []
        first = True
        for case_fields, samples in cases:
            head = b'  "cases": [\n    ' if first else b",\n    "
            yield _case_bytes(case_fields, samples, head)
            first = False
        yield (b'  "cases": []' if first else b"\n  ]") + end.encode()
    yield ("".join(parts) + "}\n").encode()


def results_bytes(results: Results, *, keep: Keep | None = None) -> bytes:
    """The whole file :func:`write_results` writes."""
    return b"".join(_results_chunks(results, keep))


def _results_chunks(results: Results, keep: Keep | None = None) -> Iterator[bytes]:
    names = results.metric_names
    outline = dict(results.__dict__)
    cases = outline.pop("cases")
    return _document(
        outline,
        (
            (c.__dict__, [result_record(s, names=names, keep=keep) for s in c.samples])
            for c in cases
        ),
    )


def write_results(path: Path, results: Results, *, keep: Keep | None = None) -> None:
    """Write results.json (module docstring's layout), case by case, so the file's text
    is never in memory whole (``keep``: which reasons a sample record keeps)."""
    _write(path, _results_chunks(results, keep))


def write_scored(
    path: Path, stats: m.SuiteStats, records: SampleRecords, decisions: Decisions | None = None
) -> None:
    """Write the results.json of a run from its statistics and its sample records, without
    building a :class:`Results`: the same bytes as ``write_results(path, assemble(…))``.
    The records are copied into the file a case at a time, never parsed."""
    d = decisions or Decisions()
    cases = ((f, records.of_case(i)) for i, f in enumerate(_cases_fields(stats, d)))
    _write(path, _document(_outline(stats, d), cases))


def _write(path: Path, chunks: Iterable[bytes]) -> None:
    from gate.outdir import write_atomic

    write_atomic(path, chunks)


def to_jsonable(results: Results) -> dict[str, Any]:
    """A plain-dict copy of ``results`` (what results.json holds)."""
    data: dict[str, Any] = orjson.loads(results_bytes(results))
    return data


def decided(
    results: Results, verdict: m.Verdict, comparison: m.Comparison | None = None
) -> Results:
    """``results`` with a verdict (and the comparison it was decided on), the verdict's
    notices added to its own."""
    return results.model_copy(
        update={
            "verdict": verdict,
            "comparison": comparison,
            "notices": [*results.notices, *verdict.notices],
        }
    )


def with_comparison(results: Results, comparison: m.Comparison) -> Results:
    """``results`` with ``comparison`` in place of the one it had (``toolgate report
    --baseline``)."""
    return results.model_copy(update={"comparison": comparison})


# ─── reading ──────────────────────────────────────────────────────────────────
