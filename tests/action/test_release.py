"""Tagged releases run the published image; the default branch builds the Dockerfile.

``.ci/pin_image.py`` is the release commit's one change to action.yml; the release
workflow publishes the image first and tags that commit (vX.Y.Z new, vX.Y and vX moved).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "pin_image.py"


def pin_image() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pin_image", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def test_action_yml__default_branch__builds_the_dockerfile():
    assert load((ROOT / "action.yml").read_text("utf-8"))["runs"] == {
        "using": "docker",
        "image": "Dockerfile",
    }


def test_pin_image__release_commit__runs_the_published_image_and_changes_nothing_else():
    text = (ROOT / "action.yml").read_text("utf-8")
    pinned = pin_image().pin(text, "1.2.3", "ghcr.io/toolgate/toolgate")
    before, after = load(text), load(pinned)
    assert after["runs"] == {"using": "docker", "image": "docker://ghcr.io/toolgate/toolgate:1.2.3"}
    after["runs"]["image"] = before["runs"]["image"]
    assert after == before
    assert [a for a, b in zip(text.splitlines(), pinned.splitlines(), strict=True) if a != b] == [
        "  image: Dockerfile"
    ]


@pytest.mark.parametrize(
    ("version", "image"),
    [("v1.2.3", "ghcr.io/a/b"), ("1.2", "ghcr.io/a/b"), ("1.2.3", "ghcr.io/A/B"), ("1.2.3", "x")],
)
def test_pin_image__bad_version_or_image__exit_2_action_yml_untouched(tmp_path, version, image):
    copy = tmp_path / "repo"
    (copy / ".ci").mkdir(parents=True)
    (copy / ".ci" / "pin_image.py").write_bytes(SCRIPT.read_bytes())
    original = (ROOT / "action.yml").read_bytes()
    (copy / "action.yml").write_bytes(original)
    proc = subprocess.run(
        [sys.executable, str(copy / ".ci" / "pin_image.py"), version, image],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout
    assert (copy / "action.yml").read_bytes() == original


def test_pin_image__already_pinned__refused():
    pinned = pin_image().pin((ROOT / "action.yml").read_text("utf-8"), "1.0.0", "ghcr.io/a/b")
    with pytest.raises(ValueError, match="expected one `image: Dockerfile` line"):
        pin_image().pin(pinned, "1.0.1", "ghcr.io/a/b")


def test_release_workflow__publishes_the_image_then_tags_the_pinned_commit():
    wf = load((ROOT / ".github" / "workflows" / "release.yml").read_text("utf-8"))
    on = wf.get("on", wf.get(True))
    assert on["workflow_dispatch"]["inputs"]["version"]["required"] is True
    image, tag = wf["jobs"]["image"], wf["jobs"]["tag"]
    assert image["permissions"] == {"contents": "read", "packages": "write"}
    assert tag["needs"] == "image", "tag only what was published"
    assert tag["permissions"] == {"contents": "write"}
    tag_runs = "\n".join(str(s.get("run", "")) for s in tag["steps"])
    assert 'python3 .ci/pin_image.py "$VERSION" "ghcr.io/${GITHUB_REPOSITORY,,}"' in tag_runs
    assert 'git tag "v$VERSION"' in tag_runs and 'git push origin "v$VERSION"' in tag_runs
    image_runs = "\n".join(str(s.get("run", "")) for s in image["steps"])
    assert "grep -Eq '^verdict=(passed|failed)$'" in image_runs, "the image is smoke-tested"
    meta = next(s for s in image["steps"] if s.get("id") == "meta")
    assert "ghcr.io/${{ github.repository }}" in meta["with"]["images"]
