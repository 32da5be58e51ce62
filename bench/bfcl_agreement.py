"""How often does ToolGate's verdict agree with BFCL's own AST checker?

For each BFCL AST category (simple_python, multiple, parallel, parallel_multiple,
irrelevance, and the live_* ones), this script

1. takes BFCL's data files from the ``bfcl-eval`` package installed in its own venv
   (``bench-venvs/bfcl``, or ``TOOLGATE_BFCL_VENV``; never a ToolGate dependency);
2. converts them with ToolGate's importer (:mod:`gate.interop.bfcl`);
3. generates BFCL-style model outputs for every item — the possible answers themselves and
   systematic perturbations of them (wrong value, missing argument, extra argument, wrong
   function, int for float, swapped parallel order, …; see ``VARIANTS``);
4. scores them with ``toolgate score`` (one case per item × variant, the importer's
   ``toolgate.yml`` with the ``bfcl`` profile);
5. runs BFCL's ``ast_checker`` on the very same outputs (a subprocess in the bfcl venv;
   irrelevance: "no function call decoded", as BFCL's runner does);
6. prints the agreement rate per category and per variant, and every disagreement with
   both sides' reasons, classified: an item whose possible answer contradicts its own
   schema beyond what the importer repairs, or unexplained.

Agreement = cases where both say pass or both say fail ÷ cases compared.

Usage::

    python bench/bfcl_agreement.py [--quick] [--category CAT ...] [--venv DIR] [--keep DIR]

``--quick`` takes the first 25 items per category. Without the bfcl venv the script says
so and exits 0 (CI runs it optionally). Exit code 1 when a disagreement is unexplained,
when ToolGate passes an output BFCL fails, or when a category agrees on fewer than
99.5 % of its outputs (a regression in our scoring or importer).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gate.interop import bfcl  # noqa: E402
from gate.interop._records import Locator, Record  # noqa: E402

DEFAULT_VENV = Path(os.environ.get("TOOLGATE_BFCL_VENV", "bench-venvs/bfcl"))
QUICK_ITEMS = 25
PICKS = ((0, True), (-1, True), (0, False), (-1, False))
"""(option index, include optional params) — the ways to write an acceptable answer."""
PROBES = 8
"""Shuffled answers tried per item with several calls to one function."""
MODEL_NAME = "gorilla-openfunctions-v2"
"""A BFCL model entry whose names keep their dots (``underscore_to_dot`` false)."""

Output = list[dict[str, dict[str, Any]]]
"""BFCL's decoded model output: ``[{function: {param: value}}]``."""

# ─── the BFCL side (runs in the bfcl venv) ───────────────────────────────────

DRIVER = Path(__file__).with_name("bfcl_driver.py")
"""Runs in the bfcl venv: BFCL's checker on each output (JSON Lines in, JSON Lines out)."""


def bfcl_data_dir(python: Path) -> Path:
    code = (
        "import importlib.util, pathlib;"
        "s = importlib.util.find_spec('bfcl_eval');"
        "print(pathlib.Path(list(s.submodule_search_locations)[0]) / 'data')"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def run_bfcl_checker(
    python: Path, jobs: list[dict[str, Any]], workdir: Path
) -> dict[str, dict[str, Any]]:
    driver = DRIVER
    payload = "".join(json.dumps(j) + "\n" for j in jobs)
    proc = subprocess.run(
        [str(python), str(driver), MODEL_NAME],
        input=payload,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"the BFCL checker driver failed (exit {proc.returncode})")
    return {row["key"]: row for row in map(json.loads, proc.stdout.splitlines()) if row}


# ─── generating BFCL-style outputs ───────────────────────────────────────────


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _props(case: dict[str, Any], fn: str) -> dict[str, Any]:
    for t in case["available_tools"]:
        if t["function"]["name"] == fn:
            return t["function"]["parameters"].get("properties", {})
    return {}


def _required(case: dict[str, Any], fn: str) -> list[str]:
    for t in case["available_tools"]:
        if t["function"]["name"] == fn:
            return list(t["function"]["parameters"].get("required", []))
    return []


_LOC = Locator("<bench>")
_REC = Record(None, None, "")


def _concrete(opts: list[Any], prop: dict[str, Any], pick: int) -> tuple[bool, Any]:
    """(has a value, a concrete acceptable value) of one BFCL option list."""
    values, _optional = bfcl.expand_options(opts, prop, "", _LOC, _REC)
    if not values:
        return False, None
    return True, values[pick]


def answer_output(
    gt: list[dict[str, Any]], case: dict[str, Any], *, pick: int, optional: bool
) -> Output:
    out: Output = []
    for entry in gt:
        ((fn, params),) = entry.items()
        props = _props(case, fn)
        args: dict[str, Any] = {}
        for p, opts in params.items():
            is_optional = "" in [o for o in opts if isinstance(o, str)]
            if is_optional and not optional:
                continue
            ok, value = _concrete(opts, props.get(p, {}), pick)
            if ok:
                args[p] = value
        out.append({fn: args})
    return out


def _wrong(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if isinstance(v, float):
        return v + 1.5
    if isinstance(v, str):
        return v + " zz"
    if isinstance(v, list):
        return [*v, v[-1]] if v else ["zz"]
    if isinstance(v, dict):
        return {**v, "zz": "zz"}
    return "zz"


def _first_arg(out: Output) -> tuple[str, str] | None:
    for call in out:
        ((fn, args),) = call.items()
        for p in sorted(args):
            return fn, p
    return None


def _map_args(out: Output, f: Callable[[str, str, Any], Any]) -> Output:
    """Apply ``f(fn, param, value)`` to every top-level argument (``_SKIP`` leaves it)."""
    new: Output = []
    for call in out:
        ((fn, args),) = call.items()
        new.append({fn: {p: f(fn, p, v) for p, v in args.items()}})
    return new


def _retype(case: dict[str, Any], kind: str) -> Callable[[str, str, Any], Any]:
    def f(fn: str, p: str, v: Any) -> Any:
        t = _props(case, fn).get(p, {}).get("type")
        types = t if isinstance(t, list) else [t]
        if (
            kind == "int_for_float"
            and "number" in types
            and isinstance(v, float)
            and v.is_integer()
        ):
            return int(v)
        if (
            kind == "float_for_int"
            and "integer" in types
            and isinstance(v, int)
            and not isinstance(v, bool)
        ):
            return float(v)
        if kind == "string_for_number" and isinstance(v, int | float) and not isinstance(v, bool):
            return str(v)
        enum = _props(case, fn).get(p, {}).get("enum")
        if kind == "case_punct" and isinstance(v, str) and enum is None:
            return v.upper().replace(" ", "  ")
        if kind == "enum_case" and isinstance(v, str) and enum is not None and v.upper() != v:
            return v.upper()
        if kind == "list_reversed" and isinstance(v, list) and len(v) > 1 and v != v[::-1]:
            return v[::-1]
        return v

    return f


def variants(
    category: str, case: dict[str, Any], gt: list[dict[str, Any]] | None
) -> Iterator[tuple[str, Output]]:
    """Every (variant name, output) for one item; a variant that would not change the
    output (nothing to perturb) is left out."""
    kind = bfcl.category_kind(category)
    if not kind.has_answers:  # (ir)relevance: no call, or calls of any kind
        yield "no_call", []
        tools = [t["function"] for t in case["available_tools"]]
        if tools:
            fn = tools[0]
            req = fn["parameters"].get("required", [])
            first = {fn["name"]: {r: "zz" for r in req}}
            yield "call_first_tool", [first]
            yield "call_first_tool_twice", [first, copy.deepcopy(first)]
        if len(tools) > 1:
            yield "call_last_tool_no_args", [{tools[-1]["name"]: {}}]
            yield "call_every_tool", [{t["name"]: {}} for t in tools]
        return
    base = answer_output(gt, case, pick=0, optional=True)
    seen: set[str] = set()

    def emit(name: str, out: Output) -> Iterator[tuple[str, Output]]:
        key = json.dumps(out, sort_keys=True)
        if name == "answer_first" or key not in seen:
            seen.add(key)
            yield name, out

    yield from emit("answer_first", base)
    yield from emit("answer_min", answer_output(gt, case, pick=0, optional=False))
    yield from emit("answer_last", answer_output(gt, case, pick=-1, optional=True))
    for kind in (
        "case_punct",
        "enum_case",
        "int_for_float",
        "float_for_int",
        "string_for_number",
        "list_reversed",
    ):
        out = _map_args(base, _retype(case, kind))
        if out != base:
            yield from emit(kind, out)
    first = _first_arg(base)
    if first is not None:
        fn0, p0 = first
        out = copy.deepcopy(base)
        out[0][fn0][p0] = _wrong(out[0][fn0][p0])
        yield from emit("wrong_value", out)
        out = copy.deepcopy(base)
        out[0][fn0][p0] = None
        yield from emit("null_value", out)
    fn_first = next(iter(base[0]))
    required = [p for p in _required(case, fn_first) if p in base[0][fn_first]]
    if required:
        out = copy.deepcopy(base)
        del out[0][fn_first][required[0]]
        yield from emit("missing_required", out)
    out = copy.deepcopy(base)
    out[0][fn_first]["unexpected_arg"] = "zz"
    yield from emit("extra_arg", out)
    unlisted = [p for p in _props(case, fn_first) if p not in gt[0][fn_first]]
    if unlisted:
        out = copy.deepcopy(base)
        out[0][fn_first][unlisted[0]] = "zz"
        yield from emit("extra_schema_arg", out)
    others = [
        t["function"]["name"] for t in case["available_tools"] if t["function"]["name"] != fn_first
    ]
    out = copy.deepcopy(base)
    out[0] = {(others[0] if others else fn_first + "_x"): out[0][fn_first]}
    yield from emit("wrong_function", out)
    yield from emit("no_call", [])
    yield from emit("duplicate_call", [*copy.deepcopy(base), copy.deepcopy(base[0])])
    if len(base) > 1:
        yield from emit("swapped_order", list(reversed(copy.deepcopy(base))))
        yield from emit("rotated_order", copy.deepcopy(base[1:] + base[:1]))
        yield from emit("drop_call", copy.deepcopy(base[:-1]))
        # The last call's alternative answer first: where answers overlap, BFCL's first-fit
        # pairing can take the wrong output for an earlier answer.
        alt = answer_output(gt, case, pick=-1, optional=False)
        yield from emit("alt_reversed", list(reversed(alt)))
        names = [next(iter(c)) for c in base]
        if len(set(names)) < len(names):
            # Several calls to one function: shuffle which acceptable answer each output
            # takes and in which order — where answers overlap, first-fit pairing fails.
            pools = [answer_output(gt, case, pick=pk, optional=op) for pk, op in PICKS]
            rng = random.Random(case["id"])
            for k in range(PROBES):
                out = [copy.deepcopy(pools[rng.randrange(len(pools))][i]) for i in range(len(base))]
                rng.shuffle(out)
                yield from emit(f"probe_{k}", out)


# ─── the ToolGate side ───────────────────────────────────────────────────────


def toolgate_scores(
    rows: list[dict[str, Any]], runs: list[dict[str, Any]], config_text: str, workdir: Path
) -> dict[str, dict[str, Any]]:
    (workdir / "dataset.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8"
    )
    (workdir / "runs.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in runs), encoding="utf-8"
    )
    # The importer's config, pinned to this dataset (the bench's expansion of it).
    from gate.dataset import load_dataset

    sha = load_dataset(workdir / "dataset.jsonl").sha256
    text = "\n".join(
        f"  sha256: {sha}" if line.strip().startswith(("sha256:", "# sha256:")) else line
        for line in config_text.splitlines()
    )
    (workdir / "toolgate.yml").write_text(text + "\n", encoding="utf-8")
    toolgate = Path(sys.executable).with_name("toolgate")
    cmd = [
        str(toolgate) if toolgate.exists() else "toolgate",
        "score",
        "--config",
        str(workdir / "toolgate.yml"),
        "--runs",
        str(workdir / "runs.jsonl"),
        "--out",
        str(workdir / "out"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=workdir)
    results_path = workdir / "out" / "results.json"
    if not results_path.exists() and (
        "not yet available" in proc.stderr or "unrecognized arguments" in proc.stderr
    ):
        err = proc.stderr.strip().splitlines()[-1]
        print(f"note: `toolgate score` refused ({err}); scoring in process with score_sample")
        return _score_in_process(workdir)
    if not results_path.exists():
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-4000:])
        raise SystemExit(f"`toolgate score` wrote no results.json (exit {proc.returncode})")
    results = json.loads(results_path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for case in results["cases"]:
        s = case["samples"][0]
        out[case["id"]] = {
            "passed": bool(s["passed"]),
            "failed_checks": s.get("failed_checks", []),
            "reasons": s.get("reasons", {}),
        }
    return out


def _score_in_process(workdir: Path) -> dict[str, dict[str, Any]]:
    """The same scoring `toolgate score` runs (config → dataset → score_sample), in process."""
    from gate.config import load_config
    from gate.dataset import load_dataset
    from gate.runsfile import read_runs
    from gate.scorers import ScoringContext, score_sample

    config = load_config(workdir / "toolgate.yml")
    dataset = load_dataset(workdir / "dataset.jsonl")
    ctx = ScoringContext.build(config.scoring, config.dataset.normalize, dataset.tools)
    out: dict[str, dict[str, Any]] = {}
    for _, run in read_runs(workdir / "runs.jsonl"):
        s = score_sample(dataset.case(run.case_id), run, ctx)
        out[run.case_id] = {
            "passed": s.passed,
            "failed_checks": list(s.failed_checks),
            "reasons": dict(s.reasons),
        }
    return out


def run_record(key: str, output: Output) -> dict[str, Any]:
    calls = [
        {"id": f"c{i}", "name": fn, "arguments": args}
        for i, call in enumerate(output)
        for fn, args in call.items()
    ]
    turns = [{"calls": calls, "tool_results": [], "content": None}] if calls else []
    return {
        "case_id": key,
        "sample": 0,
        "turns": turns,
        "final": None if calls else "",
        "error": None,
    }


# ─── main ────────────────────────────────────────────────────────────────────


def _generic(line: str) -> str:
    """A line of an import's config without what names its category (so that categories
    whose configs say the same are scored together)."""
    if line.startswith("#"):
        return "# bfcl_agreement"
    if line.startswith("name:"):
        return "name: bfcl-agreement"
    if line.startswith("  version:"):
        return '  version: "bfcl-agreement"'
    return line


REASONS = ("answer_contradicts_schema", "unexplained")
"""Why a disagreement happened: an item whose possible answer contradicts its own schema
in a way the importer cannot repair (docs/interop.md lists them), or anything else (a
regression in the importer or the scorer)."""

MIN_RATE = 0.995
"""The agreement every category must reach (else the bench exits 1)."""


def classify(row: dict[str, Any], ours: dict[str, Any], unrepaired: set[str], item_id: str) -> str:
    if item_id in unrepaired and row["valid"] and not ours["passed"]:
        return "answer_contradicts_schema"
    return "unexplained"


_REASON_KEYS = ("call_accuracy", "schema_validity", "trajectory_match", "no_tool_respected")


def _counts(name: str, c: Counter[str]) -> tuple[str, ...]:
    rate = f"{c['agree'] / max(c['n'], 1):.2%}"
    return (
        name,
        str(c["n"]),
        str(c["agree"]),
        rate,
        str(c["bfcl_pass"]),
        str(c["ours_pass"]),
        str(c["ours_only"]),
        str(c["bfcl_only"]),
    )


def _table_row(cells: tuple[str, ...]) -> str:
    widths = (24, 8, 8, 9, 11, 11, 11, 11)
    return cells[0].ljust(widths[0]) + "".join(
        c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"first {QUICK_ITEMS} items per category")
    ap.add_argument("--category", action="append", help="only these categories (repeatable)")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the venv holding bfcl-eval")
    ap.add_argument("--keep", type=Path, help="keep the working files in this folder")
    ap.add_argument("--max-listed", type=int, default=200, help="most disagreements printed")
    args = ap.parse_args(argv)

    python = args.venv / "bin" / "python"
    if not python.exists():
        install = f"python -m venv {args.venv} && {args.venv}/bin/pip install bfcl-eval soundfile"
        print(f"bfcl_agreement: skipped — no bfcl venv at {args.venv} ({install})")
        return 0
    t0 = time.perf_counter()
    data = bfcl_data_dir(python)
    categories = args.category or list(bfcl.CATEGORIES)
    workroot = args.keep or Path(tempfile.mkdtemp(prefix="bfcl-agreement-"))
    workroot.mkdir(parents=True, exist_ok=True)

    jobs: list[dict[str, Any]] = []
    meta: dict[str, tuple[str, str, str]] = {}  # key → (category, item id, variant)
    unrepaired: set[str] = set()
    skipped: list[str] = []
    # Each category is scored with the config its import writes (the relevance one differs).
    groups: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for cat in categories:
        qpath, apath = bfcl.locate_category(cat, data)
        imported = bfcl.convert(qpath, apath, category=cat)
        config_text = "\n".join(
            _generic(line) for line in bfcl.render_config(imported).splitlines()
        )
        rows, runs = groups.setdefault(config_text, ([], []))
        unrepaired.update(n.case_id for n in imported.notes if not n.repaired)
        skipped.extend(str(n) for n in imported.skipped)
        questions = {q["id"]: q for q in _load_jsonl(qpath)}
        answers = {a["id"]: a["ground_truth"] for a in _load_jsonl(apath)} if apath else {}
        cases = imported.cases[:QUICK_ITEMS] if args.quick else imported.cases
        for case in cases:
            q = questions[case["id"]]
            gt = answers.get(case["id"]) if apath else None
            for name, output in variants(cat, case, gt):
                key = f"{case['id']}::{name}"
                meta[key] = (cat, case["id"], name)
                rows.append({**case, "id": key})
                runs.append(run_record(key, output))
                jobs.append(
                    {
                        "key": key,
                        "category": cat,
                        "functions": q["function"],
                        "output": output,
                        "answer": gt,
                    }
                )
    print(
        f"{len(jobs)} outputs over {len(categories)} categories: BFCL's checker, then toolgate …",
        flush=True,
    )
    t1 = time.perf_counter()
    theirs = run_bfcl_checker(python, jobs, workroot)
    t2 = time.perf_counter()
    ours: dict[str, dict[str, Any]] = {}
    for g, (config_text, (rows, runs)) in enumerate(groups.items()):
        sub = workroot / f"scored-{g}"
        sub.mkdir(exist_ok=True)
        ours.update(toolgate_scores(rows, runs, config_text, sub))
    t3 = time.perf_counter()

    per_cat: dict[str, Counter[str]] = defaultdict(Counter)
    per_variant: dict[str, Counter[str]] = defaultdict(Counter)
    disagreements: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []
    for key, (cat, item_id, variant) in meta.items():
        b, o = theirs[key], ours[key]
        agree = b["valid"] == o["passed"]
        per_cat[cat]["n"] += 1
        per_cat[cat]["agree"] += agree
        per_cat[cat]["bfcl_pass"] += b["valid"]
        per_cat[cat]["ours_pass"] += o["passed"]
        per_cat[cat]["ours_only"] += o["passed"] and not b["valid"]
        per_cat[cat]["bfcl_only"] += b["valid"] and not o["passed"]
        per_cat[cat]["first_fit_miss"] += bool(b.get("matching_exists"))
        per_variant[variant]["n"] += 1
        per_variant[variant]["agree"] += agree
        if not agree:
            why = classify(b, o, unrepaired, item_id)
            per_cat[cat][why] += 1
            per_variant[variant][why] += 1
            disagreements.append((why, key, b, o))

    head = (
        "category", "outputs", "agree", "rate", "bfcl pass", "ours pass", "ours only", "bfcl only"
    )  # fmt: skip
    print("\n" + _table_row(head) + "  disagreements by reason")
    total = Counter[str]()
    low: list[str] = []
    for cat in categories:
        c = per_cat[cat]
        total.update(c)
        reasons = ", ".join(f"{k}={c[k]}" for k in REASONS if c[k])
        print(_table_row(_counts(cat, c)) + f"  {reasons}")
        if c["agree"] < MIN_RATE * c["n"]:
            low.append(cat)
    print(_table_row(_counts("all", total)))
    print(
        "('ours only': toolgate passes what BFCL fails; 'bfcl only': the reverse)\n"
        f"parallel outputs BFCL's first-fit pairing rejects though a pairing exists: "
        f"{total['first_fit_miss']} (the bfcl profile pairs first-fit too)"
    )
    print(f"\n{'variant':<20}{'outputs':>8}{'rate':>9}  disagreements by reason")
    for v, c in sorted(per_variant.items()):
        why = ", ".join(f"{k}={c[k]}" for k in REASONS if c[k])
        print(f"{v:<20}{c['n']:>8}{c['agree'] / max(c['n'], 1):>9.2%}  {why}")
    if skipped:
        why = "BFCL rejects every output, or no acceptable value fits the schema"
        print(f"\nitems left out by the importer ({why}): {len(skipped)}")
        for s in skipped:
            print(f"  {s}")
    print(f"\ndisagreements: {len(disagreements)}")
    for why, key, b, o in sorted(disagreements)[: args.max_listed]:
        ours_why = "; ".join(f"{k}: {o['reasons'][k]}" for k in _REASON_KEYS if k in o["reasons"])[
            :400
        ]
        side = "toolgate passes, BFCL fails" if o["passed"] else "BFCL passes, toolgate fails"
        print(f"- [{why}] {key}: {side}")
        print(f"    bfcl: {b['error_type']} {b['error'][:300]}")
        if not o["passed"]:
            print(f"    toolgate: failed {', '.join(o['failed_checks'])} — {ours_why}")
    timing = f"generate {t1 - t0:.1f}s, bfcl checker {t2 - t1:.1f}s, toolgate {t3 - t2:.1f}s"
    print(f"\ntimings: {timing} (work dir {workroot})")
    unexplained = sum(1 for d in disagreements if d[0] == "unexplained")
    failed = []
    if unexplained:
        failed.append(f"{unexplained} unexplained disagreements")
    if total["ours_only"]:
        failed.append(f"toolgate passes {total['ours_only']} outputs BFCL fails")
    if low:
        failed.append(f"agreement under {MIN_RATE:.1%} in {', '.join(low)}")
    if failed:
        print("FAILED: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
