"""The sample scores of a run as columns: what the reduction reads.

A :class:`RowsBuilder` takes scored samples one by one — from the scorers, or from the
sample records of a results file (``toolgate merge``) — and :meth:`RowsBuilder.build`
gives a :class:`SampleRows`: one numpy row per sample (its case, sample number, whether it
is a confirmation sample, whether it passed, every metric value with NaN for n/a, the
calls it made) plus what is pooled over samples (per-tool counts, confusion pairs,
malformed classes, usage, hard failures). Rows can come in any order and in several
batches (one per worker chunk); :func:`assemble` puts them in the one order the
reduction and results.json use — dataset order of cases, then regular samples by sample
number, then confirmation samples — so the statistics never depend on how the runs were
read.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gate.config import PassCheck
from gate.model import Case, HardFailure, Tallies, value
from gate.model.usage import InvalidUsage
from gate.policy import stats
from gate.policy.validity import is_missing
from gate.scorers.usage import usage_positions

NO_ACTUAL = "(none)"
"""How a confusion pair with no actual tool is counted (``Tallies.confusion``)."""
CHECK_NAMES: tuple[str, ...] = tuple(c.value for c in PassCheck)
_NO_TALLIES = Tallies()


@value
class CaseMeta:
    """What the reduction needs to know of a case besides its samples."""

    id: str
    line: int | None
    difficulty: str | None
    tags: tuple[str, ...]
    expected_no_tool: bool
    must_not_call: tuple[str, ...]
    expect_tools: tuple[str, ...]
    """Tools named by the expectations, the alternatives and must-not-call."""

    @classmethod
    def of(cls, case: Case, shared: dict[str, str] | None = None) -> CaseMeta:
        """``case``'s metadata. With ``shared`` (one table for every case of a dataset:
        :func:`metas_of`) it is built of fresh objects, none of the case's own: a score
        stage that lets the loaded cases go before its reduction gets their memory back
        whole (an object kept from the cases' memory keeps the block it sits in)."""
        names = dict.fromkeys(
            [*(c.name for calls in case.expectation_lists() for c in calls), *case.must_not_call]
        )
        if shared is None:
            own = _same
        else:

            def own(text: str) -> str:
                copy = shared.get(text)
                if copy is None:
                    copy = shared[text] = _fresh(text)
                return copy

        line = case.source.line
        return cls(
            id=_fresh(case.id) if shared is not None else case.id,
            line=line + 0 if shared is not None else line,  # (+ 0: a new int object)
            difficulty=None if case.difficulty is None else str(case.difficulty),
            tags=tuple(own(t) for t in case.tags),
            expected_no_tool=case.expected_no_tool,
            must_not_call=tuple(own(n) for n in case.must_not_call),
            expect_tools=tuple(own(n) for n in names),
        )


def metas_of(cases: Iterable[Case]) -> list[CaseMeta]:
    """The metadata of ``cases``, of fresh objects (:meth:`CaseMeta.of`), each distinct
    text once."""
    shared: dict[str, str] = {}
    return [CaseMeta.of(c, shared) for c in cases]


def _same(text: str) -> str:
    return text


def _fresh(text: str) -> str:
    """A copy of ``text`` that is a new object (``str(text)`` and slices return ``text``
    itself)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


@dataclass(slots=True)
class SampleRows:
    """A batch of scored samples as columns (see the module docstring). ``values`` has one
    column per name of ``names``; ``checks`` is a bit set over ``check_names`` of the
    pass checks each sample failed."""

    names: tuple[str, ...]
    check_names: tuple[str, ...]
    case: stats.Ints
    sample: stats.Ints
    extra: stats.Bools
    passed: stats.Bools
    values: stats.Floats
    calls: stats.Floats
    calls_no_tool: stats.Floats
    checks: stats.Ints
    latency: stats.Floats
    usage: dict[str, stats.Floats]
    usage_floats: frozenset[str]
    """Usage keys with a value that is not an integer (their totals stay floats)."""
    called: dict[int, tuple[str, ...]]
    """Row → tools it called beyond its case's expected tools, in the order they came."""
    per_tool: dict[str, list[int]]
    confusion: dict[str, dict[str, int]]
    malformed: dict[str, int]
    hard: list[tuple[int, HardFailure]]
    """(row, hard failure) in the order the rows were added."""
    missing: dict[int, str] = field(default_factory=dict)
    """Row → the error of a *missing* sample (:func:`gate.policy.validity.is_missing`):
    the infrastructure failed it. Such a row is not sampled — every metric n/a, not a
    pass, no call, nothing in the pooled tallies — so it counts neither as a failure nor
    as a pass; :attr:`present` leaves it out of the pass rates."""

    invalid_usage: dict[int, str] = field(default_factory=dict)
    """Row → why the usage its agent reported could not be used (``gate.model.usage``): the
    row has no usage and no token figures, and the reports count it."""

    def __len__(self) -> int:
        return int(self.case.shape[0])

    @property
    def present(self) -> stats.Bools:
        """Rows that were sampled (not missing)."""
        mask = np.ones(len(self), dtype=np.bool_)
        if self.missing:
            mask[list(self.missing)] = False
        return mask


@value
class RowProto:
    """A scored sample as a row of one :class:`RowsBuilder` — everything but its case,
    sample number, latency, usage and hard failures. The samples of one scored run
    (identical runs are scored once) share it: :meth:`RowsBuilder.proto` makes it once,
    :meth:`RowsBuilder.add_proto` adds each sample."""

    values: array[float]
    """The scores in the builder's column order (NaN = n/a)."""
    passed: bool
    checks: int
    """Bit set of the failed checks over the builder's check names."""
    calls: float
    calls_no_tool: float
    called: tuple[str, ...]
    """Tools it called beyond its case's expected tools, in the order they came."""
    per_tool: tuple[tuple[str, int, int, int], ...]
    confusion: tuple[tuple[str, str], ...]
    malformed: tuple[tuple[str, int], ...]
    missing: str | None
    """The error of a *missing* sample (:func:`gate.policy.validity.is_missing`), else
    None."""


_NAN = float("nan")

_COLUMNS: dict[str, type] = {
    "case": np.int64, "sample": np.int64, "extra": np.bool_, "passed": np.bool_,
    "calls": np.float64, "calls_no_tool": np.float64, "checks": np.int64, "latency": np.float64,
}  # fmt: skip
"""The per-row arrays of :class:`SampleRows` besides ``values`` and ``usage``, by type."""
_BY_ROW = ("called", "missing", "invalid_usage")
"""The row-keyed maps of :class:`SampleRows`."""


class RowsBuilder:
    """Collects scored samples into :class:`SampleRows`."""

    def __init__(self, names: Sequence[str], metas: Sequence[CaseMeta]) -> None:
        self.names = tuple(names)
        self._col = {n: j for j, n in enumerate(self.names)}
        self._metas = metas  # (a chunk's builder: nothing per case is made up front)
        self.check_names: list[str] = list(CHECK_NAMES)
        self._check_bit = {n: j for j, n in enumerate(self.check_names)}
        # Machine numbers, not lists of Python objects: a worker's chunk of 100,000
        # case-samples holds millions of them (8 bytes each here, 32 in a list).
        self._case = array("q")
        self._sample = array("q")
        self._extra = array("b")
        self._passed = array("b")
        self._values = array("d")
        self._calls = array("d")
        self._calls_no_tool = array("d")
        self._checks: list[int] = []  # a bit set: may outgrow 64 bits
        self._latency = array("d")
        self._usage: dict[str, list[float]] = {}
        self._usage_floats: set[str] = set()
        self._called: dict[int, tuple[str, ...]] = {}
        self._per_tool: dict[str, list[int]] = {}
        self._confusion: dict[str, dict[str, int]] = {}
        self._malformed: dict[str, int] = {}
        self._hard: list[tuple[int, HardFailure]] = []
        self._missing: dict[int, str] = {}
        self._invalid_usage: dict[int, str] = {}
        self._na = array("d", [float("nan")] * len(self.names))
        self._usage_at = usage_positions(self.names)

    def add(
        self,
        case: int,
        sample: int,
        *,
        passed: bool,
        scores: Mapping[str, float | None],
        failed_checks: Iterable[str] = (),
        tallies: Tallies = _NO_TALLIES,
        usage: Mapping[str, int | float] | None = None,
        latency_ms: float | None = None,
        hard: Iterable[HardFailure] = (),
        extra: bool = False,
        values: Sequence[float] | None = None,
        error: str | None = None,
    ) -> None:
        """One scored sample of the case with table index ``case``; ``values``, its scores
        as :meth:`values_of` gives them, when the caller has them already. A sample the
        infrastructure failed (``error``, no hard failure) is added as *missing*
        (:attr:`SampleRows.missing`)."""
        hard = tuple(hard)
        proto = self.proto(
            case,
            passed=passed,
            scores=scores,
            failed_checks=failed_checks,
            tallies=tallies,
            values=values,
            missing=error if is_missing(error, hard) else None,
        )
        self.add_proto(
            case, sample, proto, usage=usage, latency_ms=latency_ms, hard=hard, extra=extra
        )

    def proto(
        self,
        case: int,
        *,
        passed: bool,
        scores: Mapping[str, float | None],
        failed_checks: Iterable[str] = (),
        tallies: Tallies = _NO_TALLIES,
        values: Sequence[float] | None = None,
        missing: str | None = None,
    ) -> RowProto:
        """The row of a scored sample of the case with table index ``case`` (``missing``:
        the error of a sample the infrastructure failed, see :meth:`add`)."""
        if missing is not None:  # not sampled: nothing but its place (SampleRows.missing)
            return RowProto(self._na, False, 0, 0.0, 0.0, (), (), (), (), missing)
        bits = 0
        for check in failed_checks:
            b = self._check_bit.get(check)
            if b is None:
                b = self._check_bit[check] = len(self.check_names)
                self.check_names.append(check)
            bits |= 1 << b
        expect = self._metas[case].expect_tools  # a few names: a tuple is searched fast
        per_tool = tallies.per_tool
        return RowProto(
            values=array("d", self.values_of(scores) if values is None else values),
            passed=passed,
            checks=bits,
            calls=float(tallies.calls),
            calls_no_tool=float(tallies.calls_on_no_tool),
            called=tuple(n for n, t in per_tool.items() if t.called and n not in expect),
            per_tool=tuple((n, t.expected, t.matched, t.called) for n, t in per_tool.items()),
            confusion=tuple(
                (str(e), NO_ACTUAL if a is None else str(a)) for e, a in tallies.confusion
            ),
            malformed=tuple((str(k), int(n)) for k, n in tallies.malformed.items()),
            missing=missing,
        )

    def add_proto(
        self,
        case: int,
        sample: int,
        proto: RowProto,
        *,
        usage: Mapping[str, int | float] | None = None,
        latency_ms: float | None = None,
        hard: Sequence[HardFailure] = (),
        extra: bool = False,
        usage_scores: Sequence[float | None] | None = None,
    ) -> None:
        """One sample of the case with table index ``case`` scored as ``proto`` (a row of
        this builder's: :meth:`proto`); ``usage_scores``: this sample's usage metrics
        (:data:`gate.scorers.usage.USAGE_METRICS` order), when they may differ from the
        scored run's."""
        row = len(self._case)
        if proto.missing is not None:  # nothing but its place: no latency, usage or tallies
            self._missing[row] = proto.missing
            usage, latency_ms, hard, usage_scores = None, None, (), None
        self._case.append(case)
        self._sample.append(sample)
        self._extra.append(extra)
        self._passed.append(proto.passed)
        at = len(self._values)
        self._values.extend(proto.values)
        if usage_scores is not None and self._usage_at:
            for j, v in zip(self._usage_at, usage_scores, strict=True):
                self._values[at + j] = _NAN if v is None else v
        self._calls.append(proto.calls)
        self._calls_no_tool.append(proto.calls_no_tool)
        self._checks.append(proto.checks)
        self._latency.append(float("nan") if latency_ms is None else latency_ms)
        columns = self._usage
        filled = 0
        if type(usage) is InvalidUsage:
            self._invalid_usage[row] = usage.reason
        elif usage:
            for key, val in usage.items():
                t = type(val)
                if t is int or (t is not bool and isinstance(val, int | float)):
                    column = columns.get(key)
                    if column is None:
                        column = columns[key] = [float("nan")] * row
                    column.append(val)
                    filled += 1
                    if t is not int and not isinstance(val, int):
                        self._usage_floats.add(key)
        if filled != len(columns):  # a column this sample has no value for
            for column in columns.values():
                if len(column) == row:
                    column.append(float("nan"))
        if proto.called:
            self._called[row] = proto.called
        per_tool = self._per_tool
        for name, e, m, k in proto.per_tool:
            acc = per_tool.get(name)
            if acc is None:
                per_tool[name] = [e, m, k]
            else:
                acc[0] += e
                acc[1] += m
                acc[2] += k
        for expected, key in proto.confusion:
            cells = self._confusion.get(expected)
            if cells is None:
                cells = self._confusion[expected] = {}
            cells[key] = cells.get(key, 0) + 1
        for kind, count in proto.malformed:
            self._malformed[kind] = self._malformed.get(kind, 0) + count
        for h in hard:
            self._hard.append((row, h))

    def values_of(self, scores: Mapping[str, float | None]) -> list[float]:
        """A sample's scores as a row of this builder's columns (NaN = n/a)."""
        values = self._na.tolist()
        col = self._col
        for name, v in scores.items():
            j = col.get(name)
            if j is not None and v is not None:
                values[j] = v
        return values

    def build(self) -> SampleRows:
        r = len(self._case)
        k = len(self.names)
        values = np.array(self._values, dtype=np.float64).reshape(r, k)
        if np.isinf(values).any():
            bad = np.argwhere(np.isinf(values))[0]
            raise ValueError(
                f"scorer bug: {self.names[int(bad[1])]} is infinite in sample "
                f"{self._sample[int(bad[0])]}"
            )
        return SampleRows(
            names=self.names,
            check_names=tuple(self.check_names),
            **{n: np.array(getattr(self, "_" + n), dtype=t) for n, t in _COLUMNS.items()},
            values=values,
            usage={key: np.array(col, dtype=np.float64) for key, col in self._usage.items()},
            usage_floats=frozenset(self._usage_floats),
            called=dict(self._called),
            per_tool=self._per_tool,
            confusion=self._confusion,
            malformed=self._malformed,
            hard=self._hard,
            missing=dict(self._missing),
            invalid_usage=dict(self._invalid_usage),
        )


@dataclass(slots=True)
class SampleTable:
    """Every scored sample of a run in the reduction's order (module docstring): the rows
    of case ``c`` are ``starts[c] : starts[c] + sizes[c]``, regular samples first."""

    metas: tuple[CaseMeta, ...]
    rows: SampleRows
    sizes: stats.Ints
    extras: stats.Ints
    order: stats.Ints
    """For each row here, its position in the concatenated input batches."""
    hard: list[HardFailure] = field(default_factory=list)
    """Hard failures in row order, each with its case's dataset line."""

    @property
    def starts(self) -> stats.Ints:
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def called_by_case(self) -> list[list[str]]:
        """Per case: its expected tools, then the other tools its samples called, in the
        order they first came (row order)."""
        out = [list(m.expect_tools) for m in self.metas]
        for row, names in sorted(self.rows.called.items()):
            seen = out[int(self.rows.case[row])]
            for name in names:
                if name not in seen:
                    seen.append(name)
        return out

    def failed_checks_by_case(self) -> list[tuple[str, ...]]:
        """Per case, the checks that failed in any of its samples, most frequent first
        (ties by name)."""
        names = self.rows.check_names
        if not len(self.rows):
            return [() for _ in self.metas]
        # A check at a time: a rows × checks matrix of bits would be 8 bytes a cell.
        checks, case = self.rows.checks, self.rows.case
        counts = np.zeros((len(self.metas), len(names)), dtype=np.int64)
        for j in range(len(names)):
            counts[:, j] = np.bincount(case, weights=(checks >> j) & 1, minlength=len(self.metas))
        out: list[tuple[str, ...]] = []
        # Cases share a few count rows (most fail the same checks as many times): each
        # row's order is worked out once.
        seen: dict[tuple[int, ...], tuple[str, ...]] = {}
        for row in map(tuple, counts.tolist()):
            failed = seen.get(row)
            if failed is None:
                tally = [(n, k) for n, k in zip(names, row, strict=True) if k]
                tally.sort(key=lambda nk: (-nk[1], nk[0]))
                failed = seen[row] = tuple(n for n, _ in tally)
            out.append(failed)
        return out


def assemble(
    metas: Sequence[CaseMeta], batches: Sequence[SampleRows], *, consume: bool = False
) -> SampleTable:
    """One :class:`SampleTable` from batches of rows (the module docstring's order).

    With ``consume`` (``batches`` then a list, emptied here) each batch is let go as soon
    as its rows are in place: a large run's rows are held about once while the table is
    built, not twice (the batches, then the table)."""
    metas = tuple(metas)
    names = _union([b.names for b in batches])
    checks = _union([b.check_names for b in batches], first=CHECK_NAMES)
    parts: list[SampleRows | None] = [_widen(b, names, checks) for b in batches]
    if consume:
        assert isinstance(batches, list)
        batches.clear()
    present = [p for p in parts if p is not None]
    rows = _concat(present) if present else RowsBuilder(names, metas).build()
    del present
    order = np.lexsort((rows.sample, rows.extra, rows.case))
    where = np.empty_like(order)
    where[order] = np.arange(order.shape[0])
    placed = len(parts) > 1
    if placed:
        # The value matrix is the one large array: it is written into its sorted place
        # batch by batch, never concatenated and then copied again.
        values = np.empty((int(order.shape[0]), len(names)))
        at = 0
        for k, part in enumerate(parts):
            assert part is not None
            n = len(part)
            values[where[at : at + n]] = part.values
            at += n
            if consume:
                parts[k] = None  # its values are in place: let the batch go
        rows.values = values
    del parts
    # (``rows`` is this function's own unless a lone batch was passed without ``consume``.)
    sorted_rows = _take(rows, order, where, sorted_values=placed, in_place=consume or placed)
    del rows
    sizes = np.bincount(sorted_rows.case, minlength=len(metas)).astype(np.int64)
    extras = np.bincount(
        sorted_rows.case, weights=sorted_rows.extra.astype(np.float64), minlength=len(metas)
    ).astype(np.int64)
    # Hard failures follow their samples: case order, then sample number (regular and
    # confirmation samples together), then the order the scorer found them in.
    hard = sorted(
        sorted_rows.hard,
        key=lambda rh: (
            int(sorted_rows.case[where[rh[0]]]),
            int(sorted_rows.sample[where[rh[0]]]),
            int(where[rh[0]]),
        ),
    )
    located = [_located(h, metas[int(sorted_rows.case[where[row]])]) for row, h in hard]
    sorted_rows.hard = [(int(where[row]), h) for row, h in hard]
    return SampleTable(metas, sorted_rows, sizes, extras, order, located)


def _located(h: HardFailure, meta: CaseMeta) -> HardFailure:
    return HardFailure(h.kind, h.case_id, h.sample, h.call, h.message, meta.line)


def _union(lists: Sequence[Sequence[str]], first: Sequence[str] = ()) -> tuple[str, ...]:
    out = dict.fromkeys(first)
    for names in lists:
        out.update(dict.fromkeys(names))
    return tuple(out)


def _widen(b: SampleRows, names: tuple[str, ...], checks: tuple[str, ...]) -> SampleRows:
    """``b`` with its value columns laid out as ``names`` and check bits as ``checks``."""
    values = b.values
    if b.names != names:
        values = np.full((len(b), len(names)), np.nan)
        for j, n in enumerate(b.names):
            values[:, names.index(n)] = b.values[:, j]
    bits = b.checks
    if b.check_names != checks[: len(b.check_names)]:
        bits = np.zeros_like(b.checks)
        for j, n in enumerate(b.check_names):
            bits |= ((b.checks >> j) & 1) << checks.index(n)
    if values is b.values and bits is b.checks:
        return b
    return dataclasses.replace(b, names=names, check_names=checks, values=values, checks=bits)


def _concat(parts: Sequence[SampleRows]) -> SampleRows:
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0, *(len(p) for p in parts)])
    total = int(offsets[-1])
    usage: dict[str, stats.Floats] = {}
    for p, off in zip(parts, offsets, strict=False):
        for key, col in p.usage.items():
            acc = usage.get(key)
            if acc is None:
                acc = usage[key] = np.full(total, np.nan)
            acc[int(off) : int(off) + len(p)] = col
    per_tool: dict[str, list[int]] = {}
    confusion: dict[str, dict[str, int]] = {}
    malformed: dict[str, int] = {}
    hard: list[tuple[int, HardFailure]] = []
    by_row: dict[str, Any] = {name: {} for name in _BY_ROW}
    for p, off in zip(parts, offsets, strict=False):
        for name, (e, m, c) in p.per_tool.items():
            acc3 = per_tool.setdefault(name, [0, 0, 0])
            acc3[0] += e
            acc3[1] += m
            acc3[2] += c
        for exp, cells in p.confusion.items():
            row = confusion.setdefault(exp, {})
            for act, n in cells.items():
                row[act] = row.get(act, 0) + n
        for kind, n in p.malformed.items():
            malformed[kind] = malformed.get(kind, 0) + n
        hard.extend((int(off) + r, h) for r, h in p.hard)
        for name, merged in by_row.items():
            merged.update({int(off) + r: v for r, v in getattr(p, name).items()})
    columns: dict[str, Any] = {n: np.concatenate([getattr(p, n) for p in parts]) for n in _COLUMNS}
    return SampleRows(
        names=parts[0].names,
        check_names=parts[0].check_names,
        **columns,
        values=np.zeros((0, len(parts[0].names))),  # filled in sorted order by assemble()
        usage=usage,
        usage_floats=frozenset().union(*(p.usage_floats for p in parts)),
        per_tool=per_tool,
        confusion=confusion,
        malformed=malformed,
        hard=hard,
        **by_row,
    )


def _take(
    rows: SampleRows,
    order: stats.Ints,
    where: stats.Ints,
    *,
    sorted_values: bool = False,
    in_place: bool = False,
) -> SampleRows:
    """``rows`` in ``order`` (``where`` its inverse). ``in_place``: ``rows`` itself is
    sorted a column at a time (each unsorted column let go as its sorted copy is made)."""
    out = rows if in_place else dataclasses.replace(rows)
    for name in _COLUMNS:
        setattr(out, name, getattr(rows, name)[order])
    if not sorted_values:
        out.values = rows.values[order]
    out.usage = {k: v[order] for k, v in rows.usage.items()}
    for name in _BY_ROW:
        setattr(out, name, {int(where[r]): v for r, v in getattr(rows, name).items()})
    return out
