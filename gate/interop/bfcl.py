"""BFCL → a ToolGate dataset and a ready ``toolgate.yml``.

One BFCL category (its questions file and, except for the irrelevance categories, its
possible answers) becomes dataset rows, one per BFCL item, with the BFCL id as the case
id. docs/interop.md ("What the importer writes") gives the mapping in full. BFCL trusts
its possible answers over its function docs, and so does the import: each contradiction
is widened (:func:`admit`) or left out, reported as a :class:`SchemaNote` (``repaired``
when the import reproduces BFCL's verdict despite it) and written to the case's ``notes``.
"""

from __future__ import annotations

import enum
import importlib.util
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from gate import jsonio
from gate.errors import Problem
from gate.interop import InteropError
from gate.interop._records import Locator, Record, read_records, refuse_existing, write_cases
from gate.scorers.schema import StringRule, authority, in_enum

MAX_EXPANSION = 4096
"""Most concrete values one parameter's options may expand to (dict options multiply)."""

_OMIT = object()
"""Marks "this key may be left out" while expanding dict options."""


class Kind(enum.StrEnum):
    """How a category's items are scored."""

    SINGLE = "single"
    """One expected call (``simple_*``, ``multiple``, ``live_simple``, ``live_multiple``)."""
    PARALLEL = "parallel"
    """Several calls in one unordered batch (``parallel*``)."""
    IRRELEVANCE = "irrelevance"
    """No call is right (``irrelevance``, ``live_irrelevance``)."""
    RELEVANCE = "relevance"
    """Some call is right, whichever (``live_relevance``: BFCL passes an output holding at
    least one function call, whatever its function and arguments)."""

    @property
    def has_answers(self) -> bool:
        """Whether the category ships a possible-answers file."""
        match self:
            case Kind.SINGLE | Kind.PARALLEL:
                return True
            case Kind.IRRELEVANCE | Kind.RELEVANCE:
                return False


CATEGORIES: dict[str, Kind] = {
    "simple_python": Kind.SINGLE,
    "multiple": Kind.SINGLE,
    "parallel": Kind.PARALLEL,
    "parallel_multiple": Kind.PARALLEL,
    "irrelevance": Kind.IRRELEVANCE,
    "live_simple": Kind.SINGLE,
    "live_multiple": Kind.SINGLE,
    "live_parallel": Kind.PARALLEL,
    "live_parallel_multiple": Kind.PARALLEL,
    "live_irrelevance": Kind.IRRELEVANCE,
    "live_relevance": Kind.RELEVANCE,
}
"""The BFCL categories this importer converts (the Python AST and (ir)relevance ones)."""

_UNSUPPORTED: dict[str, str] = {
    "simple_java": "its values are Java source text checked by BFCL's Java type converter",
    "simple_javascript": "its values are JavaScript source text checked by BFCL's JS converter",
    "multi_turn": "multi-turn categories are checked by executing BFCL's simulated APIs",
    "memory": "memory categories are checked by executing BFCL's backends",
    "web_search": "web-search categories need live search",
    "format_sensitivity": "format-sensitivity entries are prompt variations of other categories",
}

_TYPE_MAP: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": None,
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
    # Already JSON Schema (some live items mix the two vocabularies).
    "object": "object",
    "number": "number",
    "null": "null",
}


@dataclass(frozen=True, slots=True)
class SchemaNote:
    """A BFCL item whose possible answer contradicts its own function doc."""

    case_id: str
    field: str
    message: str
    repaired: bool = False
    """The importer reproduced BFCL's verdict despite the contradiction (the schema admits
    the value, or the expected call leaves out a parameter BFCL refuses)."""

    def __str__(self) -> str:
        return f"{self.case_id}: {self.field}: {self.message}"


@dataclass(slots=True)
class BfclImport:
    """The result of converting one category."""

    category: str
    kind: Kind
    cases: list[dict[str, Any]]
    notes: list[SchemaNote] = field(default_factory=list)
    """Possible answers that contradict their own schema (the items are converted)."""
    skipped: list[SchemaNote] = field(default_factory=list)
    """Items left out because BFCL itself rejects every output for them."""
    source: str = ""


# ─── locating the files ──────────────────────────────────────────────────────


def category_kind(category: str) -> Kind:
    """The :class:`Kind` of ``category``; an :class:`InteropError` if not convertible."""
    if category in CATEGORIES:
        return CATEGORIES[category]
    for prefix, why in _UNSUPPORTED.items():
        if category.startswith(prefix):
            raise InteropError(
                Problem("toolgate", None, "--category", f"{category!r} is not supported: {why}"),
                hint=f"supported categories: {', '.join(CATEGORIES)}",
            )
    raise InteropError(
        Problem("toolgate", None, "--category", f"unknown BFCL category {category!r}"),
        hint=f"supported categories: {', '.join(CATEGORIES)}",
    )


def bfcl_data_dir() -> Path:
    """The ``data`` folder of the installed ``bfcl-eval`` package (found without importing
    it: importing ``bfcl_eval`` pulls in its model handlers)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise InteropError(
            Problem("toolgate", None, "--category", "the bfcl-eval package is not installed"),
            hint="install it with `pip install 'toolgate[bfcl]'`, or pass --data-dir, or "
            "--questions and --answers",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def locate_category(category: str, data_dir: Path | None = None) -> tuple[Path, Path | None]:
    """(questions file, possible-answers file or None) of ``category`` in a BFCL data folder
    (the installed package's by default); the newest ``BFCL_v<N>_`` version wins."""
    kind = category_kind(category)
    folder = data_dir if data_dir is not None else bfcl_data_dir()
    pattern = re.compile(rf"BFCL_v\d+_{re.escape(category)}\.json")
    candidates = sorted(
        (p for p in folder.glob("BFCL_v*.json") if pattern.fullmatch(p.name)),
        key=lambda p: _version_of(p.name),
        reverse=True,
    )
    if not candidates:
        raise InteropError(
            Problem(str(folder), None, "--category", f"no BFCL_v*_{category}.json in this folder")
        )
    questions = candidates[0]
    answers = folder / "possible_answer" / questions.name
    if not kind.has_answers:
        return questions, None
    if not answers.is_file():
        raise InteropError(
            Problem(str(answers), None, "--category", "possible answers file missing")
        )
    return questions, answers


def _version_of(name: str) -> int:
    m = re.match(r"BFCL_v(\d+)_", name)
    return int(m.group(1)) if m else -1


def category_of_id(case_id: str) -> str:
    """``simple_python_12`` → ``simple_python``; ``live_multiple_3-1-0`` → ``live_multiple``."""
    return case_id.rsplit("_", 1)[0]


# ─── schemas ─────────────────────────────────────────────────────────────────


def convert_schema(node: Any, where: str, loc: Locator, rec: Record) -> dict[str, Any]:
    """One BFCL parameter schema (recursively) → JSON Schema; unknown types are problems."""
    if not isinstance(node, dict):
        loc.add(rec, where, "a parameter schema must be an object")
        return {}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            converted = _convert_type(value, f"{where}.type", loc, rec)
            if converted is not None:
                out["type"] = converted
        elif key == "properties":
            if not isinstance(value, dict):
                loc.add(rec, f"{where}.properties", "must be an object")
                continue
            out["properties"] = {
                name: convert_schema(sub, f"{where}.properties.{name}", loc, rec)
                for name, sub in value.items()
            }
        elif key == "items":
            out["items"] = convert_schema(value, f"{where}.items", loc, rec)
        elif key == "additionalProperties" and isinstance(value, dict):
            out["additionalProperties"] = convert_schema(value, f"{where}.{key}", loc, rec)
        else:
            out[key] = value
    # BFCL writes `"default": None` for parameters whose answers accept None; JSON Schema
    # needs the type to say so, or those answers would fail schema validity.
    if "default" in node and node["default"] is None and "type" in out:
        t = out["type"]
        types = t if isinstance(t, list) else [t]
        if "null" not in types:
            out["type"] = [*types, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def _convert_type(value: Any, where: str, loc: Locator, rec: Record) -> Any:
    names = value if isinstance(value, list) else [value]
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or name not in _TYPE_MAP:
            loc.add(rec, where, f"unknown BFCL type {name!r} (known: {', '.join(_TYPE_MAP)})")
            return None
        mapped = _TYPE_MAP[name]
        if mapped is None:  # "any": no constraint at all
            return None
        if mapped not in out:
            out.append(mapped)
    return out[0] if len(out) == 1 else out


def _declared_type(schema: Mapping[str, Any]) -> str | None:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return t if isinstance(t, str) else None


# ─── possible answers → matchers ─────────────────────────────────────────────


def _enum_fold(v: Any) -> Any:
    """How the dataset loader compares a value with an enum (case-insensitively)."""
    return v.strip().casefold() if isinstance(v, str) else repr(v)


_JSON_TYPE: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _type_admits(types: list[Any], value: Any) -> bool:
    name = _JSON_TYPE.get(type(value))
    if name in types:
        return True
    if name == "integer":
        return "number" in types
    if name == "number":
        return "integer" in types and float(value).is_integer()
    return False


def admit(schema: dict[str, Any], value: Any) -> list[str]:
    """Widen ``schema`` in place so that ``value`` — an answer BFCL accepts — fits it, and
    say what changed (nothing when it already fits).

    BFCL's checker trusts its possible answers over its function docs: it never reads a
    parameter's ``enum``, and it accepts a value of the answer's own type whatever the
    doc declares (its "variable" rule). The schema is widened just that far — the value
    joins the ``enum``, its JSON type joins ``type``, recursively through ``items`` and
    ``properties`` — so that ``schema_valid`` agrees with BFCL's verdict on the answer.
    Every other keyword is left alone (a value breaking one stays a contradiction)."""
    repairs: list[str] = []
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if isinstance(t, str) else None
    if types is not None and not _type_admits(types, value):
        name = _JSON_TYPE.get(type(value), "string")
        schema["type"] = [*types, name]
        repairs.append(f"is not of type {t!r}: the schema's type admits {name!r}")
    enum = schema.get("enum")
    if isinstance(enum, list) and not (
        # In it as the profile's schema check sees it, and as the dataset loader does.
        in_enum(value, enum, StringRule.BFCL) and _enum_fold(value) in {_enum_fold(e) for e in enum}
    ):
        schema["enum"] = [*enum, value]
        repairs.append(f"is not in the enum {enum}: the schema's enum admits it")
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for v in value:
            repairs.extend(f"(an item) {r}" for r in admit(items, v))
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, dict):
        for k, v in value.items():
            sub = props.get(k)
            if isinstance(sub, dict):
                repairs.extend(f"(at {k!r}) {r}" for r in admit(sub, v))
    return repairs


def _dedupe(values: Iterable[Any]) -> list[Any]:
    seen: set[str] = set()
    out: list[Any] = []
    for v in values:
        # Type-tagged so that 5, 5.0 and True stay three options.
        key = f"{type(v).__name__}:{jsonio.canonical(v)}"
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _expand_dict(option: Any, where: str, loc: Locator, rec: Record) -> list[Any]:
    """A BFCL dict option ``{key: [options]}`` → every concrete object it allows."""
    if not isinstance(option, dict):
        return [option]
    keys = list(option)
    choices: list[list[Any]] = []
    for key in keys:
        opts = option[key]
        if not isinstance(opts, list):
            loc.add(rec, f"{where}.{key}", "options of a dict key must be an array")
            return []
        values: list[Any] = [o for o in opts if o != ""]
        if any(o == "" for o in opts):
            values.append(_OMIT)
        choices.append(values)
    total = math.prod(max(len(c), 1) for c in choices)
    if total > MAX_EXPANSION:
        loc.add(rec, where, f"dict options expand to {total} objects (more than {MAX_EXPANSION})")
        return []
    return [
        {k: v for k, v in zip(keys, combo, strict=True) if v is not _OMIT}
        for combo in itertools.product(*choices)
    ]


def _expand_option(
    option: Any, schema: Mapping[str, Any], where: str, loc: Locator, rec: Record
) -> list[Any]:
    declared = _declared_type(schema)
    if declared == "object" and isinstance(option, dict):
        return _expand_dict(option, where, loc, rec)
    items = schema.get("items")
    if (
        declared == "array"
        and isinstance(items, dict)
        and _declared_type(items) == "object"
        and isinstance(option, list)
        and option
        and all(isinstance(o, dict) for o in option)
    ):
        per_item = [_expand_dict(o, f"{where}[{i}]", loc, rec) for i, o in enumerate(option)]
        total = math.prod(max(len(p), 1) for p in per_item)
        if total > MAX_EXPANSION:
            loc.add(
                rec,
                where,
                f"list-of-dict options expand to {total} lists (more than {MAX_EXPANSION})",
            )
            return []
        return [list(combo) for combo in itertools.product(*per_item)]
    return [option]


def _adjust_numbers(values: list[Any], schema: Mapping[str, Any]) -> list[Any]:
    declared = _declared_type(schema)
    out: list[Any] = []
    for v in values:
        is_num = isinstance(v, int | float) and not isinstance(v, bool)
        if declared == "number" and is_num and isinstance(v, int):
            out.append(float(v))
        elif declared == "integer" and is_num and isinstance(v, float) and v.is_integer():
            out.extend([int(v), v])
        else:
            out.append(v)
    return out


def expand_options(
    options: list[Any], schema: Mapping[str, Any], where: str, loc: Locator, rec: Record
) -> tuple[list[Any], bool]:
    """(every concrete acceptable value, may the parameter be omitted) of one BFCL option
    list, dict options expanded; values as BFCL wrote them (no number adjustment)."""
    optional = any(o == "" for o in options)
    values: list[Any] = []
    for i, option in enumerate(options):
        if option == "":
            continue
        values.extend(_expand_option(option, schema, f"{where}[{i}]", loc, rec))
    if len(values) > MAX_EXPANSION:
        loc.add(rec, where, f"{len(values)} acceptable values (more than {MAX_EXPANSION})")
    return values, optional


def matcher_for(values: list[Any], optional: bool, schema: Mapping[str, Any]) -> Any:
    """Concrete acceptable values → a dataset matcher (plain value or ``$in``)."""
    out = _dedupe(_adjust_numbers(values, schema))
    if optional:
        out.append("")
    # A plain object could be mistaken for a matcher; objects always go inside `$in`.
    if len(out) == 1 and not isinstance(out[0], dict) and not optional:
        return out[0]
    return {"$in": out}


# ─── one item ────────────────────────────────────────────────────────────────


def _tool_name(name: str, underscore_names: bool) -> str:
    return name.replace(".", "_") if underscore_names else name


@dataclass(slots=True)
class _Item:
    rec: Record
    case_id: str
    question: dict[str, Any]


def _convert_functions(
    item: _Item, underscore_names: bool, loc: Locator
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    rec = item.rec
    functions = item.question.get("function")
    if not isinstance(functions, list):
        loc.add(rec, rec.field("function"), "must be an array of function docs")
        return [], {}
    tools: list[dict[str, Any]] = []
    schemas: dict[str, dict[str, Any]] = {}
    for i, fn in enumerate(functions):
        where = rec.field("function", i)
        if not isinstance(fn, dict):
            loc.add(rec, where, "must be an object")
            continue
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            loc.add(rec, f"{where}.name", "must be a non-empty string")
            continue
        params = convert_schema(
            fn.get("parameters", {"type": "dict", "properties": {}}),
            f"{where}.parameters",
            loc,
            rec,
        )
        tool_name = _tool_name(name, underscore_names)
        if tool_name in schemas:
            loc.add(rec, f"{where}.name", f"two functions are named {tool_name!r}")
            continue
        schemas[name] = params
        spec: dict[str, Any] = {"name": tool_name, "parameters": params}
        description = fn.get("description")
        if isinstance(description, str):
            spec["description"] = description
        tools.append({"type": "function", "function": spec})
    return tools, schemas


def _messages(item: _Item, loc: Locator) -> tuple[str, list[dict[str, Any]]]:
    rec = item.rec
    question = item.question.get("question")
    if (
        not isinstance(question, list)
        or not question
        or not isinstance(question[0], list)
        or not question[0]
    ):
        loc.add(rec, rec.field("question"), "must be an array holding one array of messages")
        return "", []
    if len(question) > 1:
        loc.add(
            rec, rec.field("question"), f"has {len(question)} turns; only single-turn items convert"
        )
        return "", []
    messages = question[0]
    for i, m in enumerate(messages):
        if (
            not isinstance(m, dict)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            loc.add(rec, rec.field("question", "[0]", i), "must be {role: string, content: string}")
            return "", []
    last = messages[-1]
    if last["role"] != "user":
        loc.add(
            rec,
            rec.field("question", "[0]", len(messages) - 1),
            "the last message must be the user's",
        )
        return "", []
    history = [{"role": m["role"], "content": m["content"]} for m in messages[:-1]]
    return str(last["content"]), history


def _check_answer_against_schema(
    case_id: str,
    where: str,
    fn_name: str,
    answer: Mapping[str, tuple[list[Any], bool]],
    schema: Mapping[str, Any],
    notes: list[SchemaNote],
) -> None:
    """Note every way ``answer`` (param → (concrete values, optional)) contradicts the
    function's own schema."""
    raw_props = schema.get("properties")
    props: Mapping[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    raw_required = schema.get("required")
    required: list[Any] = raw_required if isinstance(raw_required, list) else []
    notes += [
        SchemaNote(case_id, f"{fn_name}.required", f"{name!r} is required but not declared")
        for name in required
        if name not in props
    ]
    for p, (values, optional) in answer.items():
        if p not in props:
            why = f"the answer sets {p!r}, which {fn_name} does not declare"
            notes.append(SchemaNote(case_id, f"{where}.{p}", why))
            continue
        if p in required and optional:
            why = f"the answer lets {p!r} be omitted, but {fn_name} requires it"
            notes.append(SchemaNote(case_id, f"{where}.{p}", why))
        validator = authority(props[p], StringRule.BFCL)
        errors = [(v, jsonschema.exceptions.best_match(validator.iter_errors(v))) for v in values]
        notes += [
            SchemaNote(
                case_id,
                f"{where}.{p}",
                f"acceptable value {jsonio.canonical(v)} does not fit the schema: {err.message}",
            )
            for v, err in errors
            if err is not None
        ]


def _expected_calls(
    item: _Item,
    answer: Record,
    schemas: Mapping[str, dict[str, Any]],
    underscore_names: bool,
    loc: Locator,
    notes: list[SchemaNote],
    unpassable: list[SchemaNote],
) -> list[dict[str, Any]]:
    gt = answer.value.get("ground_truth") if isinstance(answer.value, dict) else None
    if not isinstance(gt, list) or not gt:
        loc.add(
            answer,
            answer.field("ground_truth"),
            "must be a non-empty array of {function: {param: [values]}}",
        )
        return []
    calls: list[dict[str, Any]] = []
    for i, entry in enumerate(gt):
        where = answer.field("ground_truth", i)
        if not isinstance(entry, dict) or len(entry) != 1:
            loc.add(answer, where, "must be an object with exactly one function name")
            continue
        ((fn_name, params),) = entry.items()
        if fn_name not in schemas:
            loc.add(answer, f"{where}.{fn_name}", f"{fn_name!r} is not among the item's functions")
            continue
        if not isinstance(params, dict):
            loc.add(
                answer, f"{where}.{fn_name}", "must be an object of parameter → acceptable values"
            )
            continue
        schema = schemas[fn_name]
        raw_props = schema.get("properties")
        props: Mapping[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        args: dict[str, Any] = {}
        expanded: dict[str, tuple[list[Any], bool]] = {}
        for p, opts in params.items():
            at = f"ground_truth[{i}].{fn_name}.{p}"
            if not isinstance(opts, list):
                loc.add(answer, f"{where}.{fn_name}.{p}", "acceptable values must be an array")
                continue
            if not opts:
                # BFCL then rejects every output (nothing is `in []`, and the parameter is
                # not optional): the item cannot be passed, so it is left out.
                why = "no acceptable value (an empty list): BFCL rejects every output"
                unpassable.append(SchemaNote(item.case_id, at, why))
                continue
            if p not in props:
                # BFCL refuses the parameter in any output ("Unexpected parameter"), and
                # an output without it unless the answer lets it be omitted.
                if any(o == "" for o in opts):
                    why = (
                        f"the answer sets {p!r}, which {fn_name} does not declare: "
                        "BFCL refuses it, so the expected call leaves it out"
                    )
                    notes.append(SchemaNote(item.case_id, at, why, repaired=True))
                else:
                    why = (
                        f"the answer needs {p!r}, which {fn_name} does not declare: "
                        "BFCL rejects every output"
                    )
                    unpassable.append(SchemaNote(item.case_id, at, why))
                continue
            prop = props[p]
            expanded[p] = expand_options(opts, prop, f"{where}.{fn_name}.{p}", loc, answer)
            values, optional = expanded[p]
            for v in values:
                for repair in admit(prop, v):
                    why = f"acceptable value {jsonio.canonical(v)} {repair}"
                    notes.append(SchemaNote(item.case_id, at, why, repaired=True))
            args[p] = matcher_for(values, optional, prop)
        _check_answer_against_schema(
            item.case_id, f"ground_truth[{i}].{fn_name}", fn_name, expanded, schema, notes
        )
        calls.append(
            {
                "name": _tool_name(fn_name, underscore_names),
                "args": args,
                "required_args_only": False,
            }
        )
    return calls


def _any_call(case: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    """BFCL's relevance rule as an expectation: one call to any offered tool, with any
    arguments (``required_args_only`` with no expected argument), each tool an
    alternative list, under ``order: superset`` (more calls are fine)."""
    lists = [
        [{"name": t["function"]["name"], "args": {}, "required_args_only": True}] for t in tools
    ]
    case["order"] = "superset"
    case["expected_no_tool"] = False
    case["expected_tool_calls"] = lists[0] if lists else []
    if len(lists) > 1:
        case["acceptable_alternatives"] = lists[1:]


# ─── the whole category ──────────────────────────────────────────────────────


def convert(
    questions: Path,
    answers: Path | None,
    *,
    category: str | None = None,
    underscore_names: bool = False,
    questions_display: str | None = None,
    answers_display: str | None = None,
) -> BfclImport:
    """Convert one BFCL category's files into dataset rows (see the module docstring).

    ``category`` defaults to the one named by the items' ids (all must agree).
    ``underscore_names`` turns ``.`` in function names into ``_`` (OpenAI-style APIs refuse
    dots; BFCL's checker does the same for those models). Every problem in either file is
    reported at once as an :class:`InteropError`.
    """
    qname = questions_display or str(questions)
    q_loc = Locator(qname)
    items: list[_Item] = []
    seen: set[str] = set()
    for rec in read_records(questions, display=qname):
        obj = rec.value
        if not isinstance(obj, dict):
            q_loc.add(rec, rec.pointer or None, "each item must be a JSON object")
            continue
        cid = obj.get("id")
        if not isinstance(cid, str) or not cid:
            q_loc.add(rec, rec.field("id"), "must be a non-empty string")
            continue
        if cid in seen:
            q_loc.add(rec, rec.field("id"), f"duplicate id {cid!r}")
            continue
        seen.add(cid)
        items.append(_Item(rec, cid, obj))
    q_loc.raise_if_any()
    if not items:
        raise InteropError(Problem(qname, None, None, "no BFCL items in this file"))

    if category is None:
        found = sorted({category_of_id(it.case_id) for it in items})
        if len(found) != 1:
            raise InteropError(
                Problem(
                    qname,
                    None,
                    "id",
                    f"items of several categories ({', '.join(found)}); pass --category",
                )
            )
        category = found[0]
    kind = category_kind(category)

    answer_by_id: dict[str, Record] = {}
    a_loc: Locator | None = None
    if kind.has_answers:
        if answers is None:
            raise InteropError(
                Problem(
                    qname,
                    None,
                    "--answers",
                    f"category {category!r} needs its possible-answers file",
                )
            )
        aname = answers_display or str(answers)
        a_loc = Locator(aname)
        for rec in read_records(answers, display=aname):
            if not isinstance(rec.value, dict) or not isinstance(rec.value.get("id"), str):
                a_loc.add(rec, rec.field("id"), "each answer must be an object with a string id")
                continue
            aid = rec.value["id"]
            if aid in answer_by_id:
                a_loc.add(rec, rec.field("id"), f"duplicate id {aid!r}")
                continue
            answer_by_id[aid] = rec
        missing = [it for it in items if it.case_id not in answer_by_id]
        for it in missing[:20]:
            a_loc.add(None, "id", f"no possible answer for {it.case_id!r} ({qname}:{it.rec.line})")
        a_loc.raise_if_any()

    notes: list[SchemaNote] = []
    skipped: list[SchemaNote] = []
    cases: list[dict[str, Any]] = []
    for it in items:
        user_input, history = _messages(it, q_loc)
        tools, schemas = _convert_functions(it, underscore_names, q_loc)
        case: dict[str, Any] = {
            "id": it.case_id,
            "user_input": user_input,
            "message_history": history,
            "available_tools": tools,
            "order": "unordered",
            "tags": ["bfcl", category],
        }
        item_notes: list[SchemaNote] = []
        match kind:
            case Kind.IRRELEVANCE:
                case["expected_tool_calls"] = []
                case["expected_no_tool"] = True
            case Kind.RELEVANCE:
                _any_call(case, tools)
            case Kind.SINGLE | Kind.PARALLEL:
                pass
        if kind.has_answers:
            assert a_loc is not None
            unpassable: list[SchemaNote] = []
            calls = _expected_calls(
                it,
                answer_by_id[it.case_id],
                schemas,
                underscore_names,
                a_loc,
                item_notes,
                unpassable,
            )
            if unpassable:
                skipped.extend(unpassable)
                continue
            case["expected_tool_calls"] = calls
            case["expected_no_tool"] = False
            if kind is Kind.SINGLE and len(calls) != 1:
                a_loc.add(
                    answer_by_id[it.case_id],
                    "ground_truth",
                    f"a {category} item needs exactly one call",
                )
        note_text = f"BFCL {category}"
        if item_notes:
            note_text += "; possible answer contradicts its schema: " + "; ".join(
                f"{n.field}: {n.message}" for n in item_notes
            )
        case["notes"] = note_text
        notes.extend(item_notes)
        cases.append(case)
    q_loc.raise_if_any()
    if a_loc is not None:
        a_loc.raise_if_any()
    return BfclImport(
        category=category, kind=kind, cases=cases, notes=notes, skipped=skipped, source=qname
    )


# ─── writing ─────────────────────────────────────────────────────────────────


def render_config(
    result: BfclImport, *, dataset_name: str = "dataset.jsonl", sha256: str | None = None
) -> str:
    """The ``toolgate.yml`` written beside the dataset (commented, ready to run)."""
    normalize, scoring = _sections(result.kind)
    pin = (
        f"  sha256: {sha256}\n" if sha256 else "  # sha256: run `toolgate pin` to pin the dataset\n"
    )
    return (
        f"# Generated by `toolgate import bfcl` from {Path(result.source).name}\n"
        f"# (BFCL category {result.category}, {len(result.cases)} cases). See docs/interop.md.\n"
        f"name: bfcl-{result.category.replace('_', '-')}\n"
        "dataset:\n"
        f"  path: {dataset_name}\n"
        f'  version: "bfcl-{result.category}"\n'
        f"{pin}"
        f"{normalize}"
        "agent:\n"
        "  # Score BFCL-style outputs recorded elsewhere (runs.jsonl, docs/agent-protocol.md);\n"
        "  # or replace with your agent: kind command / python / openai.\n"
        "  kind: replay\n"
        "  runs: runs.jsonl\n"
        "samples: 1\n"
        f"{scoring}"
        "gates:\n"
        "  - metric: case_passed\n"
        "    min: 0.0   # raise to the accuracy you want to hold\n"
    )


def _sections(kind: Kind) -> tuple[str, str]:
    """The config's ``dataset.normalize`` and ``scoring`` sections for ``kind``."""
    match kind:
        case Kind.SINGLE | Kind.PARALLEL | Kind.IRRELEVANCE:
            return (
                "  normalize:\n"
                "    # BFCL's AST-checker rules: strings lower-cased without spaces and ,./-_*^;\n"
                '    # numbers exact; list order counts; "" = may be omitted; no unlisted '
                "argument.\n"
                "    profile: bfcl\n"
                "    null_equals_absent: false   # BFCL: null is a value, not an omitted "
                "argument\n",
                "scoring:\n"
                "  # BFCL wants exactly the expected calls: an extra call fails the case.\n"
                "  default_order: unordered\n",
            )
        case Kind.RELEVANCE:
            # No value is compared; the bfcl profile would hold every call to exactly the
            # expected (here: no) arguments.
            return (
                "  normalize:\n"
                "    # BFCL's relevance check compares no argument: the default rules, so that\n"
                "    # an expected call with no argument listed accepts any arguments.\n"
                "    profile: default\n",
                "scoring:\n"
                "  # BFCL passes any output holding a call: each case expects one call to any\n"
                "  # of its tools, more are fine, and the arguments are not checked against\n"
                "  # the tool's schema (BFCL's relevance check reads none).\n"
                "  default_order: superset\n"
                "  pass_checks: [calls_matched, order, must_not_call, parsed, no_tool]\n",
            )


def write_import(result: BfclImport, out: Path, *, force: bool = False) -> tuple[Path, Path]:
    """Write ``out/dataset.jsonl`` and ``out/toolgate.yml``; refuse to overwrite unless
    ``force``. The config pins the dataset's sha256."""
    from gate.dataset import load_dataset

    out.mkdir(parents=True, exist_ok=True)
    dataset = out / "dataset.jsonl"
    config = out / "toolgate.yml"
    refuse_existing((dataset, config), force)
    write_cases(dataset, result.cases)
    sha256 = str(load_dataset(dataset).sha256)
    config.write_text(render_config(result, sha256=sha256), encoding="utf-8")
    return dataset, config


def summary(result: BfclImport, paths: Sequence[Path]) -> str:
    return (
        f"converted {len(result.cases)} BFCL {result.category} items → "
        + " and ".join(str(p) for p in paths)
        + (
            f"; {len(result.notes)} possible answers contradict their own schema"
            if result.notes
            else ""
        )
    )
