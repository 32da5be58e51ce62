"""What scoring knows of one sample: the scoring view of its run, its calls, and the
:class:`Analysis` every metric reads.

:class:`ScoringView` is the one declaration of what scoring may read of a run: the
analysis (:func:`gate.scorers.analysis.analyse`) receives the view, never the
:class:`~gate.model.Run`, so a metric cannot read a field that is not declared here — and
the score stage's memo of identical runs is keyed by exactly these fields
(:data:`VIEW_FIELDS`), so it can never go stale when scoring starts reading something new:
add the field here and the key follows.

The metric functions of the family modules take an :class:`Analysis`; this module holds
its shape (and that of the values in it), :mod:`gate.scorers.analysis` computes it.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from gate.model import BatchProblem, HardFailureKind, MalformedKind, Run, ToolCall, Turn, value

if TYPE_CHECKING:
    from gate.scorers.context import CompiledCase, CompiledList, EffectsList, ToolEntry
    from gate.scorers.normalize import Normalizer

# ─── the scoring view ─────────────────────────────────────────────────────────


@value
class ScoringView:
    """The fields of a run that scoring reads — declared once, here.

    The sample number, latency, usage and ``meta`` are not in it: they are copied onto the
    :class:`~gate.model.SampleScore` and never change a score, so two runs with equal
    views have equal scores (the memo of identical runs relies on it).
    """

    case_id: str
    turns: tuple[Turn, ...]
    error: str | None
    final: str | None

    @classmethod
    def of(cls, run: Run) -> ScoringView:
        """The view of ``run``: its declared fields, nothing else."""
        return cls(*_view_values(run))


VIEW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ScoringView))
"""The view's fields, by their runs.jsonl names (the memo key is made of exactly these)."""
_view_values = operator.attrgetter(*VIEW_FIELDS)


# ─── the calls of a run ───────────────────────────────────────────────────────


@dataclasses.dataclass(slots=True, init=False, eq=False, repr=False)
class Call:
    """One actual call with everything the metrics ask of it, computed once."""

    _key: Hashable
    args: Mapping[str, Any] | None
    call: ToolCall
    content: Any
    entry: ToolEntry | None
    is_error: bool
    malformed: MalformedKind | None
    name: str
    norm: Normalizer
    orig: int
    parse_ok: bool
    schema_error: str | None
    text: str | None
    """The arguments' JSON text (keys in their order), when they parsed: the memos of
    schema validity and argument matching are keyed by it."""
    turn: int
    unrecorded: bool

    @property
    def key(self) -> Hashable:
        """Name + canonical (normalised) arguments; the raw text for unparsed arguments.
        Computed on first use: most runs never need it (no tool is called twice)."""
        k = self._key
        if k is None:
            if self.args is None:
                k = (self.name, "\x00raw", self.call.raw_arguments)
            else:
                k = (self.name, self.norm.canon(self.args))
            self._key = k
        return k


# ─── a matching against one expectation list ──────────────────────────────────


@dataclasses.dataclass(slots=True, eq=False, repr=False)
class ListMatch:
    """The maximum matching of the run's calls against one expectation list."""

    index: int
    lst: CompiledList
    pairs: list[tuple[int, int]]
    """(expected index, position in the canonical call list)."""
    chain: int
    adj: list[list[int]]
    """Expected index → the calls it may pair with."""
    m: int = dataclasses.field(init=False)
    """Pairs: expected calls matched."""

    def __post_init__(self) -> None:
        self.m = len(self.pairs)


@dataclasses.dataclass(slots=True, eq=False, repr=False)
class EffectsMatch:
    """What a run wrote, against one expectation list, for a case judged by its effects
    (:mod:`gate.scorers.writes`). Positions are into ``Analysis.calls``.

    ``writes``: the writes made (calls of write tools whose response was not an error);
    ``failed``: the write calls whose response was an error (they made nothing);
    ``reads``: the reads made; ``lm``: the expected writes matched with ``writes`` (its
    pairs index ``lst.writes`` and ``writes``); ``rlm``: the required reads matched with
    ``reads`` (``None`` when the list requires none); ``order_ok``: the order mode holds
    over the writes (only ``strict`` can break it); ``repeated``: writes of an idempotent
    tool that repeated the write made just before them (they changed nothing more)."""

    index: int
    lst: EffectsList
    writes: list[int]
    failed: list[int]
    reads: list[int]
    lm: ListMatch
    rlm: ListMatch | None
    order_ok: bool
    repeated: list[int]

    @property
    def n_e(self) -> int:
        """Expected writes."""
        return len(self.lst.writes.names)

    @property
    def n_a(self) -> int:
        """Writes made."""
        return len(self.writes)

    @property
    def m(self) -> int:
        """Expected writes matched by a write made."""
        return self.lm.m

    @property
    def reads_missing(self) -> int:
        """Required reads not made."""
        return 0 if self.rlm is None else len(self.rlm.lst.names) - self.rlm.m

    @property
    def writes_made(self) -> bool:
        """Every expected write made, and every required read."""
        return self.m == self.n_e and self.reads_missing == 0

    @property
    def no_extra_write(self) -> bool:
        return self.m == self.n_a

    @property
    def holds(self) -> bool:
        """All three effects checks hold."""
        return self.writes_made and self.no_extra_write and self.order_ok


# ─── the analysis ─────────────────────────────────────────────────────────────


@dataclasses.dataclass(slots=True, init=False, eq=False, repr=False)
class Analysis:
    """Everything the metric functions read, computed once per sample (no metric reads the
    run itself: only this and the scoring view it was made from)."""

    a_counts: dict[str, int]
    batch_good: int
    """Pairs of matched calls batched as expected (a list written with batches)."""
    batch_pairs: int
    """Pairs of matched calls judged for batching (0: nothing to judge)."""
    batch_problems: tuple[BatchProblem, ...]
    best: ListMatch
    calls: list[Call]
    cc: CompiledCase
    chain: int
    dup: int
    e_counts: Mapping[str, int]
    e_names: tuple[str, ...]
    effects: EffectsMatch | None
    """What the run wrote, for a case judged by its effects (``None``: judged by its
    calls)."""
    exec_failed: int
    failed: list[str]
    """The enabled pass checks that fail (:func:`gate.scorers.outcome.failed_checks`)."""
    failures: int
    free_text: list[float]
    hard: list[tuple[HardFailureKind, ToolCall, str]]
    """(kind, call, message) of every hard failure, in rule order."""
    m: int
    malformed: int
    malformed_counts: dict[str, int]
    mnc_hits: list[Call]
    n_a: int
    n_e: int
    name_m: int
    name_pairs: list[tuple[int, int]]
    order_ok: bool
    ordered_iou: bool
    parse_failures: int
    parsed: int
    parsed_pairs: int
    recovered: int
    repeated_fail: int
    required_missing: list[tuple[Call, str]]
    schema_valid: int
    scope_hits: list[tuple[Call, str]]
    steps: int
    unrecorded: list[Call]
    view: ScoringView
    weight: Mapping[str, ToolEntry]
