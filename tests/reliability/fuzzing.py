"""The fuzzing harness: adversarial inputs for every reader of ToolGate, one oracle.

Each :class:`Target` draws inputs with hypothesis (derandomized: the same inputs on every
machine and every run) in three modes:

* **targeted** — a valid input with one field set to a value that is certainly invalid
  for it; the error must name that file, line and field;
* **structural** — a valid input whose JSON structure is mutated: values replaced with
  adversarial ones (wrong types, ``NaN``/``Infinity``, integers beyond 64 bits, lone
  surrogates, deep nesting, huge strings, mentions and HTML), keys deleted, renamed or
  duplicated, containers wrapped or emptied;
* **bytes** — the serialised input damaged byte by byte: truncated, invalid UTF-8,
  injected quotes and brackets, duplicated keys, BOMs, CRLF, NUL.

Every input must end in a valid result (then invariants are checked: deterministic hash,
results that serialise, reports that render) or a :class:`gate.errors.InputError` whose
problems name the file and — where the input has lines — the line
(:func:`tests.reliability.helpers.check_input_error`). Anything else — another exception,
a hang (each input has a :data:`PER_INPUT_LIMIT_S` alarm) — fails the test.

A sample of the inputs that failed as input errors is then given to the real CLI as a
subprocess: exit code 2 and no traceback.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import functools
import io
import json
import os
import random
import re
import shutil
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gate.errors import InputError, Problem
from tests.reliability import helpers as h

PER_INPUT_LIMIT_S = 10.0
"""An input that takes longer than this is a hang (a bug), not a slow input."""

FIGURES: dict[str, Counter[str]] = {}
"""target → counts (inputs, valid, input_error, cli_runs): printed at the end of a session."""


# ─── adversarial values ───────────────────────────────────────────────────────


def _deep(levels: int, kind: str) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value] if kind == "list" else {"a": value}
    return value


NASTY_STRINGS: list[str] = [
    "",
    " ",
    "   padded   ",
    "\x00",
    "\t\r\n",
    "no",
    "yes",
    "off",
    "true",
    "null",
    "NaN",
    "Infinity",
    "1e400",
    "0x1F",
    "@tools.json",
    "@../outside.json",
    "@/etc/passwd",
    "@",
    "<!-- toolgate:reliability -->",
    "-->",
    "```",
    "| a | b |\n|---|---|",
    "@octocat @org/team",
    "![x](https://evil.example/x.png)",
    "[click](javascript:alert(1))",
    "✅ **passed**",
    "\u202etxt.exe",
    "\u200bdelete_account",
    "ｄｅｌｅｔｅ＿ａｃｃｏｕｎｔ",
    "functions.delete_account",
    "DELETE_ACCOUNT ",
    "\x1b[31mred\x1b[0m",
    "ghp_" + "a1" * 20,
    "sk-proj-" + "Z9" * 16,
    "Bearer abcdef0123456789abcdef",
    "x" * 5000,
    "é" * 300,
    "\U0001f600" * 50,
    '{"a": 1}',
    "[1, 2",
    "$regex",
    "^(a|a)*$",
]

NASTY_VALUES: list[Any] = [
    *NASTY_STRINGS,
    0,
    -1,
    1,
    2**31,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    10**30,
    -(10**30),
    0.5,
    -0.0,
    1e308,
    5e-324,
    float("nan"),
    float("inf"),
    float("-inf"),
    True,
    False,
    None,
    [],
    {},
    [None],
    {"": None},
    {"$regex": "("},
    {"$regex": "^(a|a)*$"},
    {"$in": []},
    {"$in": [{"$any": True}]},
    {"$approx": 1},
    {"$approx": "x", "tol": -1},
    {"$absent": False},
    {"$any": True, "$absent": True},
    {"nested": {"$any": True}},
    {"type": "function", "function": None},
    _deep(70, "list"),
    _deep(70, "dict"),
    _deep(200, "list"),
    list(range(300)),
    {f"k{i}": i for i in range(100)},
]

LONE_SURROGATE = "\ud800"
"""Not encodable as UTF-8: json.dumps writes it as an escape (or, with ensure_ascii off
and ``surrogatepass``, as CESU-8 bytes — invalid UTF-8)."""


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Arbitrary JSON-ish values, biased to the adversarial ones above."""
    scalars = st.one_of(
        # copied: a later mutation inside a drawn value must not change the shared one
        st.sampled_from(NASTY_VALUES).map(copy.deepcopy),
        st.text(max_size=30),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=10).map(
            lambda s: s + LONE_SURROGATE
        ),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.none(),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(
                st.one_of(st.sampled_from(NASTY_STRINGS[:20]), st.text(max_size=8)),
                children,
                max_size=4,
            ),
        ),
        max_leaves=max_leaves,
    )


_ALPHABET = "abcxyz_ 0129.-@#<>|`*$\\\"'\n\t\x00\x1b\u200b\u202eé日本\U0001f600"


def rand_json(rng: random.Random, leaves: int = 8) -> Any:
    """A JSON-ish value from a seeded ``random.Random`` (hypothesis draws the seed): the
    same adversarial mix as :func:`json_values`, at a fraction of the cost, for the bulk
    content of large inputs."""
    budget = [leaves]

    def scalar() -> Any:
        r = rng.random()
        if r < 0.35:
            return copy.deepcopy(rng.choice(NASTY_VALUES))
        if r < 0.6:
            text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(12)))
            return text + LONE_SURROGATE if rng.random() < 0.05 else text
        if r < 0.75:
            return rng.choice([rng.randrange(-1000, 1000), rng.getrandbits(70) - 2**69])
        if r < 0.9:
            return rng.choice([rng.uniform(-1e6, 1e6), rng.random(), float("nan"), 1e308 * 10])
        return rng.choice([True, False, None])

    def value(depth: int) -> Any:
        budget[0] -= 1
        r = rng.random()
        if budget[0] <= 0 or depth > 4 or r < 0.55:
            return scalar()
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        keys = ["order_id", "amount", "query", "x", "", "$regex", "a b", "é"]
        return {rng.choice(keys): value(depth + 1) for _ in range(rng.randrange(4))}

    return value(0)


def dump_json(value: Any, *, ascii_only: bool = True, indent: int | None = None) -> bytes:
    """JSON text as Python's json writes it: NaN/Infinity literals for non-finite floats,
    lone surrogates as escapes (``ascii_only``) or CESU-8 bytes."""
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    return text.encode("utf-8", "surrogatepass")


# ─── structural mutations of a JSON document ──────────────────────────────────

Path_ = tuple[Any, ...]


def _paths(doc: Any, prefix: Path_ = (), out: list[Path_] | None = None) -> list[Path_]:
    out = [] if out is None else out
    if len(out) > 400:
        return out
    out.append(prefix)
    if isinstance(doc, dict):
        for k, v in doc.items():
            _paths(v, (*prefix, k), out)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            _paths(v, (*prefix, i), out)
    return out


def _get(doc: Any, path: Path_) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def seeded(draw: Callable[..., Any]) -> random.Random:
    """A ``random.Random`` whose seed hypothesis draws (so derandomized runs repeat it):
    bulk mutations use it, cheaply, instead of one hypothesis draw per choice."""
    rng: random.Random = draw(st.randoms(use_true_random=False))
    return rng


def mutate_structure(rng: random.Random, doc: Any, *, max_ops: int = 3) -> Any:
    """Apply 1..max_ops random structural mutations to a deep copy of ``doc``."""
    try:
        doc = orjson.loads(orjson.dumps(doc))
    except (TypeError, orjson.JSONDecodeError):  # NaN, big integers, lone surrogates
        doc = json.loads(json.dumps(doc))
    ops = ["set", "set", "set", "delete", "rename", "wrap", "stringify", "empty", "dup"]
    renames = ["", "ID", "_", "$regex", "tol", "extra", " "]
    for _ in range(rng.randint(1, max_ops)):
        paths = _paths(doc)
        path = rng.choice(paths)
        op = rng.choice(ops)
        if not path:
            if op == "set":
                doc = rand_json(rng)
            elif op == "wrap":
                doc = [doc]
            elif op == "stringify":
                doc = json.dumps(doc)
            continue
        parent = _get(doc, path[:-1])
        key = path[-1]
        if op == "set":
            parent[key] = rand_json(rng)
        elif op == "delete":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            new = rng.choice(renames)
            parent[key + new if new in ("_", " ") else new] = parent.pop(key)
        elif op == "wrap":
            parent[key] = [parent[key]]
        elif op == "stringify":
            parent[key] = json.dumps(parent[key])
        elif op == "empty":
            v = parent[key]
            parent[key] = type(v)() if isinstance(v, list | dict | str) else None
        elif op == "dup" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(parent[key])))
    return doc


# ─── byte-level mutations ─────────────────────────────────────────────────────

NASTY_BYTES = [
    b"\xff",
    b"\xfe\xff",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\x00",
    b"\r",
    b"\n",
    b"\r\n",
    b'"',
    b"'",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\xef\xbb\xbf",
    b"NaN",
    b"-Infinity",
    b"1e999",
    b"99999999999999999999999",
    b"\t",
    b"&a",
    b"*a",
    b"!!python/object:os.system",
    b"---\n",
    b"? ",
    b"- ",
    b"#",
]

_KEY = re.compile(rb'"([A-Za-z_$][\w$]*)"\s*:')


def mutate_bytes(rng: random.Random, data: bytes, *, max_ops: int = 3) -> bytes:
    """Apply 1..max_ops random byte-level mutations."""
    buf = bytearray(data)
    ops = ["truncate", "insert", "insert", "replace", "delete", "dupkey", "dupline", "crlf"]
    for _ in range(rng.randint(1, max_ops)):
        n = len(buf)
        op = rng.choice(ops)
        pos = rng.randint(0, n)
        if op == "truncate":
            del buf[pos:]
        elif op == "insert":
            if rng.random() < 0.8:
                buf[pos:pos] = rng.choice(NASTY_BYTES)
            else:
                buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == "replace" and n:
            buf[min(pos, n - 1)] = rng.randrange(256)
        elif op == "delete" and n:
            del buf[pos : pos + rng.randint(1, 8)]
        elif op == "dupkey":
            keys = list(_KEY.finditer(bytes(buf)))
            if keys:
                m = rng.choice(keys)
                buf[m.start() : m.start()] = b'"' + m.group(1) + b'": null, '
        elif op == "dupline":
            lines = bytes(buf).split(b"\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            buf = bytearray(b"\n".join(lines))
        elif op == "crlf":
            buf = bytearray(bytes(buf).replace(b"\n", b"\r\n"))
    return bytes(buf)


# ─── the runner ───────────────────────────────────────────────────────────────


@dataclass
class FuzzInput:
    """One input: the main file's bytes, other files beside it, and the expectation of a
    targeted mutation ((line or None, field) that an error must name)."""

    data: bytes
    name: str
    extra: dict[str, bytes] = field(default_factory=dict)
    expect: tuple[int | tuple[int, int] | None, str] | None = None
    mode: str = ""
    note: str = ""

    def write(self, folder: Path) -> Path:
        for rel, content in self.extra.items():
            (folder / rel).write_bytes(content)
        path = folder / self.name
        path.write_bytes(self.data)
        return path


class Hang(Exception):
    """An input took longer than :data:`PER_INPUT_LIMIT_S`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise Hang(f"an input took longer than {seconds}s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Target:
    """One reader under fuzz: how to draw an input, run it, and run it through the CLI."""

    name: str
    strategy: st.SearchStrategy[FuzzInput]
    check: Callable[[FuzzInput, Path], None]
    """Runs the input (already written into the folder); raises InputError or returns."""
    files: Callable[[FuzzInput], list[str]]
    """The file names an error may name for this input."""
    lines: bool
    cli: Callable[[FuzzInput, Path], list[str]] | None = None
    """CLI arguments that make the real command read the input in the folder."""
    lineless_ok: Callable[[FuzzInput, Problem], bool] | None = None
    """Problems of this input that may rightly name no line (e.g. of an empty file)."""


def run_target(
    target: Target, *, examples: int, cli_samples: int, seed: int | None = None
) -> Counter[str]:
    """Fuzz ``target`` with ``examples`` inputs, then the CLI on ``cli_samples`` of those
    that were input errors. Returns (and records in :data:`FIGURES`) the counts.

    ``seed`` None: derandomized (the same inputs on every run); an integer: a fixed seed
    (as reproducible; lets shards of one target draw different inputs)."""
    counts = FIGURES.setdefault(target.name, Counter())
    failed_inputs: list[FuzzInput] = []
    step = max(1, examples // max(1, cli_samples * 8))
    seen = [0]
    last: list[FuzzInput | None] = [None]

    @settings(
        max_examples=examples,
        derandomize=seed is None,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=False,
    )
    @given(target.strategy)
    def one(inp: FuzzInput) -> None:
        _empty(folder)
        inp.write(folder)
        try:
            with time_limit(PER_INPUT_LIMIT_S):
                target.check(inp, folder)
        except InputError as exc:
            ok = target.lineless_ok
            h.check_input_error(
                exc,
                files=target.files(inp),
                lines=target.lines,
                expect=inp.expect,
                lineless_ok=(lambda p: ok(inp, p)) if ok is not None else None,
            )
            counts["input_error"] += 1
            seen[0] += 1
            last[0] = inp
            if seen[0] % step == 0 and len(failed_inputs) < cli_samples:
                failed_inputs.append(inp)
        else:
            assert inp.expect is None or inp.mode != "targeted", (
                f"a certainly-invalid value was accepted: {inp.expect} ({inp.note})"
            )
            counts["valid"] += 1
        counts["inputs"] += 1

    if seed is not None:
        one = hypothesis.seed(seed)(one)
    with tempfile.TemporaryDirectory(prefix="toolgate-fuzz-") as tmp:
        folder = Path(tmp)
        one()
    if not failed_inputs and last[0] is not None and cli_samples:
        failed_inputs.append(last[0])
    if target.cli is not None and failed_inputs:
        run_cli_sample(target, failed_inputs)
        counts["cli_runs"] += len(failed_inputs)
    return counts


def _empty(folder: Path) -> None:
    """Remove what the previous input left (one folder serves a whole target)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def run_cli_sample(target: Target, inputs: Sequence[FuzzInput]) -> None:
    """Each input through the real CLI (a subprocess): exit code 2, no traceback."""
    assert target.cli is not None

    def one(inp: FuzzInput) -> None:
        with tempfile.TemporaryDirectory(prefix="toolgate-fuzz-cli-") as tmp:
            folder = Path(tmp)
            inp.write(folder)
            args = target.cli(inp, folder)  # type: ignore[misc]
            proc = h.toolgate(*args, cwd=folder, timeout=120)
            try:
                h.assert_clean_exit(proc, 2)
            except AssertionError as exc:
                raise AssertionError(f"{target.name}: {inp.mode} {inp.note!r}: {exc}") from None
            assert "toolgate: error" in proc.stderr, proc.stderr[-1000:]

    with ThreadPoolExecutor(max_workers=3) as pool:
        for future in [pool.submit(one, inp) for inp in inputs]:
            future.result()


# ─── a process-wide memo for the dataset's tool parser ────────────────────────


@contextlib.contextmanager
def memoised_tool_parser() -> Iterator[None]:
    """``gate.dataset.tools.parse_tool`` is pure and the loader already caches it per
    load by the tool's canonical JSON; caching it across loads (by the same key) makes
    tens of thousands of loads affordable without changing any outcome."""
    from gate import jsonio
    from gate.dataset import tools

    original = tools.parse_tool
    memo: dict[str, Any] = {}

    @functools.wraps(original)
    def parse(obj: Any) -> Any:
        try:
            key = jsonio.canonical(obj)
        except TypeError:
            return original(obj)
        hit = memo.get(key)
        if hit is None:
            hit = original(obj)
            if len(memo) < 20_000:
                memo[key] = hit
        return hit

    # The scorer's compiled argument validators are immutable and keyed by the schema's
    # canonical JSON in each run's cache; share them across runs the same way.
    from gate.scorers import schema as schema_mod

    validator_cls = schema_mod.ArgsValidator
    validators: dict[tuple[bytes, Any], Any] = {}

    def validator(schema: Any, strings: Any = schema_mod.StringRule.EXACT) -> Any:
        key = (orjson.dumps(schema, option=orjson.OPT_SORT_KEYS), strings)
        hit = validators.get(key)
        if hit is None:
            hit = validators[key] = validator_cls(schema, strings)
        return hit

    tools.parse_tool = parse  # type: ignore[assignment]
    schema_mod.ArgsValidator = validator  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        tools.parse_tool = original  # type: ignore[assignment]
        schema_mod.ArgsValidator = validator_cls  # type: ignore[misc]


def csv_rows_bytes(rows: Sequence[Any], columns: Sequence[str] | None = None) -> bytes:
    """Like :func:`helpers.csv_bytes` but tolerant of rows that are not objects and of
    any values (structural mutations)."""
    from gate.dataset import COLUMNS, TEXT_COLUMNS

    dict_rows = [r for r in rows if isinstance(r, dict)]
    cols = list(columns) if columns is not None else []
    if columns is None:
        for r in dict_rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        cols.sort(key=lambda c: COLUMNS.index(c) if c in COLUMNS else len(COLUMNS))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        if not isinstance(r, dict):
            w.writerow([json.dumps(r)])
            continue
        cells = []
        for c in cols:
            if c not in r:
                cells.append("")
            elif c in TEXT_COLUMNS and isinstance(r[c], str):
                cells.append(r[c])
            else:
                cells.append(json.dumps(r[c]))
        w.writerow(cells)
    return buf.getvalue().encode("utf-8", "surrogatepass")
