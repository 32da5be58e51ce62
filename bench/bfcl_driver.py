"""BFCL's own verdicts, for ``bench/bfcl_agreement.py``; runs in the bfcl venv.

Reads JSON Lines jobs ``{key, category, functions, output, answer}`` on stdin and writes
``{key, valid, error_type, error, matching_exists?}`` per job on stdout. ``output`` is
BFCL's decoded model output ``[{function: {param: value}}]``. AST categories go through
``ast_checker`` exactly as BFCL's runner calls it; irrelevance items pass when no function
call was decoded, relevance items when one was (BFCL's ``_evaluate_single_relevance_entry``
with its ``is_empty_output``). For a failed parallel item,
``matching_exists`` says whether a one-to-one pairing exists in which BFCL's own per-call
checker accepts every pair — BFCL's checker pairs first-fit, so it can miss one.

Usage: ``python bench/bfcl_driver.py MODEL_NAME < jobs.jsonl``
"""

import json
import sys

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import (
    ast_checker,
    find_description,
    simple_function_checker,
)
from bfcl_eval.utils import is_empty_output

MODEL = sys.argv[1]


def perfect_matching(functions, output, answers):
    """Does a one-to-one pairing exist in which BFCL's own per-call checker accepts every
    pair? (BFCL's parallel checker pairs greedily, first fit.)"""
    if len(output) != len(answers):
        return False
    ok = [[False] * len(output) for _ in answers]
    for i, ans in enumerate(answers):
        desc = find_description(functions, next(iter(ans)))
        if desc is None:
            return False
        for j, out in enumerate(output):
            ok[i][j] = simple_function_checker(desc, out, ans, Language.PYTHON, MODEL)["valid"]
    match = [-1] * len(output)

    def augment(i, seen):
        for j in range(len(output)):
            if ok[i][j] and not seen[j]:
                seen[j] = True
                if match[j] < 0 or augment(match[j], seen):
                    match[j] = i
                    return True
        return False

    return all(augment(i, [False] * len(output)) for i in range(len(answers)))


for line in sys.stdin:
    job = json.loads(line)
    out = job["output"]
    if "relevance" in job["category"]:
        # BFCL's _evaluate_single_relevance_entry: a decoded, non-empty function call list
        # (is_empty_output) means "the model called"; irrelevance wants none, relevance one.
        called = not is_empty_output(out)
        if "irrelevance" in job["category"]:
            valid = not called
            why = "Valid syntax. Successfully decode AST when it should not."
            kind = "irrelevance_error:decoder_success"
        else:
            valid = called
            why = "Invalid syntax. Failed to decode AST when it should have."
            kind = "relevance_error:decoder_failed"
        res = {"valid": valid, "error": [] if valid else [why], "error_type": "" if valid else kind}
    else:
        try:
            res = ast_checker(
                job["functions"], out, job["answer"], Language.PYTHON, job["category"], MODEL
            )
        except Exception as exc:  # BFCL's checker crashes on some shapes: that is a verdict too
            res = {
                "valid": False,
                "error": [f"checker raised {type(exc).__name__}: {exc}"],
                "error_type": "checker_crash",
            }
    row = {
        "key": job["key"],
        "valid": bool(res["valid"]),
        "error_type": res.get("error_type", ""),
        "error": json.dumps(res.get("error", []), default=str)[:400],
    }
    if "parallel" in job["category"] and not res["valid"]:
        try:
            row["matching_exists"] = perfect_matching(job["functions"], out, job["answer"])
        except Exception:
            row["matching_exists"] = False
    print(json.dumps(row), flush=True)
