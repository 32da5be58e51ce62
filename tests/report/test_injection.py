"""Hostile strings from a dataset, a model or a tool response stay inert in every report.

The corpus tries to close the hidden HTML marker, break tables and code fences, ping
users and teams, embed images and links, forge a "✅ passed" verdict line, run terminal
escape sequences and reorder text with bidi controls. The Markdown reports are parsed with
GitHub's own cmark-gfm (``cmarkgfm``, raw HTML allowed as GitHub's parser sees it) and
the resulting HTML is checked structurally.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from gate.github.workflow import annotations_for
from gate.report import marker, render_comment, render_console, render_junit, render_markdown
from gate.report.escape import code, text
from gate.results import Results
from tests.report.fixtures import failing

FORGED_VERDICT = "## ✅ ToolGate `support-agent` passed — all gates hold"

CORPUS: list[str] = [
    "--> <!-- toolgate:comment name=support-agent -->",
    "<!-- toolgate:comment name=evil -->",
    "a | b | c",
    "```\n" + FORGED_VERDICT + "\n```",
    "`code` ``two`` ```three```",
    "@octocat and @my-org/security-team please look",
    "![img](https://evil.example/x.png)",
    "[click here](https://evil.example/phish)",
    "https://evil.example/phish and www.evil.example",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<details><summary>hidden",
    "</details></table></td>",
    "\n" + FORGED_VERDICT + "\n",
    "\r\n✅ passed\r\n",
    ":white_check_mark: passed",
    "fixes #1234 and octo/agent#5",
    "see GH-123 and gh-7",
    "$\\sqrt{2}$ and $$x$$",
    "**bold** _em_ ~~strike~~",
    "\x1b[31mred\x1b[0m\x1b]0;title\x07",
    "\u202eevil\u202c \u2066iso\u2069",
    "line1\u2028line2\u2029line3\x00nul",
    "> quote",
    "- list item",
    "1. ordered",
    "# heading",
    "&amp; &lt;b&gt;",
    "trailing backslash \\",
    "x" * 5_000,
]


def hostile() -> Results:
    """The failing fixture with every data string replaced by corpus strings."""
    base = failing()
    data = base.model_dump(mode="json")
    it = iter(CORPUS * 50)

    def swap(v: Any) -> Any:
        return next(it) if isinstance(v, str) else v

    for i, case in enumerate(data["cases"]):
        case["id"] = CORPUS[i % len(CORPUS)] + f" #{i}"
        case["tools"] = [swap(t) for t in case["tools"]]
        for s in case["samples"]:
            s["failed_checks"] = [swap(c) for c in s["failed_checks"]] or [next(it)]
            s["reasons"] = {k: swap(v) for k, v in s["reasons"].items()}
            s["evidence"] = _deep_swap(s["evidence"], it)
            if s.get("error"):
                s["error"] = next(it)
    for h in data["hard_failures"]:
        h["case_id"] = next(it)
        h["message"] = next(it)
        h["call"] = _deep_swap(h["call"], it)
    cmp = data["comparison"]
    cmp["source"] = next(it)
    for j, f in enumerate(cmp["flips"]):
        f["case_id"] = data["cases"][j % len(data["cases"])]["id"]
        f["failed_checks"] = [swap(c) for c in f["failed_checks"]]
        f["reason"] = next(it)
    for d in cmp["tool_drift"]:
        d["tool"] = next(it)
        d["diff"] = list(CORPUS)
        d["flipped_cases"] = [next(it)]
    data["per_tool"] = {
        name: {"expected": 3, "matched": 1, "recall": 0.333, "called": 2} for name in CORPUS
    }
    data["notices"] = list(CORPUS)
    data["agent"] = {"command": list(CORPUS[:10])}
    data["verdict"]["summary"] = "\n".join(CORPUS[:16])
    data["verdict"]["reasons"] = list(CORPUS)
    for g in data["verdict"]["gates"]:
        g["reason"] = next(it)
        g["failing_cases"] = [next(it)]
    data["judge"] = {k[:40]: k for k in CORPUS}
    return Results.model_validate(data)


def _deep_swap(v: Any, it: Any) -> Any:
    if isinstance(v, str):
        return next(it)
    if isinstance(v, list):
        return [_deep_swap(x, it) for x in v]
    if isinstance(v, dict):
        return {
            (
                next(it) if k not in ("name", "arguments", "args", "expected", "actual") else k
            ): _deep_swap(x, it)
            for k, x in v.items()
        }
    return v


class _Html(HTMLParser):
    """Collects what matters: tags seen, comments, table shapes, text outside code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.comments: list[str] = []
        self.rows: list[int] = []
        self.header_cells: list[int] = []
        self.tables: list[tuple[int, list[int]]] = []
        self.code_depth = 0
        self.text_outside_code: list[str] = []
        self.headings: list[str] = []
        self._heading: list[str] | None = None
        self._cells = 0
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("code", "pre"):
            self.code_depth += 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = []
        if tag == "table":
            self.tables.append((0, []))
        if tag == "thead":
            self._in_head = True
        if tag == "tr":
            self._cells = 0
        if tag in ("td", "th"):
            self._cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code_depth -= 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None
        if tag == "thead":
            self._in_head = False
        if tag == "tr":
            rows = self.tables[-1][1]
            if self._in_head:
                self.tables[-1] = (self._cells, rows)
            else:
                rows.append(self._cells)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)
        if not self.code_depth:
            self.text_outside_code.append(data)


def parse(markdown: str) -> _Html:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    p = _Html()
    p.feed(html)
    p.close()
    return p


def assert_inert(markdown: str, *, with_marker: bool) -> None:
    p = parse(markdown)
    allowed = {
        "h1", "h2", "h3", "p", "em", "strong", "code", "pre", "table", "thead", "tbody",
        "tr", "th", "td", "ul", "li", "details", "summary", "sub", "br", "blockquote",
    }  # fmt: skip
    assert set(p.tags) <= allowed, f"unexpected HTML from data: {set(p.tags) - allowed}"
    assert p.tags.count("details") == p.tags.count("summary")
    expected_comments = [marker("support-agent")[4:-3]] if with_marker else []
    assert p.comments == expected_comments
    for n_cols, rows in p.tables:
        assert rows and all(n == n_cols for n in rows), "a table row has the wrong cell count"
    # The verdict heading is ours and says "failed" first; data inside it comes after,
    # on the same line. No other heading may claim a pass.
    assert p.headings[0].startswith("❌ ToolGate support-agent failed — ")
    ours = (
        "🛑 Hard failures", "Metrics", "Gates", "Variance guard", "🔻 Regressions",
        "🔧 Tool-definition drift", "✅ Fixed", "🎲 Flaky", "New and removed",
        "Per-tool recall", "Tool confusion", "Malformed calls", "Failing cases",
        "⚖️ Judge scores", "⚠️ No answer", "⚠️ Undecided", "Undecided", "Within noise",
        "Usage and timing", "Run information", "🧪 Tests against", "Slices", "Reasons",
    )  # fmt: skip
    for h in p.headings[1:]:
        assert h.startswith(ours), f"a heading that is not ours: {h!r}"
    prose = "".join(p.text_outside_code)
    assert not re.search(r"@[\w-]", prose), "a mention outside code"
    assert not re.search(r"#\d", prose), "an issue reference outside code"
    assert not re.search(r"(?i)\bGH-\d", prose), "a GH- issue reference outside code"
    assert ":white_check_mark:" not in prose
    assert "://" not in prose and "www." not in prose.lower()
    for line in markdown.splitlines():
        assert not line.startswith("✅ passed")
        assert line != FORGED_VERDICT
    for ch in ("\x1b", "\u202e", "\u2066", "\u2028", "\x00", "\r"):
        assert ch not in markdown
    assert "x" * 1_000 not in markdown, "a long value was not truncated"


def test_injection__comment__rendered_inert() -> None:
    body = render_comment(hostile())
    assert body.startswith(marker("support-agent") + "\n")
    assert_inert(body, with_marker=True)


def test_injection__full_report__rendered_inert() -> None:
    assert_inert(render_markdown(hostile()), with_marker=False)


def test_injection__console__no_control_characters_or_forged_lines() -> None:
    out = render_console(hostile())
    for ch in ("\x1b", "\u202e", "\x00", "\r", "\x07"):
        assert ch not in out
    assert not any(line.startswith(("✅ passed", "## ")) for line in out.splitlines())


def test_injection__junit__well_formed_and_escaped() -> None:
    xml = render_junit(hostile())
    root = ET.fromstring(xml.encode())
    names = [tc.get("name") for tc in root.iter("testcase")]
    assert any(n and "<!-- toolgate" in n for n in names)  # kept as text, escaped by XML
    assert "\x1b" not in xml and "\x00" not in xml


def test_injection__annotations__one_line_each_and_escaped() -> None:
    for line in annotations_for(hostile()):
        assert "\n" not in line and "\r" not in line
        assert line.startswith(("::error", "::warning", "::notice"))
        _, _, message = line[2:].partition("::")
        assert "::" not in message.replace("%3A%3A", "")


@pytest.mark.parametrize("value", CORPUS)
def test_escape__code_span__one_span_whatever_the_value(value: str) -> None:
    p = parse(f"| h |\n|---|\n| {code(value)} |")
    assert p.tags.count("code") == 1
    assert p.tables == [(1, [1])]


@pytest.mark.parametrize("value", CORPUS)
def test_escape__text__no_markup_whatever_the_value(value: str) -> None:
    p = parse(f"- {text(value, limit=500)}")
    assert set(p.tags) <= {"ul", "li"}, set(p.tags)


def test_marker__hostile_gate_name__cannot_close_the_comment() -> None:
    m = marker("a --> <b> name")
    assert m.count("-->") == 1 and m.endswith("-->")
    assert "<b>" not in m
