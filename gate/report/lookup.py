"""What the report view reads off a :class:`gate.results.Results`, once: the flips by
kind, the broken cases in the order the report lists them, the cases that fail as
before, the hard-failure rules — and the small sentence pieces every section uses (a
case with its dataset line, counts ``36/36 → 0/3``, checks).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from gate.model import Comparability, FlipKind, new_failing, undecided_drops
from gate.report import fmt
from gate.report.parts import Sub
from gate.report.sentences import HARD_KINDS, Code, Sentence
from gate.results import CaseResult, Flip, Results, SampleResult


def plural(n: int, word: str) -> str:
    """``1 case``, ``2 cases``."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def samples_of(n_cases: int, n_samples: int, word: str = "case") -> str:
    """``4 cases [12 samples]``: cases counted, samples in brackets."""
    return f"{plural(n_cases, word)} [{plural(n_samples, 'sample')}]"


def comparable(results: Results) -> bool:
    return results.comparison is not None and results.comparison.comparable


def flips(results: Results, *kinds: FlipKind) -> list[Flip]:
    """The comparison's flips of ``kinds``, as results.json lists them."""
    if results.comparison is None:
        return []
    return [f for f in results.comparison.flips if FlipKind(f.kind) in kinds]


def drop(f: Flip) -> float:
    return (f.base_pass_rate or 0.0) - (f.head_pass_rate or 0.0)


def regressions(results: Results) -> list[Flip]:
    """Regressions, significant then likely, worst first."""
    return sorted(
        flips(results, FlipKind.REGRESSION, FlipKind.LIKELY_REGRESSION),
        key=lambda f: (FlipKind(f.kind) is not FlipKind.REGRESSION, -drop(f), f.case_id),
    )


def undecided(results: Results, *, worse: bool = True) -> list[Flip]:
    """Undecided changes that fell (``worse``) or rose, worst first, then by line."""
    moved = flips(results, FlipKind.UNDECIDED)
    fell = undecided_drops(moved)
    chosen = fell if worse else [f for f in moved if f not in fell]
    return sorted(chosen, key=lambda f: (-abs(drop(f)), f.line or 0, f.case_id))


def new_failing_flips(results: Results) -> list[Flip]:
    """New cases (absent from the baseline) that fail."""
    return new_failing(results.comparison.flips) if results.comparison is not None else []


def case_index(results: Results) -> dict[str, CaseResult]:
    return {c.id: c for c in results.cases}


def hard_kinds(results: Results) -> list[str]:
    kinds = {h.kind for h in results.hard_failures}
    return sorted(kinds, key=lambda k: (HARD_KINDS.index(k) if k in HARD_KINDS else 9, k))


def strongest_rules(results: Results) -> dict[str, str]:
    """Case id → the strongest hard rule it broke (must-not-call first), in the order the
    cases first broke one."""
    rank = {k: i for i, k in enumerate(hard_kinds(results))}
    out: dict[str, str] = {}
    for h in results.hard_failures:
        held = out.get(h.case_id)
        if held is None or rank[h.kind] < rank[held]:
            out[h.case_id] = h.kind
    return out


def hard_cases(results: Results) -> list[str]:
    """The cases that broke a hard rule, strongest rule first, then by id."""
    rank = {k: i for i, k in enumerate(hard_kinds(results))}
    ordered = sorted(strongest_rules(results).items(), key=lambda kv: (rank[kv[1]], kv[0]))
    return [cid for cid, _ in ordered]


def hard_samples(results: Results) -> int:
    """The samples that broke a hard rule (one may break it more than once)."""
    return len({(h.case_id, h.sample) for h in results.hard_failures})


def hard_samples_by_case(results: Results) -> dict[str, set[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for h in results.hard_failures:
        out[h.case_id].add(h.sample)
    return out


def broken(results: Results) -> list[str]:
    """The cases this run found broken, in the order the report lists them: those that
    broke a hard rule, the regressions, the new cases that fail, the cases that got
    worse with too few samples to tell."""
    out = dict.fromkeys(hard_cases(results))
    for f in (*regressions(results), *new_failing_flips(results), *undecided(results)):
        out.setdefault(f.case_id)
    return list(out)


def fail_as_before(results: Results) -> list[CaseResult]:
    """The cases that failed on both sides: a comparable case that failed a sample of
    its base history and fails a sample of this run, and that no other section lists as
    changed (a regression, a drop too small to tell)."""
    if not comparable(results):
        return []
    moved = {
        f.case_id
        for f in flips(results, FlipKind.REGRESSION, FlipKind.LIKELY_REGRESSION, FlipKind.UNDECIDED)
    }
    moved |= {f.case_id for f in flips(results, FlipKind.NEW)}
    return [
        c
        for c in results.cases
        if not c.passed
        and c.samples
        and c.id not in moved
        and c.test is not None
        and c.test.comparability == Comparability.COMPARABLE
        and c.test.base_samples
        and (c.test.base_passes or 0) < c.test.base_samples
        and c.test.head_passes < c.test.head_samples  # a sample run, and failed
    ]


def not_run(results: Results, *, whole: bool = True) -> list[str]:
    """The cases every sample of which was not run on purpose (``agent.missing: skip``);
    ``whole=False``: those with some samples not run, not all."""
    gone = results.missing.not_run if results.missing is not None else {}
    held = {c.id: len(c.samples) for c in results.cases if c.id in gone and c.samples}
    return [i for i, n in held.items() if (gone[i] >= n) is whole]


def first_failing(case: CaseResult | None) -> SampleResult | None:
    """The first sample of the case that failed a check (a missing one failed none)."""
    if case is None:
        return None
    failing = [s for s in case.samples if not s.passed and s.failed_checks]
    return min(failing, key=lambda s: s.sample) if failing else None


def case_part(case_id: str, line: int | None) -> Sentence:
    """A case id with its dataset line."""
    return [Code(case_id), Sub(f"line {line}")] if line else [Code(case_id)]


def codes(names: Iterable[str]) -> Sentence:
    """```a`, `b`, `c```: each name shown literally."""
    return join([[Code(n)] for n in names], ", ")


def ids(case_ids: Sequence[str], shown: int) -> Sentence:
    """```a`, `b`, `c`, …``: the first ``shown`` ids, the rest an ellipsis."""
    return codes(case_ids[:shown]) + ([", …"] if len(case_ids) > shown else [])


def checks(names: Iterable[str]) -> Sentence:
    return codes(names) or ["—"]


def rates(f: Flip, *, p: bool = True) -> str:
    """``36/36 → 0/3 (p = 0.00028)``: the base history's counts, the head's."""
    base = fmt.rate_fraction(f.base_pass_rate, f.base_samples)
    head = fmt.rate_fraction(f.head_pass_rate, f.head_samples)
    shown = "" if f.p_value is None or not p else f" (p = {f.p_value:.2g})"
    return f"{base} → {head}{shown}"


def join(parts: Sequence[Sentence], sep: str) -> Sentence:
    out: Sentence = []
    for i, p in enumerate(parts):
        if i:
            out.append(sep)
        out += p
    return out
