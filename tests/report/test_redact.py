"""Secrets never appear in any report: configured environment values and token shapes,
in every renderer, the annotations and the outputs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.github.workflow import annotations_for, format_outputs, outputs_for
from gate.report import render_comment, render_console, render_junit, render_markdown
from gate.report.redact import Redactor
from gate.results import Results
from tests.report.fixtures import failing

ENV_SECRET = "s3cr3t-Value-0f-the-Agent"
TOKENS = {
    "github classic": "ghp_" + "A1b2C3d4E5" * 4,
    "github server": "ghs_" + "z9" * 18,
    "github fine-grained": "github_pat_11ABCDEFG0" + "x" * 40,
    "openai": "sk-proj-" + "Q" * 40,
    "anthropic": "sk-ant-api03-" + "k" * 30,
    "aws": "AKIAIOSFODNN7EXAMPLE",
}
BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.signature"


def leaky() -> Results:
    """The failing fixture with secrets planted in every kind of string a report shows."""
    data: dict[str, Any] = failing().model_dump(mode="json")
    planted = " ".join([ENV_SECRET, *TOKENS.values(), f"Authorization: Bearer {BEARER}"])
    data["agent"]["env"] = {"API_KEY": ENV_SECRET, "TOKEN": TOKENS["openai"]}
    data["notices"].append(f"agent stderr: {planted}")
    data["verdict"]["summary"] += f" ({ENV_SECRET})"
    for case in data["cases"]:
        for s in case["samples"]:
            s["evidence"]["summary"] = f"model said {planted}"
            s["reasons"] = {c: f"because {planted}" for c in s["failed_checks"]}
            if s.get("error"):
                s["error"] = f"crashed: {planted}"
    for h in data["hard_failures"]:
        h["call"]["arguments"] = {"token": TOKENS["github classic"], "note": ENV_SECRET}
        h["message"] = f"called with {planted}"
    for f in data["comparison"]["flips"]:
        f["reason"] = planted
    data["comparison"]["tool_drift"][0]["diff"].append(f"+secret {planted}")
    # A secret right at a truncation boundary: cut unredacted, its start would show.
    data["cases"][1]["samples"][0]["evidence"]["actual"][0]["arguments"]["note"] = (
        "x" * 95 + ENV_SECRET
    )
    return Results.model_validate(data)


REDACTOR = Redactor.from_environ(["AGENT_KEY"], {"AGENT_KEY": ENV_SECRET})


def rendered() -> dict[str, str]:
    r = leaky()
    return {
        "comment": render_comment(r, redactor=REDACTOR),
        "markdown": render_markdown(r, redactor=REDACTOR),
        "junit": render_junit(r, redactor=REDACTOR),
        "console": render_console(r, redactor=REDACTOR),
        "annotations": "\n".join(annotations_for(r, redact=REDACTOR.redact)),
        "outputs": format_outputs(
            {k: REDACTOR.redact(v) for k, v in outputs_for(r, "r.json").items()}
        ),
    }


@pytest.mark.parametrize(
    "kind", ["comment", "markdown", "junit", "console", "annotations", "outputs"]
)
def test_redact__every_renderer__no_secret_or_token_survives(kind: str) -> None:
    text = rendered()[kind]
    for secret in (ENV_SECRET, *TOKENS.values(), BEARER):
        assert secret not in text, f"{kind} shows {secret[:12]}…"
        assert secret[:12] not in text, f"{kind} shows the start of {secret[:12]}…"


def test_redact__markdown__says_what_was_redacted() -> None:
    text = rendered()["markdown"]
    assert "[REDACTED:AGENT_KEY]" in text and "[REDACTED]" in text


def test_redact__shapes__prose_left_alone() -> None:
    r = Redactor()
    prose = "the token limit was exceeded; a bearer of bad news; ask-me-anything; sk-short"
    assert r.redact(prose) == prose


@pytest.mark.parametrize("name,token", sorted(TOKENS.items()))
def test_redact__shapes__each_token_kind(name: str, token: str) -> None:
    assert Redactor().redact(f"key={token};") == "key=[REDACTED];"


def test_redact__short_env_values__not_searched() -> None:
    r = Redactor.from_environ(["FLAG"], {"FLAG": "on"})
    assert r.redact("turn it on") == "turn it on"


def test_redact__json_escaped_secret__also_removed() -> None:
    secret = 'pa"ss\\word-123'
    r = Redactor.from_environ(["P"], {"P": secret})
    assert r.redact('{"password": "pa\\"ss\\\\word-123"}') == '{"password": "[REDACTED:P]"}'


def test_redact__always_secret_variables__included_without_config() -> None:
    r = Redactor.from_environ([], {"GITHUB_TOKEN": "abcdef123456"})
    assert r.redact("x abcdef123456 y") == "x [REDACTED:GITHUB_TOKEN] y"


# ─── the whole-line check runs.jsonl is written through ───────────────────────

_TRICKY = st.sampled_from(
    [
        "token",
        "TOKEN",
        "Bearer",
        "tokens",
        "_tokens",
        "\u212aey",  # Kelvin sign K
        "ghp_",
        "gho_",
        "sk-",
        "AKIA",
        "ASIA",
        "xox",
        "github_pat_",
        " ",
        "\n",
        "\t",
        "\u00a0",
        '"',
        "\\",
        ":",
        "_",
        "a1b2c3d4e5f6g7h8i9j0",
        "=",
        "s3cr3t-value-0123",
        "é",
        "\u2028",
        "\x01",
    ]
)
_TEXT = st.lists(_TRICKY, max_size=8).map("".join)
_DOCS = st.recursive(
    st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | _TEXT,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_TEXT, kids, max_size=3),
    max_leaves=8,
)


@settings(max_examples=500, deadline=None)
@given(doc=_DOCS)
def test_is_clean_never_vouches_for_a_line_redaction_would_change(doc: object) -> None:
    from gate import jsonio
    from gate.runsfile import _redact_strings

    r = Redactor.of([("s3cr3t-value-0123", "KEY"), ('quo"te\nsecret-xyz', "Q")])
    line = jsonio.dumps_line(doc).decode()
    if r.is_clean(line):
        assert _redact_strings(doc, r.redact) == doc


def test_is_clean_lets_usage_counts_through_and_stops_at_credentials() -> None:
    from gate import jsonio

    r = Redactor.of([("s3cr3t-value-0123", "KEY")])
    usage = {"usage": {"prompt_tokens": 3, "completion_tokens": 4}, "text": "no tokens here"}
    assert r.is_clean(jsonio.dumps_line(usage).decode())
    for bad in ("Bearer abcdefgh12345678", "token\nabcdefgh12345678", "x s3cr3t-value-0123",
                "ghp_" + "a" * 36):  # fmt: skip
        assert not r.is_clean(jsonio.dumps_line({"t": bad}).decode()), bad
