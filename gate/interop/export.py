"""results.json → CSV for spreadsheets: the "per-case scores" and "per-tool recall rollup"
tabs of seed 003 (docs/interop.md, "Exports", gives the columns).

The key metrics are :data:`CASE_METRICS`; calls are in the
one-line ``name(arg=value)`` form of the PR comment. Numbers are written with up to 6
significant digits; lists (tags, failed checks) are joined with ``;``. The same results
give byte-identical CSV.
"""

from __future__ import annotations

import csv
import enum
import io
from typing import Any, assert_never

from gate.report.escape import calls_repr
from gate.results import CaseResult, Results, SampleResult
from gate.scorers.registry import EXPORT_METRICS


class ExportFormat(enum.StrEnum):
    CASES_CSV = "cases-csv"
    TOOLS_CSV = "tools-csv"


CASE_METRICS: tuple[str, ...] = EXPORT_METRICS
"""The per-case metric columns, in order (declared in :mod:`gate.scorers.registry`)."""


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def _sample_for_evidence(case: CaseResult) -> SampleResult | None:
    return next((s for s in case.samples if not s.passed), next(iter(case.samples), None))


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def cases_csv(results: Results) -> str:
    """The per-case table (docs/interop.md)."""
    header = [
        "id",
        "passed",
        "pass_rate",
        "flaky",
        "samples",
        "difficulty",
        "tags",
        "failed_checks",
        *CASE_METRICS,
        "expected",
        "actual",
        "why",
    ]
    rows = [header]
    for case in results.cases:
        failed = sorted({c for s in case.samples for c in s.failed_checks})
        sample = _sample_for_evidence(case)
        ev: dict[str, Any] = sample.evidence if sample is not None else {}
        scores = results.case_scores(case)
        metrics = [_num(scores.get(m)) for m in CASE_METRICS]
        rows.append(
            [
                case.id,
                "true" if case.passed else "false",
                _num(case.pass_rate),
                "true" if case.flaky else "false",
                str(len(case.samples)),
                case.difficulty or "",
                ";".join(case.tags),
                ";".join(failed),
                *metrics,
                calls_repr(ev.get("expected")) if "expected" in ev else "",
                calls_repr(ev.get("actual")) if "actual" in ev else "",
                ev["summary"] if isinstance(ev.get("summary"), str) else "",
            ]
        )
    return _csv(rows)


def tools_csv(results: Results) -> str:
    """The per-tool recall rollup (docs/interop.md)."""
    rows = [["tool", "expected", "matched", "recall", "called"]]
    for name in sorted(results.per_tool):
        t = results.per_tool[name]
        rows.append([name, str(t.expected), str(t.matched), _num(t.recall), str(t.called)])
    return _csv(rows)


def export(results: Results, fmt: ExportFormat) -> str:
    match fmt:
        case ExportFormat.CASES_CSV:
            return cases_csv(results)
        case ExportFormat.TOOLS_CSV:
            return tools_csv(results)
        case _:
            assert_never(fmt)
