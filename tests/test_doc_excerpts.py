"""The comment shown in docs/action.md is the golden file's, never a stale copy: the
generated block is rebuilt from ``tests/golden/example/regressed.comment.md`` and compared
(``TOOLGATE_UPDATE_GOLDEN=1`` rewrites it). README.md shows its picture, docs/comment.png,
rendered from the same golden file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "example" / "regressed.comment.md"
START = "<!-- generated from tests/golden/example/regressed.comment.md: do not edit -->"
END = "<!-- end of generated -->"
UPDATE = os.environ.get("TOOLGATE_UPDATE_GOLDEN") == "1"


def whole(comment: str) -> str:
    return "---\n\n" + comment.rstrip("\n")


def _block(text: str, doc: str) -> tuple[int, int]:
    start, end = text.find(START), text.find(END)
    assert 0 <= start < end, f"{doc} has no generated block"
    return start + len(START) + 1, end


@pytest.mark.parametrize(("doc", "make"), [("docs/action.md", whole)], ids=["action"])
def test_docs__comment_shown__is_the_golden_comment(doc: str, make: object) -> None:
    path = ROOT / doc
    text = path.read_text(encoding="utf-8")
    a, b = _block(text, doc)
    assert callable(make)
    want = make(GOLDEN.read_text(encoding="utf-8")) + "\n"
    if UPDATE:
        path.write_text(text[:a] + want + text[b:], encoding="utf-8", newline="\n")
        return
    assert text[a:b] == want, f"{doc}: the comment shown differs from the golden file"


def _png_text(png: bytes) -> dict[bytes, bytes]:
    """The tEXt chunks of a PNG."""
    import struct

    out: dict[bytes, bytes] = {}
    i = 8
    while i < len(png):
        (length,) = struct.unpack(">I", png[i : i + 4])
        kind, data = png[i + 4 : i + 8], png[i + 8 : i + 8 + length]
        if kind == b"tEXt":
            key, _, value = data.partition(b"\0")
            out[key] = value
        i += 12 + length
    return out


def test_readme__shows_the_picture_of_the_comment_its_commands_produce() -> None:
    """docs/comment.png is rendered from the golden comment of the README's commands
    (``python scripts/comment_picture.py tests/golden/example/regressed.comment.md
    docs/comment.png`` writes the golden's sha256 into it)."""
    import hashlib

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/comment.png)" in text
    png = (ROOT / "docs" / "comment.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    shown = _png_text(png).get(b"toolgate-comment-sha256", b"").decode()
    assert shown == hashlib.sha256(GOLDEN.read_bytes()).hexdigest(), (
        "docs/comment.png shows another comment than the golden: run "
        "python scripts/comment_picture.py tests/golden/example/regressed.comment.md "
        "docs/comment.png"
    )
