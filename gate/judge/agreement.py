"""Judge–human agreement: Cohen's κ and raw agreement, with a seeded bootstrap interval.

Humans label some judge items in a **calibration file** (docs/judge.md gives its lines and
what is refused); every item that both the judge and a human labelled is a pair. With n
pairs (j_i, h_i) over the rubric's labels C:

* raw agreement ``p_o = (1/n) Σ [j_i = h_i]``;
* chance agreement ``p_e = Σ_{c∈C} (n_j(c)/n)·(n_h(c)/n)``;
* Cohen's κ ``= (p_o − p_e) / (1 − p_e)``; undefined (null) when ``p_e = 1``;
* 95% interval: percentile bootstrap (:data:`RESAMPLES` resamples of the n pairs with
  replacement, ``random.Random(seed)``; percentiles by linear interpolation), for κ over the
  resamples where it is defined, and for raw agreement; null when n < 2.

κ is the nominal (unweighted) statistic: labels are categories, not points on a ruler.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.errors import CalibrationError, Problem

RESAMPLES = 1000
"""Bootstrap resamples for the agreement intervals."""

MAX_PROBLEMS = 50
"""Stop listing problems of one calibration file after this many."""

_KEYS = frozenset({"case_id", "sample", "rubric", "label", "item"})


@dataclass(frozen=True, slots=True)
class HumanLabel:
    """One line of the calibration file."""

    case_id: str
    sample: int
    rubric: str
    item: str
    label: str
    line: int

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.case_id, self.sample, self.rubric, self.item)


def load_calibration(
    path: Path, scales: Mapping[str, Sequence[str]], *, display: str | None = None
) -> tuple[HumanLabel, ...]:
    """Read and check a calibration file against the enabled rubrics' scales.

    Raises :class:`CalibrationError` listing every problem (file, line, field).
    """
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CalibrationError(
            Problem(name, None, None, f"cannot read the calibration file: {exc.strerror or exc}")
        ) from None
    problems: list[Problem] = []
    labels: list[HumanLabel] = []
    first_line: dict[tuple[str, int, str, str], int] = {}
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if len(problems) >= MAX_PROBLEMS:
            break
        if not line.strip():
            continue
        try:
            obj = jsonio.loads_strict(line)
        except jsonio.JsonInputError as exc:
            problems.append(Problem(name, lineno, None, str(exc)))
            continue
        label = _label(obj, lineno, name, scales, problems)
        if label is None:
            continue
        if label.key in first_line:
            problems.append(
                Problem(
                    name,
                    lineno,
                    "item" if label.item else "case_id",
                    f"this item is already labelled on line {first_line[label.key]}",
                )
            )
            continue
        first_line[label.key] = lineno
        labels.append(label)
    if problems:
        raise CalibrationError(
            problems,
            hint="calibration lines look like "
            '{"case_id": "c1", "sample": 0, "rubric": "tool_appropriateness", '
            '"label": "appropriate"}',
        )
    return tuple(labels)


def _label(
    obj: Any, lineno: int, name: str, scales: Mapping[str, Sequence[str]], problems: list[Problem]
) -> HumanLabel | None:
    def bad(field: str | None, message: str) -> None:
        problems.append(Problem(name, lineno, field, message))

    if not isinstance(obj, dict):
        bad(None, "each line must be a JSON object")
        return None
    before = len(problems)
    for key in sorted(obj.keys() - _KEYS):
        bad(key, f"unknown key (a line has {', '.join(sorted(_KEYS))})")
    for key in ("case_id", "rubric", "label"):
        if key not in obj:
            bad(key, "required")
        elif not isinstance(obj[key], str) or not obj[key]:
            bad(key, "must be a non-empty string")
    sample = obj.get("sample")
    if "sample" not in obj:
        bad("sample", "required")
    elif not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        bad("sample", "must be an integer ≥ 0")
    item = obj.get("item", "")
    if not isinstance(item, str):
        bad("item", "must be a string")
    if len(problems) > before:
        return None
    rubric, label = obj["rubric"], obj["label"]
    if rubric not in scales:
        from gate.config import did_you_mean

        bad(
            "rubric",
            f"{rubric!r} is not an enabled rubric{did_you_mean(rubric, scales)} "
            f"(enabled: {', '.join(scales) or 'none'})",
        )
        return None
    if label not in scales[rubric]:
        bad("label", f"{label!r} is not on the scale of {rubric!r}: {', '.join(scales[rubric])}")
        return None
    assert isinstance(sample, int)
    return HumanLabel(obj["case_id"], sample, rubric, item, label, lineno)


# ─── the statistics ──────────────────────────────────────────────────────────


def raw_agreement(pairs: Sequence[tuple[str, str]]) -> float | None:
    """p_o: the share of pairs where judge and human gave the same label."""
    if not pairs:
        return None
    return sum(1 for j, h in pairs if j == h) / len(pairs)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); None when there are no pairs or p_e = 1."""
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(1 for j, h in pairs if j == h) / n
    judge = Counter(j for j, _ in pairs)
    human = Counter(h for _, h in pairs)
    p_e = sum(judge[c] * human[c] for c in judge) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) with linear interpolation between closest ranks."""
    if not sorted_values:
        raise ValueError("no values")
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def agreement(
    pairs: Sequence[tuple[str, str]], *, seed: int, resamples: int = RESAMPLES, level: float = 0.95
) -> dict[str, Any]:
    """κ, raw agreement and their bootstrap intervals for (judge, human) label pairs."""
    n = len(pairs)
    out: dict[str, Any] = {
        "n": n,
        "kappa": _round(cohen_kappa(pairs)),
        "raw": _round(raw_agreement(pairs)),
        "ci_low": None,
        "ci_high": None,
        "raw_ci_low": None,
        "raw_ci_high": None,
        "level": level,
    }
    if n < 2:
        return out
    rng = random.Random(seed)
    kappas: list[float] = []
    raws: list[float] = []
    for _ in range(resamples):
        draw = [pairs[rng.randrange(n)] for _ in range(n)]
        k = cohen_kappa(draw)
        if k is not None:
            kappas.append(k)
        r = raw_agreement(draw)
        assert r is not None
        raws.append(r)
    tail = (1.0 - level) / 2
    if kappas:
        kappas.sort()
        out["ci_low"] = _round(percentile(kappas, tail))
        out["ci_high"] = _round(percentile(kappas, 1.0 - tail))
    raws.sort()
    out["raw_ci_low"] = _round(percentile(raws, tail))
    out["raw_ci_high"] = _round(percentile(raws, 1.0 - tail))
    return out


def _round(x: float | None) -> float | None:
    # Rounded so that results.json does not carry float noise across platforms.
    return None if x is None else round(x, 6)
