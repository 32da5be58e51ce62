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

from gate.report import render_comment, render_console, render_junit, render_markdown
from gate.results import Results
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


@pytest.mark.parametrize("fixture", sorted(ALL))
@pytest.mark.parametrize("kind", sorted(RENDERERS))
def test_render__fixture__matches_golden(fixture: str, kind: str) -> None:
    results = ALL[fixture]()
    check_golden(f"{fixture}.{kind}", RENDERERS[kind](results))


@pytest.mark.parametrize("fixture", sorted(ALL))
def test_render__twice__identical(fixture: str) -> None:
    a, b = ALL[fixture](), ALL[fixture]()
    for render in RENDERERS.values():
        assert render(a) == render(b)
