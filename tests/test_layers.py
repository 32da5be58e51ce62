"""The package's dependency direction, checked on the import graph of ``gate/``.

Every module of ``gate/`` is parsed with :mod:`ast`; every ``import`` and ``from … import``
counts, wherever it stands (module level, inside a function, under ``TYPE_CHECKING``): a
lazy import is still a dependency. A *unit* is a top-level module (``gate/config.py`` →
``config``) or a subpackage (``gate/policy/…`` → ``policy``); :data:`TIER_TABLE` puts every
unit in a tier. ``gate`` is the root package, the public facade whose ``__getattr__`` loads
``gate.api``; ``from gate import __version__`` counts as the leaf ``__version__``.

The rules:

* **upward** — a unit never imports a unit of a higher tier;
* **banned** — the few same-tier edges of :data:`BANNED`, each with its reason;
* **cycle** — no import cycle between units: every edge between two units of one strongly
  connected component of the unit graph is a violation.

Known violations are listed in :data:`KNOWN` (none today), one module-to-module edge each with the
reason it exists. The test fails on a violation not in the list and on an entry of the
list that no longer occurs, so the list can only shrink.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GATE = Path(__file__).resolve().parent.parent / "gate"

TIER_TABLE = """
tier | units                                                  | role
0    | model errors jsonio yamlio config                        | the data model, the error tree,
     | agents                                                 | the config and the agent kinds,
     | results                                                | the results
     |                                                        | format (below the statistics),
     | __version__ outdir                                     | leaf helpers
1    | scorers policy report baseline                         | pure layers: score one sample,
     |                                                        | reduce and decide, render,
     |                                                        | compare
2    | dataset adapters replay github interop judge runsfile  | I/O at the edges
3    | pipeline                                               | orchestration: one way through
4    | cli commands action api __main__ gate                  | entrypoints
"""

#: Same-tier edges that are not allowed although the tiers permit them.
BANNED: Mapping[tuple[str, str], str] = {
    ("policy", "results"): "policy computes numbers; gate.results alone assembles the format",
}

#: Today's violations: (importing module, imported module) → why it exists. Only shrinks.
KNOWN: Mapping[tuple[str, str], str] = {}


def _tiers() -> dict[str, int]:
    tiers: dict[str, int] = {}
    tier = -1
    for row in TIER_TABLE.strip().splitlines()[1:]:
        number, units, _role = row.split("|")
        if number.strip():
            tier = int(number)
        for unit in units.split():
            assert unit not in tiers, f"{unit} is in two tiers"
            tiers[unit] = tier
    return tiers


TIERS = _tiers()


@dataclass(frozen=True, slots=True)
class Edge:
    importer: str  # dotted module name
    imported: str  # dotted module name, or "gate.__version__"
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(GATE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def gate_modules() -> dict[str, Path]:
    """Every module of the package (the project templates for users are not part of it)."""
    return {
        module_name(p): p
        for p in sorted(GATE.rglob("*.py"))
        if "templates" not in p.relative_to(GATE).parts
    }


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "gate"


def imports_of(name: str, path: Path, modules: Mapping[str, Path]) -> Iterator[Edge]:
    """Every import of a ``gate`` module in one file, resolved to the module it loads."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "gate" or alias.name.startswith("gate."):
                    yield Edge(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source != "gate" and not source.startswith("gate."):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    yield Edge(name, sub, node.lineno)
                elif source == "gate" and alias.name == "__version__":
                    yield Edge(name, "gate.__version__", node.lineno)
                else:
                    yield Edge(name, source, node.lineno)


@functools.cache
def import_graph() -> tuple[Edge, ...]:
    modules = gate_modules()
    return tuple(e for name, path in modules.items() for e in imports_of(name, path, modules))


def strongly_connected(graph: Mapping[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    counter = 0
    nodes = sorted(set(graph) | {v for vs in graph.values() for v in vs})
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component: set[str] = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    out.append(component)
    return out


def violations(edges: Sequence[Edge]) -> dict[tuple[str, str], str]:
    """(importer, imported) → "upward"/"banned"/"cycle" with the place it was found."""
    found: dict[tuple[str, str], str] = {}
    units: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        a, b = unit_of(e.importer), unit_of(e.imported)
        if a == b:
            continue
        units[a].add(b)
        where = f"{e.importer}:{e.line} imports {e.imported}"
        if TIERS[a] < TIERS[b]:
            found.setdefault(
                (e.importer, e.imported), f"upward (tier {TIERS[a]} → {TIERS[b]}): {where}"
            )
        elif (a, b) in BANNED:
            found.setdefault((e.importer, e.imported), f"banned ({BANNED[a, b]}): {where}")
    for component in strongly_connected(units):
        if len(component) < 2:
            continue
        for e in edges:
            a, b = unit_of(e.importer), unit_of(e.imported)
            if a != b and a in component and b in component:
                found.setdefault(
                    (e.importer, e.imported),
                    f"cycle between {', '.join(sorted(component))}: "
                    f"{e.importer}:{e.line} imports {e.imported}",
                )
    return found


def test_layers__tier_table__names_every_unit_of_the_package() -> None:
    units = {unit_of(m) for m in gate_modules()} | {"__version__"}
    assert units == set(TIERS), (
        f"not in the tier table: {sorted(units - set(TIERS))}; "
        f"in the table but gone: {sorted(set(TIERS) - units)}"
    )


def test_layers__import_graph__no_new_violation() -> None:
    found = violations(import_graph())
    new = {k: v for k, v in found.items() if k not in KNOWN}
    assert not new, "new layer violations:\n" + "\n".join(sorted(new.values()))


def test_layers__known_list__every_entry_still_occurs() -> None:
    found = violations(import_graph())
    gone = sorted(set(KNOWN) - set(found))
    assert not gone, "fixed, remove from KNOWN: " + ", ".join(f"{a} → {b}" for a, b in gone)


# The checker itself, on small graphs: it must be able to fail.


def _edges(*pairs: tuple[str, str]) -> list[Edge]:
    return [Edge(a, b, 1) for a, b in pairs]


def test_violations__lower_tier_imports_higher__upward() -> None:
    found = violations(_edges(("gate.model", "gate.scorers.sample")))
    assert list(found) == [("gate.model", "gate.scorers.sample")]
    assert found["gate.model", "gate.scorers.sample"].startswith("upward (tier 0 → 1)")


def test_violations__higher_tier_imports_lower__allowed() -> None:
    assert violations(_edges(("gate.pipeline.score", "gate.scorers.sample"))) == {}


def test_violations__two_packages_of_one_tier_import_each_other__both_edges_a_cycle() -> None:
    edges = _edges(
        ("gate.policy.decide", "gate.baseline.diff"),
        ("gate.baseline.diff", "gate.policy.flips"),
        ("gate.policy.decide", "gate.model"),
    )
    found = violations(edges)
    assert set(found) == {
        ("gate.policy.decide", "gate.baseline.diff"),
        ("gate.baseline.diff", "gate.policy.flips"),
    }
    assert all(v.startswith("cycle between baseline, policy") for v in found.values())


def test_violations__results_format_imports_policy_or_scorers__upward() -> None:
    found = violations(
        _edges(("gate.results.write", "gate.policy.reduce"), ("gate.results.read", "gate.scorers"))
    )
    assert set(found) == {
        ("gate.results.write", "gate.policy.reduce"),
        ("gate.results.read", "gate.scorers"),
    }
    assert all(v.startswith("upward (tier 0 → 1)") for v in found.values())


def test_violations__banned_same_tier_edge__reported() -> None:
    found = violations(_edges(("gate.policy.reduce", "gate.results")))
    assert found["gate.policy.reduce", "gate.results"].startswith("banned")


def test_imports_of__lazy_and_relative_imports__resolved(tmp_path: Path) -> None:
    pkg = tmp_path / "gate" / "policy"
    pkg.mkdir(parents=True)
    src = pkg / "x.py"
    src.write_text(
        "from __future__ import annotations\n"
        "from . import flips\n"
        "from ..results import Results\n"
        "from gate import __version__, jsonio\n"
        "def f():\n"
        "    import gate.report.markdown\n"
        "    from gate.baseline.diff import diff\n",
        encoding="utf-8",
    )
    modules = {m: Path() for m in ("gate.policy.flips", "gate.jsonio", "gate.results")}
    got = {(e.imported, e.line) for e in imports_of("gate.policy.x", src, modules)}
    assert got == {
        ("gate.policy.flips", 2),
        ("gate.results", 3),
        ("gate.__version__", 4),
        ("gate.jsonio", 4),
        ("gate.report.markdown", 6),
        ("gate.baseline.diff", 7),
    }


def module_cycles(edges: Sequence[Edge]) -> list[list[str]]:
    """Circles of modules (inside a unit as well as across units), every import counted,
    ``TYPE_CHECKING`` ones too; an import of a package's ``__init__`` (its face, which
    hands on names of its modules) does not count."""
    packages = {n for n, p in gate_modules().items() if p.name == "__init__.py"}
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.importer != e.imported and e.imported not in packages:
            graph[e.importer].add(e.imported)
    return sorted(sorted(c) for c in strongly_connected(graph) if len(c) > 1)


def test_layers__modules__no_import_circle() -> None:
    assert module_cycles(import_graph()) == []


def test_module_cycles__type_only_import_back__is_a_circle() -> None:
    edges = [
        Edge("gate.scorers.analysis", "gate.scorers.selection", 1),
        Edge("gate.scorers.selection", "gate.scorers.analysis", 2),  # under TYPE_CHECKING
        Edge("gate.scorers.sample", "gate.scorers.analysis", 3),
    ]
    assert module_cycles(edges) == [["gate.scorers.analysis", "gate.scorers.selection"]]


# Agent kinds are named in one place: the registry (gate/agents) and each kind's own code —
# its module there and the adapter it names. Anywhere else a kind's name compared as a
# string, a list of kinds, a `Literal` of a kind or a kind's settings class is a branch on
# the kind that the next kind would have to find: ask the settings object instead.


def kind_names() -> dict[str, str]:
    """Kind name → its settings class's name, from the registry."""
    from gate import agents

    return {name: cls.__name__ for name, cls in agents.all_settings().items()}


def kind_modules() -> set[str]:
    """The modules that may name kinds: the registry, the kinds' interface, each kind's
    module and the module of the adapter it names."""
    from gate import agents

    allowed = {"gate.agents", "gate.agents.interface"}
    for cls in agents.all_settings().values():
        allowed.add(cls.__module__)
        allowed.add(cls.adapter.partition(":")[0])
    return allowed


def kind_mentions(source: str, kinds: Mapping[str, str]) -> list[tuple[int, str]]:
    """(line, what) for every place ``source`` names an agent kind: a comparison (or a
    ``match`` case) with a kind's name, a literal collection holding two kinds' names or
    more, a ``Literal[...]`` of a kind, a kind's settings class."""
    names, classes = set(kinds), set(kinds.values())

    def kind_strings(node: ast.AST) -> set[str]:
        if isinstance(node, ast.Constant) and node.value in names:
            return {node.value}
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return {s for e in node.elts for s in kind_strings(e)}
        return set()

    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            hit = set().union(*(kind_strings(o) for o in (node.left, *node.comparators)))
            if hit:
                found.append((node.lineno, f"compares with {sorted(hit)}"))
        elif isinstance(node, ast.MatchValue) and kind_strings(node.value):
            found.append((node.lineno, f"matches {node.value.value!r}"))  # type: ignore[attr-defined]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            listed = {e.value for e in elts if isinstance(e, ast.Constant) and e.value in names}
            if len(listed) >= 2:
                found.append((node.lineno, f"lists the kinds {sorted(listed)}"))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name | ast.Attribute)
            and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr)
            == "Literal"
            and kind_strings(node.slice)
        ):
            found.append((node.lineno, f"Literal of {sorted(kind_strings(node.slice))}"))
        elif isinstance(node, ast.Name) and node.id in classes:
            found.append((node.lineno, f"names the class {node.id}"))
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            found.append((node.lineno, f"names the class {node.attr}"))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in classes:
                    found.append((node.lineno, f"imports the class {alias.name}"))
    return sorted(found)


def test_agent_kinds__named_only_in_the_registry_and_their_own_modules() -> None:
    kinds, allowed = kind_names(), kind_modules()
    found = [
        f"{name}:{line}: {what}"
        for name, path in gate_modules().items()
        if name not in allowed
        for line, what in kind_mentions(path.read_text(encoding="utf-8"), kinds)
    ]
    assert not found, "agent kinds named outside gate/agents:\n" + "\n".join(found)


def test_kind_mentions__each_way_of_naming_a_kind__found() -> None:
    kinds = {"replay": "ReplayAgent", "command": "CommandAgent", "mcp": "McpAgent"}
    source = (
        "from gate.agents.replay import ReplayAgent\n"
        "if config.agent.kind == 'replay': pass\n"
        "if kind not in ('command', 'other'): pass\n"
        "TAGS = {'replay', 'command'}\n"
        "BY_KIND = {'mcp': 1, 'command': 2}\n"
        "def f(x: Literal['mcp']) -> None: ...\n"
        "ok = isinstance(agent, gate.agents.command.CommandAgent)\n"
        "match kind:\n"
        "    case 'mcp': pass\n"
        "# not kinds: a program named like one, one name alone, the word in prose\n"
        "argv[0] == 'python'; LOGGERS = ('mcp', 'uvicorn'); say('use kind: replay')\n"
    )
    assert [line for line, _ in kind_mentions(source, kinds)] == [1, 2, 3, 4, 5, 6, 7, 9]
