"""Safe YAML in, with line numbers.

ruamel.yaml's round-trip loader keeps comments but accepts any tag
(``!!python/object/apply:…`` arrives as a tagged node, not an error) and expands alias
bombs ("billion laughs") when converted to plain data. So configs are *composed* to a node
graph, every node is checked (only the YAML 1.2 core tags; a bounded number of nodes after
alias expansion), and converted to plain Python by hand, recording the line of every key
and value so that validation errors can name them.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate.errors import ConfigError, Problem

if TYPE_CHECKING:
    from ruamel.yaml.nodes import Node, ScalarNode

MAX_NODES = 50_000
"""Most nodes a YAML document may expand to (alias bombs stop here)."""

MAX_BYTES = 1_000_000

_CORE = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "map", "seq")}

Path_ = tuple[str | int, ...]


@dataclass(slots=True)
class YamlDoc:
    """Plain data plus where each part of it stands in the file."""

    data: Any
    file: str
    lines: dict[Path_, int] = field(default_factory=dict)
    spans: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    """path → (start, end) character offsets of each scalar value (for byte-exact edits)."""

    def line_of(self, path: Path_) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)

    def error(self, line: int | None, field: str | None, message: str) -> ConfigError:
        """The error for ``field`` on ``line`` of this document."""
        return ConfigError(Problem(self.file, line, field, message))


def load_yaml(path: Path, *, display: str | None = None) -> YamlDoc:
    """Read and safely decode one YAML file. Raises :class:`ConfigError` with a line."""
    name = display or str(path)
    whole = YamlDoc(None, name)  # what is said of the file as a whole
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise whole.error(None, None, f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise whole.error(None, None, f"larger than {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise whole.error(None, None, f"not valid UTF-8 (byte {exc.start})") from None
    return parse_yaml(text, name)


MAX_DEPTH = 64
"""Deepest nesting of a YAML document (ruamel's composer and our conversion recurse)."""


def parse_yaml(text: str, name: str) -> YamlDoc:
    # ruamel loads here, not with this module: a command that reads no YAML
    # (``toolgate score --dataset``) does not import it.
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, ReusedAnchorWarning, YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.max_depth = MAX_DEPTH  # deeper raises a marked error instead of RecursionError
    doc = YamlDoc(data=None, file=name)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ReusedAnchorWarning)
            node = yaml.compose(text)
        for w in caught:
            if issubclass(w.category, ReusedAnchorWarning):
                # YAML lets a later `&a` silently replace an earlier one: ambiguous, refused.
                second = str(w.message).rsplit("second occurrence", 1)[-1]
                m = re.search(r"line (\d+)", second)
                anchor = re.search(r"duplicate anchor '([^']*)'", str(w.message))
                raise doc.error(
                    int(m.group(1)) if m else None,
                    None,
                    f"invalid YAML: the anchor &{anchor.group(1) if anchor else '?'} is "
                    "defined twice",
                )
    except MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        problem = exc.problem
        if isinstance(problem, str) and problem.startswith("maximum depth"):
            problem = f"nesting deeper than {MAX_DEPTH} levels"
        raise doc.error(line, None, f"invalid YAML: {problem}") from None
    except YAMLError as exc:
        # ruamel's ReaderError (a NUL or other control character) carries no mark, only a
        # character offset: turn that into the line, and say which character it is.
        position = getattr(exc, "position", None)
        line = text.count("\n", 0, position) + 1 if isinstance(position, int) else None
        char = getattr(exc, "character", None)
        if isinstance(char, int) and line is not None:
            reason = getattr(exc, "reason", "")  # ReaderError has it; YAMLError's stub does not
            message = f"invalid YAML: character U+{char:04X} is not allowed ({reason})"
        else:
            message = f"invalid YAML: {exc}"
        raise doc.error(line, None, message) from None
    if node is None:
        doc.data = {}
        return doc
    budget = [MAX_NODES]
    doc.data = _convert(node, (), doc, budget)
    return doc


def _convert(node: Node, path: Path_, doc: YamlDoc, budget: list[int]) -> Any:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    budget[0] -= 1
    line = node.start_mark.line + 1
    if budget[0] < 0:
        raise _refused(
            doc, line, path, f"document expands to more than {MAX_NODES} nodes (alias bomb?)"
        )
    if node.tag not in _ALLOWED_TAGS:
        raise _refused(doc, line, path, f"YAML tag {node.tag!r} is not allowed (plain data only)")
    doc.lines.setdefault(path, line)
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            # `<<` is tagged merge, not str: name it rather than say "plain strings".
            if isinstance(key_node, ScalarNode) and (
                key_node.tag == _CORE + "merge"
                or (key_node.tag == _CORE + "str" and key_node.value == "<<")
            ):
                raise _refused(doc, line, path, "merge keys (<<) are not supported")
            if not isinstance(key_node, ScalarNode) or key_node.tag != _CORE + "str":
                raise _refused(doc, line, path, "keys must be plain strings")
            key = str(key_node.value)
            child = (*path, key)
            if key in out:
                raise _refused(doc, line, child, "duplicate key")
            doc.lines[child] = line
            out[key] = _convert(value_node, child, doc, budget)
        return out
    if isinstance(node, SequenceNode):
        return [_convert(item, (*path, i), doc, budget) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    doc.spans[path] = (node.start_mark.index, node.end_mark.index)
    return _scalar(node, path, doc)


def _refused(doc: YamlDoc, line: int, path: Path_, message: str) -> ConfigError:
    """The error for the node at ``path``, on ``line`` of the document."""
    return doc.error(line, dotted(path) or None, message)


def _scalar(node: ScalarNode, path: Path_, doc: YamlDoc) -> Any:
    value: str = node.value
    tag = node.tag
    if tag == _CORE + "str":
        return value
    if tag == _CORE + "null":
        return None
    if tag == _CORE + "bool":
        return value.lower() == "true"
    if tag == _CORE + "int":
        try:
            cleaned = value.replace("_", "")
            if cleaned.lower().startswith(("0o", "-0o", "+0o")):
                return int(cleaned.replace("0o", "").replace("0O", ""), 8)
            return (
                int(cleaned, 0) if cleaned.lower().lstrip("+-").startswith("0x") else int(cleaned)
            )
        except ValueError:
            return value
    if tag == _CORE + "float":
        try:
            f = float(value.replace("_", ""))
        except ValueError:
            f = math.nan
        if not math.isfinite(f):
            line = node.start_mark.line + 1
            raise _refused(doc, line, path, f"{value!r}: numbers must be finite")
        return f
    return value


def dotted(path: Path_) -> str:
    """``a.b[0].c``: a path as the config names it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
