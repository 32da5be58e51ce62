"""Tool definitions: inline in a case or in a referenced ``@file.json``.

A tool is given in the OpenAI shape ``{"type": "function", "function": {name, description,
parameters, strict?, annotations?}}`` or bare ``{name, description, parameters, strict?,
annotations?}``; either way it becomes a :class:`gate.model.ToolSpec`. ``annotations`` are
MCP's tool annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint`` — booleans — and ``title``): the hints say the tool's effect
(``gate.scorers.effects``). ``parameters`` must be a schema the scorer can use,
by the scorer's own checks (:mod:`gate.scorers.schema`): valid against the meta-schema its
``$schema`` names (default: draft 2020-12), with ``format: regex`` enforced, so a bad
``pattern`` is caught here rather than when the scorer compiles it; only local ``$ref`` s
(``#/...``) that point at something (the gate never fetches anything from the network);
no ``unevaluatedProperties`` beside ``patternProperties`` (their patterns could not be
bounded in time).

Parsing a tool is pure and cached by the tool's canonical JSON, and a referenced file is
read, hashed and checked once, however many cases point at it (100,000 cases sharing one
``@tools.json`` cost one schema check per tool).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import jsonio
from gate.dataset.matchers import did_you_mean, json_kind
from gate.errors import Problem
from gate.model import ToolSpec
from gate.scorers.schema import dialect, meta_errors, usage_problems

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
"""Accepted tool names: OpenAI's ``^[a-zA-Z0-9_-]{1,64}$`` widened for namespaced
(MCP-style ``server.tool`` / ``server:tool``) names."""

_FUNCTION_KEYS = ("name", "description", "parameters", "strict", "annotations")
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""MCP's boolean tool annotations; ``title`` is text, and other keys are kept as given."""
_WRAPPER_KEYS = ("type", "function")
_JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}

Issue = tuple[str, str]
"""(field relative to the tool, message)."""


def parse_tool(obj: Any) -> tuple[ToolSpec | None, list[Issue]]:
    """One tool definition → (spec, issues). The spec is None when it is unusable."""
    issues: list[Issue] = []
    if not isinstance(obj, dict):
        return None, [("", f"a tool must be an object, not {json_kind(obj)}")]
    prefix = ""
    fn: Any = obj
    if "function" in obj or "type" in obj:
        for key in obj:
            if key not in _WRAPPER_KEYS:
                issues.append((f".{key}", f"unknown key{did_you_mean(key, _WRAPPER_KEYS)}"))
        if obj.get("type") != "function":
            issues.append((".type", f'must be "function", not {obj.get("type")!r}'))
        fn = obj.get("function")
        prefix = ".function"
        if not isinstance(fn, dict):
            issues.append(
                (
                    prefix,
                    f"must be an object with name, description and parameters, not {json_kind(fn)}",
                )
            )
            return None, issues
    for key in fn:
        if key not in _FUNCTION_KEYS:
            hint = did_you_mean(key, _FUNCTION_KEYS)
            if key == "input_schema":
                hint = " (Anthropic's `input_schema` is called `parameters` here)"
            issues.append((f"{prefix}.{key}", f"unknown key{hint}"))
    name = fn.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        issues.append(
            (
                f"{prefix}.name",
                f"must be a tool name of letters, digits and _ . : - (1-128), not {name!r}",
            )
        )
        name = None
    description = fn.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        issues.append((f"{prefix}.description", f"must be a string, not {json_kind(description)}"))
        description = ""
    if "strict" in fn and not isinstance(fn["strict"], bool):
        issues.append((f"{prefix}.strict", f"must be true or false, not {fn['strict']!r}"))
    parameters = fn.get("parameters", _EMPTY_PARAMETERS)
    if parameters is None:
        parameters = _EMPTY_PARAMETERS
    issues.extend(schema_issues(parameters, f"{prefix}.parameters"))
    annotations = fn.get("annotations")
    if annotations is not None:
        issues.extend(annotation_issues(annotations, f"{prefix}.annotations"))
    if issues or name is None:
        return None, issues
    return (
        ToolSpec(
            name=name, description=description, parameters=parameters, annotations=annotations
        ),
        [],
    )


def annotation_issues(annotations: Any, field: str) -> list[Issue]:
    """Problems with a tool's MCP annotations: an object whose hints are booleans and whose
    ``title`` is text. A key that misspells a hint is refused (a misspelt ``readOnlyHint``
    would silently make a read count as a write); other keys are kept as given."""
    if not isinstance(annotations, dict):
        return [(field, f"must be an object of MCP tool annotations, not {json_kind(annotations)}")]
    issues: list[Issue] = []
    folded = {h.casefold(): h for h in ANNOTATION_HINTS}
    for key, v in annotations.items():
        if key in ANNOTATION_HINTS:
            if not isinstance(v, bool):
                issues.append((f"{field}.{key}", f"must be true or false, not {v!r}"[:200]))
        elif key == "title":
            if not isinstance(v, str):
                issues.append((f"{field}.title", f"must be a string, not {json_kind(v)}"))
        elif key.casefold() in folded or did_you_mean(key, ANNOTATION_HINTS):
            hint = (
                did_you_mean(key, ANNOTATION_HINTS)
                or f" (did you mean {folded[key.casefold()]!r}?)"
            )
            issues.append((f"{field}.{key}", f"unknown annotation{hint}"))
    return issues


def schema_issues(schema: Any, field: str) -> list[Issue]:
    """Problems that make ``schema`` unusable as a tool's argument schema: the checks
    the scorer's validator makes (:mod:`gate.scorers.schema`), and ``type: object``."""
    if not isinstance(schema, dict):
        return [(field, f"must be a JSON Schema object, not {json_kind(schema)}")]
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        # jsonschema would hash it: TypeError
        return [(f"{field}.$schema", f"must be a dialect URI, not {json_kind(schema['$schema'])}")]
    cls = dialect(schema)
    if cls is None:
        return [(f"{field}.$schema", f"unknown JSON Schema dialect {schema['$schema']!r}")]
    issues: list[Issue] = []
    for err in meta_errors(cls, schema)[:5]:
        message = err.message
        if err.absolute_path and err.absolute_path[-1] == "type" and isinstance(err.instance, str):
            message = (
                f"{err.instance!r} is not a JSON type{did_you_mean(err.instance, _JSON_TYPES)}"
            )
        issues.append((field + _path(err.absolute_path), f"not a valid JSON Schema: {message}"))
    if issues:
        return issues
    if schema.get("type", "object") != "object":
        issues.append(
            (
                f"{field}.type",
                f'tool arguments are an object: must be "object", not {schema["type"]!r}',
            )
        )
    problems = usage_problems(cls, schema)
    if problems:
        at, message = problems[0]
        issues.append((field + _path(at), message))
    return issues


def _path(path: Iterable[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


@dataclass(slots=True)
class ToolFile:
    """A referenced tools file, read and checked once."""

    path: Path
    relpath: str
    """The path relative to the dataset's folder, POSIX separators (used in the hash)."""
    sha256: str
    tools: tuple[ToolSpec, ...]
    problems: list[Problem] = field(default_factory=list)


class ToolResolver:
    """Turns a case's ``available_tools`` value into tool specs, caching files and
    inline definitions. Problems inside a referenced file are reported once, against
    that file and the line of the offending tool."""

    def __init__(self, dataset_dir: Path, root: Path, display_dir: str):
        self.dataset_dir = dataset_dir
        self.root = root.resolve()
        self.display_dir = display_dir
        self.files: dict[Path, ToolFile] = {}
        self._missing: dict[str, str] = {}
        self._by_ref: dict[str, ToolFile] = {}
        self._inline: dict[str, tuple[ToolSpec | None, list[Issue]]] = {}

    def inline(self, obj: Any) -> tuple[ToolSpec | None, list[Issue]]:
        try:
            key = jsonio.canonical(obj)
        except TypeError:  # pragma: no cover - decoded JSON is always serialisable
            return parse_tool(obj)
        hit = self._inline.get(key)
        if hit is None:
            hit = parse_tool(obj)
            if len(self._inline) < 10_000:  # bound the cache on pathological datasets
                self._inline[key] = hit
        return hit

    def reference(self, ref: str) -> tuple[ToolFile | None, str | None]:
        """``"@tools.json"`` → (file, None) or (None, why it cannot be used). A file
        that exists but holds problems is returned with them in ``problems``."""
        if ref in self._missing:
            return None, self._missing[ref]
        hit = self._by_ref.get(ref)
        if hit is not None:  # resolving the path again per case costs more than parsing the case
            return hit, None
        target = ref[1:]
        why: str | None = None
        if not target:
            why = 'an @ reference needs a file name, e.g. "@tools.json"'
        elif os.path.isabs(target) or re.match(r"^[A-Za-z]:[\\/]", target):
            why = f"{ref!r} is an absolute path; write it relative to the dataset's folder"
        else:
            full = (self.dataset_dir / target).resolve()
            if not full.is_relative_to(self.root):
                why = (
                    f"{ref!r} points outside the dataset's folder ({self._show(self.root)}); "
                    "references may not leave it"
                )
            elif full in self.files:
                self._by_ref[ref] = self.files[full]
                return self.files[full], None
            elif not full.is_file():
                near = sorted(p.name for p in self.dataset_dir.glob("*.json"))
                why = (
                    f"{ref!r}: no such file "
                    f"{self._show(full)}{did_you_mean(Path(target).name, near)}"
                )
            else:
                tf = self._read(full)
                self.files[full] = tf
                self._by_ref[ref] = tf
                return tf, None
        self._missing[ref] = why
        return None, why

    def _show(self, path: Path) -> str:
        try:
            rel = os.path.relpath(path, self.dataset_dir)
        except ValueError:
            return str(path)
        return _join(self.display_dir, Path(rel).as_posix())

    def _read(self, full: Path) -> ToolFile:
        rel = Path(os.path.relpath(full, self.dataset_dir)).as_posix()
        display = _join(self.display_dir, rel)
        raw = full.read_bytes()
        tf = ToolFile(full, rel, hashlib.sha256(raw).hexdigest(), ())
        try:
            data = jsonio.loads_strict(raw)
        except jsonio.JsonInputError as exc:
            tf.problems.append(Problem(display, _error_line(raw, str(exc)), None, str(exc)))
            return tf
        if not isinstance(data, list):
            said = f"must be a JSON array of tool definitions, not {json_kind(data)}"
            tf.problems.append(Problem(display, 1, None, said))
            return tf
        text = raw.decode("utf-8")
        starts = [start for start, _ in _element_spans(text)]  # each tool's offset
        specs: list[ToolSpec] = []
        seen: dict[str, int] = {}
        for i, obj in enumerate(data):
            start = starts[i] if i < len(starts) else 0
            line = text.count("\n", 0, start) + 1
            spec, issues = self.inline(obj)
            for sub, msg in issues:
                # the line of the offending field, not of the tool it is in
                at = _field_line(text, start, sub) if i < len(starts) else None
                tf.problems.append(Problem(display, at or line, f"[{i}]{sub}", msg))
            if spec is None:
                continue
            if spec.name in seen:
                tf.problems.append(
                    Problem(
                        display,
                        line,
                        f"[{i}].name",
                        f"duplicate tool {spec.name!r} (first at line {seen[spec.name]})",
                    )
                )
                continue
            seen[spec.name] = line
            specs.append(spec)
        tf.tools = tuple(specs)
        return tf


def _join(display_dir: str, rel: str) -> str:
    return rel if display_dir in ("", ".") else f"{display_dir.rstrip('/')}/{rel}"


def _error_line(raw: bytes, message: str) -> int | None:
    """The line of a JSON syntax error (``loads_strict`` gives the column only); for a
    problem found after decoding (a duplicate key, ``NaN``, deep nesting, a number out of
    range), the line of the first tool the strict decoder refuses (else line 1)."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        return exc.lineno
    except UnicodeDecodeError:
        return None  # "not valid UTF-8": a problem of the whole file
    except (ValueError, RecursionError):
        pass
    return _refused_element_line(raw)


def _refused_element_line(raw: bytes) -> int | None:
    """1-based line of the first top-level array element that ``loads_strict`` refuses."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for start, end in _element_spans(text):
        try:
            if end is None:
                raise ValueError("not a JSON value")
            jsonio.loads_strict(text[start:end])
        except (ValueError, RecursionError):  # JsonInputError is a ValueError
            return text.count("\n", 0, start) + 1
    return 1


def _element_spans(text: str) -> list[tuple[int, int | None]]:
    """(start, end) of each element of a top-level JSON array; the end is None for an
    element that does not decode (the last one listed)."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, int | None]] = []
    i = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if i >= len(text) or text[i] != "[":
        return out
    i += 1
    while True:
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if i >= len(text) or text[i] == "]":
            return out
        start = i
        try:
            _, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            out.append((start, None))
            return out
        out.append((start, i))
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if i < len(text) and text[i] == ",":
            i += 1


_WS = re.compile(r"[ \t\r\n]*")
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _field_line(text: str, start: int, field: str) -> int | None:
    """The 1-based line of ``field`` (``.function.parameters.properties.x.type``, as the
    tool's issues name it) inside the JSON value at ``start``: the line of the deepest
    key or element of the path that is there (None when the text cannot be walked)."""
    decoder = json.JSONDecoder()
    segments: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _SEGMENT.finditer(field)
    ]
    i, found = start, start
    try:
        for seg in segments:
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            opener = text[i : i + 1]
            if opener == "{" and isinstance(seg, str):
                i += 1
                while True:
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    if text[i : i + 1] != '"':
                        return text.count("\n", 0, found) + 1
                    key_at = i
                    key, i = decoder.raw_decode(text, i)
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    i += 1  # the colon
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    if key == seg:
                        found = key_at
                        break
                    _, i = decoder.raw_decode(text, i)
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    if text[i : i + 1] == ",":
                        i += 1
            elif opener == "[" and isinstance(seg, int):
                i += 1
                for _ in range(seg):
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    _, i = decoder.raw_decode(text, i)
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    if text[i : i + 1] != ",":
                        return text.count("\n", 0, found) + 1
                    i += 1
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                found = i
            else:
                break
    except (ValueError, RecursionError, IndexError):
        return None
    return text.count("\n", 0, found) + 1
