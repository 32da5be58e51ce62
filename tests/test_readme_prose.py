"""README.md reads in five minutes, and every relative link in the docs leads somewhere.

The README is measured as a reader meets it: its prose outside code blocks, tables and
HTML comments, sentences split on . ! ? : ; — at most 2,500 words, a median sentence of
at most 20 words, and the picture of the PR comment within the first screen (40 lines).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
FIRST_SCREEN = 40
"""Lines a reader sees before scrolling."""

FENCE = re.compile(r"^\s*(```|~~~)")
IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
END = re.compile(r"[.!?:;](?=\s|$)")
WORD = re.compile(r"\w")


def blocks(markdown: str) -> list[str]:
    """The prose of a Markdown text: paragraphs, list items and headings, each one block;
    code blocks (fenced or indented), tables, HTML and images left out, links as their
    text."""
    text = COMMENT.sub("", markdown)
    out: list[str] = []
    current: list[str] = []
    fenced = False
    blank = True

    def flush() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for raw in text.splitlines():
        if FENCE.match(raw):
            flush()
            fenced = not fenced
            continue
        line = raw.strip()
        if fenced:
            continue
        if not line:
            flush()
            blank = True
            continue
        if raw.startswith("    ") and blank and not current:
            continue  # an indented code block
        blank = False
        if line.startswith(("|", "<", "> |")):
            flush()
            continue
        if line.startswith("#") or re.match(r"^([-*+]|\d+\.)\s", line):
            flush()
            line = re.sub(r"^(#+|[-*+]|\d+\.)\s+", "", line)
        line = LINK.sub(r"\1", IMAGE.sub("", line))
        if line:
            current.append(line)
    flush()
    return out


def sentences(markdown: str) -> list[list[str]]:
    """Each sentence of the prose as its words (tokens with a letter or digit)."""
    found: list[list[str]] = []
    for block in blocks(markdown):
        for part in END.split(block):
            words = [w for w in part.split() if WORD.search(w)]
            if words:
                found.append(words)
    return found


def test_prose__sentences__split_on_stops_colons_and_semicolons() -> None:
    text = (
        "# A title\n\nOne two three. Four five: six; seven!\n\n```sh\nnot prose here\n```\n"
        "| a | b |\n|---|---|\n\n- an item with a [link](docs/x.md)\n\n    indented code\n"
    )
    assert sentences(text) == [
        ["A", "title"],
        ["One", "two", "three"],
        ["Four", "five"],
        ["six"],
        ["seven"],
        ["an", "item", "with", "a", "link"],
    ]


README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme__at_most_2500_words_of_prose() -> None:
    words = sum(len(s) for s in sentences(README))
    assert words <= 2500, words


def test_readme__median_sentence_at_most_20_words() -> None:
    median = statistics.median(len(s) for s in sentences(README))
    assert median <= 20, median


def test_readme__first_screen__says_what_it_does_shows_the_comment_and_the_command() -> None:
    """What ToolGate does in at most three sentences, the picture of a failing comment,
    then the one command — all within the first screen."""
    lines = README.splitlines()
    picture = next(i for i, line in enumerate(lines) if "](docs/comment.png)" in line)
    assert picture < FIRST_SCREEN, picture
    command = next(i for i, line in enumerate(lines) if "toolgate check --base-run" in line)
    assert command < FIRST_SCREEN, command
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    intro = "\n".join(lines[title + 1 : picture])
    assert 1 <= len(sentences(intro)) <= 3, sentences(intro)


# ─── links ─────────────────────────────────────────────────────────────────────


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub makes for a file's headings (outside code blocks)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        title = re.sub(r"[`*]", "", LINK.sub(r"\1", m.group(1)))
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(markdown: str) -> list[str]:
    text = COMMENT.sub("", markdown)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    found = [m.group(2) for m in LINK.finditer(text)]
    found += re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    return [t for t in found if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_anchors__github_slugs() -> None:
    text = "# The `command` protocol (JSON Lines)\n## Tau2-bench results\n## Tau2-bench results\n"
    assert anchors(text) == {
        "the-command-protocol-json-lines",
        "tau2-bench-results",
        "tau2-bench-results-1",
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs__every_relative_link__resolves_to_a_file_and_anchor(doc: Path) -> None:
    bad: list[str] = []
    for target in relative_links(doc.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists() or not file.resolve().is_relative_to(ROOT):
            bad.append(f"{target}: no such file")
            continue
        if (
            anchor
            and file.suffix == ".md"
            and anchor not in anchors(file.read_text(encoding="utf-8"))
        ):
            bad.append(f"{target}: no such heading")
    assert not bad, f"{doc.relative_to(ROOT)}: " + "; ".join(bad)
