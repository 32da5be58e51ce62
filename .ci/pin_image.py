"""Point action.yml at a published image: the release commit's one change.

    python .ci/pin_image.py 1.2.3 ghcr.io/owner/repo

rewrites ``runs.image: Dockerfile`` in action.yml to
``runs.image: docker://ghcr.io/owner/repo:1.2.3`` (nothing else in the file changes), so
that ``uses: owner/repo@v1.2.3`` pulls the prebuilt image instead of building the
Dockerfile. The default branch keeps ``image: Dockerfile``: unreleased refs (``@main``, a
commit SHA) still build from source. Exit code 2 on a bad version or image name, or an
action.yml that does not build the Dockerfile.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
IMAGE = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9._/-]+")
LINE = re.compile(r"^(?P<indent>\s+)image:\s*['\"]?Dockerfile['\"]?\s*$", re.M)


def pin(text: str, version: str, image: str) -> str:
    """action.yml's text with the Dockerfile image replaced by ``image:version``."""
    if not VERSION.fullmatch(version):
        raise ValueError(f"version must be X.Y.Z, not {version!r}")
    if not IMAGE.fullmatch(image):
        raise ValueError(f"image must be a lower-case registry/name, not {image!r}")
    found = LINE.findall(text)
    if len(found) != 1:
        raise ValueError(f"expected one `image: Dockerfile` line in action.yml, found {len(found)}")
    return LINE.sub(lambda m: f"{m.group('indent')}image: docker://{image}:{version}", text)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path = Path(__file__).resolve().parent.parent / "action.yml"
    try:
        path.write_text(pin(path.read_text("utf-8"), argv[0], argv[1]), "utf-8")
    except ValueError as exc:
        print(f"pin_image: {exc}", file=sys.stderr)
        return 2
    print(f"action.yml: image: docker://{argv[1]}:{argv[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
