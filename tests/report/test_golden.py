"""Golden files: every renderer's output for the passing, failing and flaky fixtures,
compared byte for byte with ``tests/golden/report/``.

Regenerate after an intended change with ``TOOLGATE_UPDATE_GOLDEN=1 pytest tests/report``
and review the diff: every golden change is a change users will see.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gate.cli import main
from gate.report import render_comment, render_console, render_junit, render_markdown
from gate.results import Results, read_results, write_results
from tests.report.fixtures import ALL

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "report"
UPDATE = os.environ.get("TOOLGATE_UPDATE_GOLDEN") == "1"

RENDERERS: dict[str, Callable[[Results], str]] = {
    "comment.md": render_comment,
    "report.md": render_markdown,
    "junit.xml": render_junit,
    "console.txt": render_console,
}


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"missing golden {path}; run with TOOLGATE_UPDATE_GOLDEN=1"
    expected = path.read_bytes().decode("utf-8")
    assert text == expected, f"{name} differs from its golden file (TOOLGATE_UPDATE_GOLDEN=1)"


FORMATS = {
    "comment.md": "comment",
    "report.md": "md",
    "junit.xml": "junit",
    "console.txt": "console",
}


def _as_written(fixture: str, tmp: Path) -> tuple[Path, Results]:
    """The fixture as results.json holds it: what ``check`` and ``report`` render."""
    path = tmp / f"{fixture}.results.json"
    write_results(path, ALL[fixture]())
    return path, read_results(path)


@pytest.mark.parametrize("fixture", sorted(ALL))
@pytest.mark.parametrize("kind", sorted(RENDERERS))
def test_render__fixture__matches_golden(fixture: str, kind: str, tmp_path: Path) -> None:
    _, results = _as_written(fixture, tmp_path)
    check_golden(f"{fixture}.{kind}", RENDERERS[kind](results))


@pytest.mark.parametrize("fixture", sorted(ALL))
def test_report_command__every_format__byte_identical_to_golden(
    fixture: str, tmp_path: Path
) -> None:
    path, _ = _as_written(fixture, tmp_path)
    for name, fmt in FORMATS.items():
        out = tmp_path / name
        assert main(["report", str(path), "--format", fmt, "--out", str(out)]) == 0
        golden = (GOLDEN / f"{fixture}.{name}").read_bytes()
        assert out.read_bytes() == golden, f"toolgate report --format {fmt} differs from {name}"


@pytest.mark.parametrize("fixture", sorted(ALL))
def test_render__twice__identical(fixture: str) -> None:
    a, b = ALL[fixture](), ALL[fixture]()
    for render in RENDERERS.values():
        assert render(a) == render(b)
