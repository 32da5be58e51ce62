"""One error tree: every exception class of ``gate/`` is defined in ``gate/errors.py`` and
drawn in the tree of its docstring, under the parent it really has.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import gate.errors

GATE = Path(__file__).resolve().parent.parent / "gate"

# Left to the modules' owners, who are reshaping them; remove an entry when its class moves
# (the test fails once an entry no longer exists, so the list only shrinks).
ELSEWHERE: set[tuple[str, str]] = set()

# A tree line: tree glyphs, then a class name, then two spaces and its description.
_NODE = re.compile(r"^(?P<indent>[│ ]*(?:[├└]── )?)(?P<name>[A-Z]\w*)(?:\s{2,}\S.*)?$")


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(GATE.rglob("*.py")):
        rel = path.relative_to(GATE.parent).with_suffix("")
        if "templates" in rel.parts or rel.name == "__main__":
            continue
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def exception_classes() -> list[tuple[str, str, type[BaseException]]]:
    """(module, class name, class) for every class statement of gate/ — at any depth,
    nested ones included — whose class is an exception."""
    found: list[tuple[str, str, type[BaseException]]] = []
    for name, path in _modules():
        module = importlib.import_module(name)
        namespace = {**vars(builtins), **vars(module)}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                value = eval(compile(ast.Expression(base), str(path), "eval"), namespace)
                if isinstance(value, type) and issubclass(value, BaseException):
                    cls = getattr(module, node.name, None)
                    assert isinstance(cls, type), f"{name}.{node.name}: not at module level"
                    found.append((name, node.name, cls))
                    break
    return found


def tree() -> dict[str, str | None]:
    """Every class drawn in the docstring's trees → the class drawn as its parent."""
    doc = gate.errors.__doc__ or ""
    parents: dict[str, str | None] = {}
    for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", doc):
        stack: list[tuple[int, str]] = []
        for line in block.splitlines():
            m = _NODE.match(line[4:])
            if not m or (line[4:5] in "│ " and "── " not in m["indent"]):
                continue  # blank, or a description carried to the next line
            depth = len(m["indent"])
            while stack and stack[-1][0] >= depth:
                stack.pop()
            assert m["name"] not in parents, f"{m['name']} drawn twice"
            parents[m["name"]] = stack[-1][1] if stack else None
            stack.append((depth, m["name"]))
    return parents


def test_errors__every_exception_class__defined_in_gate_errors() -> None:
    outside = sorted(
        f"{module}.{name}"
        for module, name, _ in exception_classes()
        if module != "gate.errors" and (module, name) not in ELSEWHERE
    )
    assert not outside, "define in gate/errors.py and draw in its tree: " + ", ".join(outside)


def test_errors__allow_list__every_entry_still_exists() -> None:
    found = {(module, name) for module, name, _ in exception_classes()}
    assert sorted(ELSEWHERE - found) == [], "moved: remove from ELSEWHERE"


def test_errors__every_class_of_gate_errors__drawn_in_the_tree() -> None:
    ours = {name for module, name, _ in exception_classes() if module == "gate.errors"}
    drawn = tree()
    assert sorted(ours - set(drawn)) == []
    extra = {n for n in drawn if n not in ours and not hasattr(builtins, n)}
    assert sorted(extra) == [], "drawn in the tree but not defined in gate/errors.py"


@pytest.mark.parametrize("name", sorted(n for n, p in tree().items() if p is not None))
def test_errors__tree__parent_drawn_is_the_real_base(name: str) -> None:
    cls = getattr(gate.errors, name)
    assert tree()[name] in [b.__name__ for b in cls.__bases__]


def test_errors__tree_roots__are_the_top_of_each_branch() -> None:
    roots = sorted(n for n, p in tree().items() if p is None)
    assert roots == ["Exception", "KeyboardInterrupt", "ToolGateError", "ValueError"]
    assert gate.errors.ToolGateError.__bases__ == (Exception,)


def test_tree__parser__reads_glyphs_and_skips_carried_descriptions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    doc = (
        "Errors.\n\nThe tree::\n\n"
        "    A                  base\n"
        "    ├── B              one\n"
        "    │   │              carried over\n"
        "    │   └── C          two\n"
        "    └── D              three; Carried Over\n"
        "                       Capitalised carry-over\n"
        "\nText.\n"
    )
    monkeypatch.setattr(gate.errors, "__doc__", doc)
    assert tree() == {"A": None, "B": "A", "C": "B", "D": "A"}
