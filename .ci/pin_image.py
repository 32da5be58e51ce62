"""Point action.yml at the published image, by digest: the release commit's one change.

    python .ci/pin_image.py 1.2.3 ghcr.io/owner/repo sha256:<64 hex digits>

rewrites ``runs.image: Dockerfile`` in action.yml to
``runs.image: docker://ghcr.io/owner/repo@sha256:<digest>`` with the version as a comment
on that line (nothing else in the file changes), so that ``uses: owner/repo@v1.2.3`` pulls
the image the release workflow built from the Dockerfile, tested and tagged 1.2.3 —
exactly that image, whatever later happens to the tag — instead of building the
Dockerfile on every job. The default branch keeps ``image: Dockerfile``: unreleased refs
(``@main``, a commit SHA) still build from source. Exit code 2 on a bad version, image
name or digest, or an action.yml that does not build the Dockerfile.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
IMAGE = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9._/-]+")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
LINE = re.compile(r"^(?P<indent>\s+)image:\s*['\"]?Dockerfile['\"]?\s*$", re.M)
USAGE = "usage: python .ci/pin_image.py VERSION REGISTRY/NAME sha256:DIGEST"


def pin(text: str, version: str, image: str, digest: str) -> str:
    """action.yml's text with the Dockerfile image replaced by ``image@digest``."""
    if not VERSION.fullmatch(version):
        raise ValueError(f"version must be X.Y.Z, not {version!r}")
    if not IMAGE.fullmatch(image):
        raise ValueError(f"image must be a lower-case registry/name, not {image!r}")
    if not DIGEST.fullmatch(digest):
        raise ValueError(f"digest must be sha256: and 64 lower-case hex digits, not {digest!r}")
    found = LINE.findall(text)
    if len(found) != 1:
        raise ValueError(f"expected one `image: Dockerfile` line in action.yml, found {len(found)}")
    return LINE.sub(
        lambda m: f"{m.group('indent')}image: docker://{image}@{digest}  # {image}:{version}",
        text,
    )


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(USAGE, file=sys.stderr)
        return 2
    version, image, digest = argv
    path = Path(__file__).resolve().parent.parent / "action.yml"
    try:
        path.write_text(pin(path.read_text("utf-8"), version, image, digest), "utf-8")
    except ValueError as exc:
        print(f"pin_image: {exc}", file=sys.stderr)
        return 2
    print(f"action.yml: image: docker://{image}@{digest} ({version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
