"""Render a PR comment (comment.md) to a PNG, as GitHub would show it.

The Markdown goes through cmark-gfm (GitHub's own fork of cmark, with its table, autolink,
strikethrough and tag-filter extensions; raw HTML such as ``<details>`` kept, as GitHub
keeps it) into a page styled like a GitHub comment, which headless Chromium photographs.
The README's picture is made with::

    python scripts/comment_picture.py tests/golden/example/regressed.comment.md docs/comment.png

Needs the ``cmark-gfm`` and ``chromium`` programs (Debian: ``apt-get install cmark-gfm
chromium fonts-noto-color-emoji``). Exit code 2 when one is missing.

The picture carries the sha256 of the Markdown it shows in a ``tEXt`` chunk
(``toolgate-comment-sha256``): tests/test_doc_excerpts.py compares it with the golden
comment, so a picture that no longer shows what the README's commands produce fails.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import shutil
import struct
import zlib
import subprocess
import sys
import tempfile
from pathlib import Path

STYLE = """
body { margin: 0; background: #ffffff; }
.comment { box-sizing: border-box; width: 1012px; margin: 16px; border: 1px solid #d0d7de;
  border-radius: 6px; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica,
  Arial, sans-serif, "Noto Color Emoji"; color: #1f2328; }
.header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px;
  color: #59636e; border-radius: 6px 6px 0 0; }
.body { padding: 16px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em;
  margin: 0 0 16px; }
h3 { font-size: 1.25em; margin: 24px 0 16px; }
table { border-collapse: collapse; display: block; max-width: 100%; overflow: auto;
  margin: 0 0 16px; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; vertical-align: top; }
th { font-weight: 600; } tr:nth-child(2n) { background: #f6f8fa; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: rgba(129,139,152,.12); padding: .2em .4em; border-radius: 6px; }
summary { cursor: pointer; } details { margin: 0 0 16px; }
sub { color: #59636e; }
"""


def render_html(markdown: str, cmark: str) -> str:
    body = subprocess.run(
        [cmark, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough",
         "-e", "tagfilter", "--to", "html"],
        input=markdown, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><style>{STYLE}</style></head>'
        f'<body><div class="comment"><div class="header"><b>github-actions</b> commented'
        f'</div><div class="body">{body}</div></div></body></html>'
    )


KEY = b"toolgate-comment-sha256"


def with_source(png: bytes, markdown: str) -> bytes:
    """The PNG with a tEXt chunk naming the sha256 of the Markdown it shows, right after
    the header chunk."""
    digest = hashlib.sha256(markdown.encode("utf-8")).hexdigest().encode()
    data = KEY + b"\0" + digest
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + data) & 0xFFFFFFFF)
    end_of_ihdr = 8 + 8 + 13 + 4  # signature, IHDR length and type, its data, its CRC
    return png[:end_of_ihdr] + chunk + png[end_of_ihdr:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("comment", type=Path, help="the comment.md to render")
    parser.add_argument("png", type=Path, help="where to write the picture")
    parser.add_argument("--height", type=int, default=2000, help="pixels (default 2000)")
    args = parser.parse_args()
    cmark = shutil.which("cmark-gfm")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if cmark is None or chromium is None:
        missing = ", ".join(n for n, p in (("cmark-gfm", cmark), ("chromium", chromium)) if not p)
        sys.stderr.write(f"comment_picture: {missing} not found on PATH\n")
        return 2
    markdown = args.comment.read_text(encoding="utf-8")
    page = render_html(markdown, cmark)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comment.html"
        path.write_text(page, encoding="utf-8")
        args.png.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={tmp}/profile", f"--window-size=1044,{args.height}",
             f"--screenshot={args.png.resolve()}", path.as_uri()],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip
    args.png.write_bytes(with_source(args.png.read_bytes(), markdown))
    print(f"wrote {args.png} ({html.escape(str(args.comment))} rendered)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
