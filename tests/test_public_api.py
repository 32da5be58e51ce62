"""The public Python API, pinned: ``gate.__all__``, every public name's signature and the
version string (httpx's way: a change to the public surface is a change to this file).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import tomllib
import types
from pathlib import Path

import pytest

import gate

ROOT = Path(__file__).resolve().parent.parent

PUBLIC = ["__version__", "assert_tool_calls"]

SIGNATURES = {
    "assert_tool_calls": (
        "(actual: 'Any', expected: 'Iterable[Any]', *, order: 'str | OrderMode' = 'unordered', "
        "tools: 'Any' = None, must_not_call: 'Sequence[str]' = (), normalize: 'Any' = None) "
        "-> 'SampleScore'"
    ),
}

# PEP 440 final and pre-releases, as a release is tagged: 1.2.3, 1.2.3rc1, 1.2.3.dev4.
VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)((a|b|rc)(0|[1-9]\d*))?(\.dev\d+)?")


def test_public_api__all__lists_exactly_the_public_names() -> None:
    assert gate.__all__ == PUBLIC


def test_public_api__every_name_in_all__resolves() -> None:
    for name in gate.__all__:
        assert getattr(gate, name) is not None, name


def test_public_api__no_public_attribute_outside_all() -> None:
    # Submodules become attributes when imported, and `from __future__ import annotations`
    # leaves its feature object behind; anything else public must be in __all__.
    extra = [
        name
        for name, value in vars(gate).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and type(value).__module__ != "__future__"
        and name not in gate.__all__
    ]
    assert extra == []


def test_public_api__signatures__pinned() -> None:
    callables = [n for n in gate.__all__ if callable(getattr(gate, n))]
    assert sorted(callables) == sorted(SIGNATURES)
    for name in callables:
        assert str(inspect.signature(getattr(gate, name))) == SIGNATURES[name], name


def test_public_api__assert_tool_calls__is_the_documented_function() -> None:
    from gate.api import assert_tool_calls

    assert gate.assert_tool_calls is assert_tool_calls
    assert assert_tool_calls.__doc__


def test_public_api__unknown_attribute__attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        gate.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_version__pep440_release__same_as_pyproject_and_installed_metadata() -> None:
    assert VERSION.fullmatch(gate.__version__), gate.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == gate.__version__
    assert importlib.metadata.version("toolgate") == gate.__version__
