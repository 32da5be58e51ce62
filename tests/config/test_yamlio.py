"""gate.yamlio: plain data only, bounded, with the line and span of every value."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.errors import ConfigError
from gate.yamlio import MAX_BYTES, MAX_NODES, load_yaml, parse_yaml

BILLION_LAUGHS = """
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
"""


def error(text: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_yaml(text, "t.yml")
    return str(err.value)


def test_yaml__python_tag__refused() -> None:
    msg = error("agent: !!python/object/apply:os.system [echo hacked]\n")
    assert msg.startswith(
        "t.yml:1: agent: YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed"
    )


def test_yaml__custom_tag__refused() -> None:
    assert "YAML tag '!secret' is not allowed" in error("dataset:\n  path: !secret x\n")


def test_yaml__timestamp__refused_not_silently_a_date() -> None:
    assert "is not allowed" in error("when: !!timestamp 2026-01-01\n")


def test_yaml__alias_bomb__refused() -> None:
    msg = error(BILLION_LAUGHS)
    assert f"more than {MAX_NODES} nodes (alias bomb?)" in msg


def test_yaml__small_aliases__expanded() -> None:
    doc = parse_yaml("base: &b {x: 1}\nother: *b\n", "t.yml")
    assert doc.data == {"base": {"x": 1}, "other": {"x": 1}}


def test_yaml__merge_key__refused() -> None:
    assert "merge keys (<<) are not supported" in error("base: &b {x: 1}\nother:\n  <<: *b\n")


def test_yaml__duplicate_key__line_of_the_second() -> None:
    assert error("a: 1\nb: 2\na: 3\n").startswith("t.yml:3: a: duplicate key")


def test_yaml__non_string_key__refused() -> None:
    assert "keys must be plain strings" in error("1: a\n")


@pytest.mark.parametrize("text", ["x: .nan\n", "x: .inf\n", "x: -.Inf\n"])
def test_yaml__non_finite_number__refused(text: str) -> None:
    assert "numbers must be finite" in error(text)


def test_yaml__yaml_1_2_booleans__no_is_a_string() -> None:
    doc = parse_yaml("a: no\nb: yes\nc: true\nd: False\ne: on\n", "t.yml")
    assert doc.data == {"a": "no", "b": "yes", "c": True, "d": False, "e": "on"}


def test_yaml__numbers__ints_floats_octal_hex() -> None:
    doc = parse_yaml("a: 10\nb: 1_000\nc: 0x1f\nd: 0o17\ne: 1.5\nf: -3\n", "t.yml")
    assert doc.data == {"a": 10, "b": 1000, "c": 31, "d": 15, "e": 1.5, "f": -3}


def test_yaml__syntax_error__line_named() -> None:
    assert error("a: [1, 2\nb: 3\n").startswith("t.yml:")


def test_yaml__lines_and_spans__recorded() -> None:
    text = "dataset:\n  path: cases.jsonl   # c\n  sha256: 'abc'\nlist:\n  - x\n"
    doc = parse_yaml(text, "t.yml")
    assert (
        doc.lines[("dataset",)] == 1
        and doc.lines[("dataset", "path")] == 2
        and doc.lines[("list", 0)] == 5
    )
    start, end = doc.spans[("dataset", "path")]
    assert text[start:end] == "cases.jsonl"
    start, end = doc.spans[("dataset", "sha256")]
    assert text[start:end] == "'abc'"
    assert doc.line_of(("dataset", "path", "nothing", 3)) == 2


def test_yaml__empty_document__empty_mapping() -> None:
    assert parse_yaml("# only a comment\n", "t.yml").data == {}


def test_load_yaml__too_large__refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yml"
    path.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(ConfigError) as err:
        load_yaml(path, display="big.yml")
    assert f"larger than {MAX_BYTES} bytes" in str(err.value)


def test_load_yaml__not_utf8__refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.yml"
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path, display="bad.yml")
    assert "not valid UTF-8" in str(err.value)
