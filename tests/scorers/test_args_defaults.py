"""``args_match: exact_except_defaults``: exactly the expected arguments, plus arguments
whose value equals the tool schema's ``default`` (cases/args_defaults.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.config import ScoringConfig
from gate.model import ArgsMatch, Run, ToolCall, Turn
from gate.report.escape import Escaper
from gate.report.markdown import render_sentence
from gate.report.sentences import check_sentences
from gate.results import SampleResult, evidence_json
from gate.scorers import ScoringContext, score_sample
from gate.scorers.argmatch import arg_diffs, args_match, compile_args, match_flags
from gate.scorers.normalize import Normalizer
from tests.scorers.helpers import case, expected, matchers, tool

TABLE = json.loads((Path(__file__).parent / "cases" / "args_defaults.json").read_text())

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "page": {"type": "integer", "default": 1},
        "sort": {"type": "string", "default": "date"},
        "verbose": {"type": "boolean", "default": False},
        "delete_all": {"type": "boolean"},
        "filter": {
            "type": "object",
            "properties": {"status": {"type": "string"}, "limit": {"type": "integer"}},
            "default": {"status": "open"},
        },
    },
    "required": ["query"],
}
PLAIN = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "page": {"type": "integer"}},
}


def _norm(row: dict[str, Any]) -> Normalizer:
    return Normalizer.from_config().for_tool(PLAIN if row.get("schema") == "plain" else SEARCH)


@pytest.mark.parametrize("row", TABLE, ids=[r["name"] for r in TABLE])
def test_exact_except_defaults__table(row: dict[str, Any]) -> None:
    norm = _norm(row)
    exp = matchers(row["expected"])
    exact, defaults = match_flags(ArgsMatch(row.get("mode", "exact_except_defaults")))
    actual = row["actual"]
    assert args_match(exp, actual, exact=exact, norm=norm, except_defaults=defaults) is row["match"]
    compiled = compile_args(exp, exact=exact, norm=norm, except_defaults=defaults)
    assert compiled.matches(actual) is row["match"]
    diffs = arg_diffs(exp, actual, exact=exact, norm=norm, except_defaults=defaults)
    assert bool(diffs) is (not row["match"])
    extra = {d.argument: d.why for d in diffs if d.expected == {"$absent": True} and d.present}
    assert extra == row.get("extra", extra if not row["match"] else {})


@settings(max_examples=200, deadline=None)
@given(
    extra=st.dictionaries(
        st.sampled_from(["page", "sort", "verbose", "delete_all", "filter", "other"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(0, 3),
            st.sampled_from(["1", "date", "DATE ", "price", ""]),
            st.fixed_dictionaries({"status": st.sampled_from(["open", "closed"])}),
        ),
    )
)
def test_exact_except_defaults__compiled_path__agrees_with_the_reference_rule(
    extra: dict[str, Any],
) -> None:
    norm = Normalizer.from_config().for_tool(SEARCH)
    exp = matchers({"query": "refund"})
    actual = {"query": "refund", **extra}
    want = args_match(exp, actual, exact=True, norm=norm, except_defaults=True)
    assert compile_args(exp, exact=True, norm=norm, except_defaults=True).matches(actual) is want
    # It lies between exact and subset.
    assert args_match(exp, actual, exact=False, norm=norm) or not want
    assert want or not args_match(exp, actual, exact=True, norm=norm)


def _sample(args: dict[str, Any]):  # type: ignore[no-untyped-def]
    c = case(
        expect=[expected("search", {"query": "refund"}, mode=ArgsMatch.EXACT_EXCEPT_DEFAULTS)],
        tools=[tool("search", SEARCH)],
    )
    r = Run(case_id="c1", sample=0, turns=(Turn(calls=(ToolCall("search", args),)),), final="ok")
    return score_sample(c, r, ScoringContext.build(ScoringConfig()))


def test_exact_except_defaults__default_added__sample_passes() -> None:
    s = _sample({"query": "refund", "page": 1})
    assert s.passed and s.scores["required_args_match"] == 1.0


def test_exact_except_defaults__delete_all_added__fails_and_the_comment_names_it() -> None:
    s = _sample({"query": "refund", "delete_all": True})
    assert not s.passed and s.failed_checks == ("calls_matched", "order")
    assert s.scores["required_args_match"] == 0.0
    assert s.evidence is not None
    ev = evidence_json(s.evidence)
    assert ev["expected"] == [
        {"name": "search", "args": {"query": "refund"}, "args_match": "exact_except_defaults"}
    ]
    assert ev["arg_diffs"][0]["diffs"] == [
        {
            "argument": "delete_all",
            "expected": {"$absent": True},
            "why": "not expected, and the tool's schema gives it no default",
            "actual": True,
        }
    ]
    sample = SampleResult(
        sample=0, passed=False, scores=[], failed_checks=list(s.failed_checks), evidence=ev
    )
    esc = Escaper(limit=400)
    said = [render_sentence(x, esc, 400, full=True) for _, x in check_sentences(sample)]
    assert said[0] == (
        "`search` was called with `delete_all=true`, an argument this case does not expect, "
        "and the tool's schema gives it no default"
    )
