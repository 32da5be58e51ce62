"""The engine's modules stay pure: no file I/O, and no imports of the results, baseline or
pipeline layers (they are wired in by those layers, not the other way round)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gate.policy

ENGINE = ("history", "casetest", "sequential", "suite", "flakiness", "power", "engine", "cost")
ALLOWED = {
    "__future__",
    "collections",
    "dataclasses",
    "enum",
    "hashlib",
    "math",
    "statistics",
    "typing",
    "numpy",
    "gate.jsonio",
    "gate.model",
    "gate.policy",
}
IO_NAMES = {"open", "Path", "pathlib", "os", "io", "sys", "subprocess", "print"}


@pytest.mark.parametrize("name", ENGINE)
def test_engine_module__pure_imports__no_io(name):
    path = Path(gate.policy.__file__).parent / f"{name}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mods = [node.module or ""]
        else:
            if isinstance(node, ast.Name):
                assert node.id not in IO_NAMES, f"{name}.py uses {node.id}"
            continue
        for mod in mods:
            assert any(mod == a or mod.startswith(a + ".") for a in ALLOWED), (
                f"{name}.py imports {mod}"
            )
