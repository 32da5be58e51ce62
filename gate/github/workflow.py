"""Workflow commands for the Actions runner: annotations, outputs, step summary.

Escaping follows the runner's rules: in a message ``%``, CR and LF are escaped; in a
property value also ``:`` and ``,``. Outputs go to the ``$GITHUB_OUTPUT`` file (the
``::set-output`` command is gone), multi-line values in the heredoc form. Annotations are
budgeted: the runner keeps 10 of each type per step, so the most important come first and
the last slot says how many more there are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from gate.model import FlipKind, HardFailureKind, undecided_drops
from gate.report.lookup import regressions as regressions_of
from gate.results import HardFailureResult, Results


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """One ``::error …::message`` line (level: error, warning, notice)."""
    props = {"file": file, "line": str(line) if line else None, "title": title}
    rendered = ",".join(
        f"{k}={escape_data(v).replace(':', '%3A').replace(',', '%2C')}"
        for k, v in props.items()
        if v
    )
    return f"::{level}{' ' + rendered if rendered else ''}::{escape_data(message)}"


# ─── outputs and the step summary ────────────────────────────────────────────

OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
ANNOTATIONS_PER_TYPE = 10
"""The runner keeps at most 10 annotations of each type (error, warning, notice) per step."""


def format_outputs(values: Mapping[str, str]) -> str:
    """``$GITHUB_OUTPUT`` text: ``name=value`` lines; a multi-line value uses the heredoc
    form ``name<<DELIM`` … ``DELIM`` with a delimiter that occurs nowhere in the value."""
    lines: list[str] = []
    for name, value in values.items():
        if not OUTPUT_NAME.match(name):
            raise ValueError(f"invalid output name {name!r}")
        if "\n" in value or "\r" in value:
            delim = _delimiter(value)
            lines += [f"{name}<<{delim}", value, delim]
        else:
            lines.append(f"{name}={value}")
    return "".join(line + "\n" for line in lines)


def _delimiter(value: str) -> str:
    n = 0
    while True:
        digest = hashlib.sha256(f"{n}:{value}".encode()).hexdigest()[:20]
        delim = f"ghadelimiter_{digest}"
        if delim not in value:
            return delim
        n += 1


def write_outputs(path: Path, values: Mapping[str, str]) -> None:
    """Append outputs to the ``$GITHUB_OUTPUT`` file."""
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(format_outputs(values))


def append_step_summary(path: Path, markdown: str) -> str | None:
    """Append Markdown to ``$GITHUB_STEP_SUMMARY`` (the caller keeps it within 1 MiB);
    returns why it could not (``None``: written), never raises."""
    if not markdown.endswith("\n"):
        markdown += "\n"
    try:
        with path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write(markdown)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def step_summary_room(path: Path, limit: int = 1_000_000) -> int:
    """Bytes left in the step summary under ``limit`` (what is there already counts)."""
    try:
        used = path.stat().st_size
    except OSError:
        used = 0
    return max(0, limit - used)


def outputs_for(results: Results, results_path: str) -> dict[str, str]:
    """The action's outputs: ``verdict``, ``passed``, ``regressions`` (significant),
    ``likely-regressions``, ``undecided`` (cases that fell with too few samples to tell),
    ``must-not-call-violations``, ``compared`` (``true`` when
    the run was compared with a baseline, case by case), ``hard-failures``,
    ``results-path``, ``summary`` and one ``metric-<name>[-<slice>]`` per gated metric
    (value with 6 decimals, or ``n/a``)."""
    v = results.verdict
    invalid = results.run_error is not None  # nothing was decided: the Action's "error"
    verdict = (
        "error" if invalid else "not-gated" if v is None else ("passed" if v.passed else "failed")
    )
    flips = results.comparison.flips if results.comparison and not invalid else []
    regressions = (
        v.regressions
        if v is not None and not invalid
        else sum(1 for f in flips if FlipKind(f.kind) is FlipKind.REGRESSION)
    )
    likely = sum(1 for f in flips if FlipKind(f.kind) is FlipKind.LIKELY_REGRESSION)
    undecided = v.undecided if v is not None and not invalid else len(undecided_drops(flips))
    mnc = sum(
        1 for h in results.hard_failures if HardFailureKind(h.kind) is HardFailureKind.MUST_NOT_CALL
    )
    compared = (
        v is not None
        and v.not_compared is None
        and results.comparison is not None
        and results.comparison.comparable
    )
    out = {
        "verdict": verdict,
        "passed": "true" if v is not None and v.passed else "false",
        "regressions": str(regressions),
        "likely-regressions": str(likely),
        "undecided": str(undecided),
        "must-not-call-violations": str(mnc),
        "compared": "true" if compared else "false",
        "hard-failures": str(len(results.hard_failures)),
        "results-path": results_path.replace("\n", " "),
        # one line, every control character shown as a space (as annotations show them)
        "summary": _visible(v.summary if v else "not gated", 2000),
    }
    for g in v.gates if v else []:
        name = f"metric-{g.metric}" + (f"-{g.slice}" if g.slice else "")
        name = re.sub(r"[^A-Za-z0-9_-]", "_", name)
        out[name] = "n/a" if g.value is None else f"{g.value:.6f}"
    return out


# ─── annotations ─────────────────────────────────────────────────────────────


def annotations_for(
    results: Results,
    *,
    redact: Callable[[str], str] = lambda s: s,
    per_type: int = ANNOTATIONS_PER_TYPE,
    reserved_warnings: int = 0,
) -> list[str]:
    """``::error``/``::warning`` lines for what failed, within the runner's per-type cap.

    Errors, in this order: must-not-call violations (then other hard failures), the
    regressions worst first (errors when the gate failed, warnings when it passed anyway),
    then failed threshold gates. When a type has more than ``per_type`` items, the last
    slot says how many more are in the step summary (``reserved_warnings`` slots are left
    for the caller's own warnings). Data strings are redacted, made
    visible (no control characters) and escaped by :func:`annotation`.
    """
    file = results.dataset.path
    failed = results.verdict is not None and not results.verdict.passed
    items: dict[str, list[str]] = {"error": [], "warning": [], "notice": []}

    def clean(text: str, limit: int = 300) -> str:
        return _visible(redact(text), limit)

    groups: dict[tuple[int, str, str, str], list[HardFailureResult]] = {}
    for h in results.hard_failures:
        tool = str(h.call.get("name", "?"))
        mnc = HardFailureKind(h.kind) is HardFailureKind.MUST_NOT_CALL
        key = (0 if mnc else 1, h.kind, h.case_id, tool)
        groups.setdefault(key, []).append(h)
    for key in sorted(groups):
        _, kind, case_id, tool = key
        first = groups[key][0]
        samples = ", ".join(str(s) for s in sorted({h.sample for h in groups[key]}))
        title = f"{kind.replace('_', '-')}: {clean(tool, 80)} called"
        msg = f"case {clean(case_id, 120)} (samples {samples}): {clean(first.message)}"
        items["error"].append(annotation("error", msg, file=file, line=first.line, title=title))
    error = results.run_error
    invalid = error is not None
    if error is not None:  # nothing was measured: no case regressed and no gate was missed
        items["error"].append(
            annotation(
                "error",
                f"the run is not valid: {clean(error.first_line)}",
                title="ToolGate run not valid",
            )
        )
    # Worst first, as the reports list them.
    worse = [] if invalid else regressions_of(results)
    counted = {FlipKind.REGRESSION} | (
        {FlipKind.LIKELY_REGRESSION}
        if results.verdict is not None and results.verdict.likely_fail
        else set()
    )
    for f in worse:
        checks = ", ".join(clean(c, 60) for c in f.failed_checks) or "failed"
        base = f"{round((f.base_pass_rate or 0) * f.base_samples)}/{f.base_samples}"
        head = f"{round((f.head_pass_rate or 0) * f.head_samples)}/{f.head_samples}"
        significant = FlipKind(f.kind) is FlipKind.REGRESSION
        what = "regressed" if significant else "likely regressed"
        because = f"; not significant yet: {clean(f.because, 120)}" if f.because else ""
        msg = (
            f"case {clean(f.case_id, 120)} {what}: {base} → {head} samples pass ({checks}){because}"
        )
        level = "error" if failed and FlipKind(f.kind) in counted else "warning"
        title = "ToolGate regression" if significant else "ToolGate likely regression"
        items[level].append(annotation(level, msg, file=file, line=f.line, title=title))
    for g in results.verdict.gates if results.verdict and not invalid else []:
        if not g.passed:
            where = f" on {clean(g.slice, 60)}" if g.slice else ""
            items["error"].append(
                annotation(
                    "error",
                    f"{clean(g.metric, 80)}{where}: {clean(g.reason)}",
                    title="ToolGate threshold",
                )
            )
    out: list[str] = []
    for level in ("error", "warning", "notice"):
        found = items[level]
        cap = max(1, per_type - reserved_warnings) if level == "warning" else per_type
        if len(found) > cap:
            more = len(found) - (cap - 1)
            found = [
                *found[: cap - 1],
                annotation(
                    level,
                    f"{more} more {level}s from ToolGate are in the step summary (report.md)",
                    title="ToolGate",
                ),
            ]
        out.extend(found)
    return out


def _visible(text: str, limit: int) -> str:
    out = "".join(ch if ch.isprintable() else " " for ch in text)
    return out if len(out) <= limit else out[:limit] + "…"
