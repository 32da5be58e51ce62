"""Tagged releases run the published image, by digest; the default branch builds the
Dockerfile.

``.ci/pin_image.py`` is the release commit's one change to action.yml
(``image: docker://ghcr.io/<owner>/<repo>@sha256:<digest>``); the release workflow builds
the image from the Dockerfile, pushes it, tests that digest with the image test
(``tests/image``), tags it with the release, then tags that commit (vX.Y.Z new, vX.Y and
vX moved). The released action.yml and the Dockerfile must agree: the same inputs as the
image's entrypoint reads, and no ``entrypoint``/``args`` that would bypass its ENTRYPOINT.
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

from gate.action import OUTPUTS
from gate.github.context import INPUT_DEFAULTS
from tests.action.dockerfile import entrypoint, instructions

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


DIGEST = "sha256:" + "0123456789abcdef" * 4
IMAGE = "ghcr.io/toolgate/toolgate"


def released() -> dict[str, Any]:
    """The release commit's action.yml: what ``uses: <owner>/<repo>@vX.Y.Z`` runs."""
    text = (ROOT / "action.yml").read_text("utf-8")
    return load(pin_image().pin(text, "1.2.3", IMAGE, DIGEST))  # type: ignore[no-any-return]


def test_pin_image__release_commit__runs_the_published_image_by_digest_nothing_else_changes():
    text = (ROOT / "action.yml").read_text("utf-8")
    pinned = pin_image().pin(text, "1.2.3", IMAGE, DIGEST)
    before, after = load(text), load(pinned)
    assert after["runs"] == {"using": "docker", "image": f"docker://{IMAGE}@{DIGEST}"}
    after["runs"]["image"] = before["runs"]["image"]
    assert after == before
    assert [
        (a, b) for a, b in zip(text.splitlines(), pinned.splitlines(), strict=True) if a != b
    ] == [("  image: Dockerfile", f"  image: docker://{IMAGE}@{DIGEST}  # {IMAGE}:1.2.3")]


@pytest.mark.parametrize(
    ("version", "image", "digest", "message"),
    [
        ("v1.2.3", "ghcr.io/a/b", DIGEST, "version must be X.Y.Z"),
        ("1.2", "ghcr.io/a/b", DIGEST, "version must be X.Y.Z"),
        ("1.2.3", "ghcr.io/A/B", DIGEST, "image must be a lower-case registry/name"),
        ("1.2.3", "x", DIGEST, "image must be a lower-case registry/name"),
        ("1.2.3", "ghcr.io/a/b", "0123456789abcdef" * 4, "digest must be sha256:"),
        ("1.2.3", "ghcr.io/a/b", "sha256:" + "0" * 63, "digest must be sha256:"),
        ("1.2.3", "ghcr.io/a/b", DIGEST.upper().replace("SHA", "sha"), "digest must be sha256:"),
        ("1.2.3", "ghcr.io/a/b", "sha256:" + "g" * 64, "digest must be sha256:"),
        ("1.2.3", "ghcr.io/a/b", "1.2.3", "digest must be sha256:"),
    ],
)
def test_pin_image__bad_version_image_or_digest__exit_2_says_why_action_yml_untouched(
    tmp_path, version, image, digest, message
):
    copy = tmp_path / "repo"
    (copy / ".ci").mkdir(parents=True)
    (copy / ".ci" / "pin_image.py").write_bytes(SCRIPT.read_bytes())
    original = (ROOT / "action.yml").read_bytes()
    (copy / "action.yml").write_bytes(original)
    proc = subprocess.run(
        [sys.executable, str(copy / ".ci" / "pin_image.py"), version, image, digest],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith("pin_image: ") and message in proc.stderr, proc.stderr
    assert (copy / "action.yml").read_bytes() == original


def test_pin_image__wrong_number_of_arguments__exit_2_with_the_usage(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "1.2.3", "ghcr.io/a/b"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: python .ci/pin_image.py VERSION REGISTRY/NAME sha256:")


def test_pin_image__already_pinned__refused():
    pinned = pin_image().pin((ROOT / "action.yml").read_text("utf-8"), "1.0.0", IMAGE, DIGEST)
    with pytest.raises(ValueError, match="expected one `image: Dockerfile` line"):
        pin_image().pin(pinned, "1.0.1", IMAGE, DIGEST)


# ─── the released action.yml and the image it runs agree ──────────────────────


def test_released_action_yml__inputs__are_the_ones_the_images_entrypoint_reads():
    """The image is built from this commit's Dockerfile, which copies this gate/: its
    entrypoint reads exactly action.yml's inputs (``INPUT_<NAME>``, hyphens kept) and
    writes its outputs."""
    action = released()
    assert set(action["inputs"]) == set(INPUT_DEFAULTS)
    for name, spec in action["inputs"].items():
        default = str(spec.get("default", ""))
        assert default.replace("${{ github.token }}", "") == INPUT_DEFAULTS[name], name
    assert set(OUTPUTS) <= set(action["outputs"])


def test_released_action_yml__runs_the_images_own_entrypoint_with_no_arguments():
    """No ``entrypoint``, ``args``, ``pre-``/``post-entrypoint`` or ``env`` in ``runs``:
    the runner starts the image's ENTRYPOINT — the Dockerfile's — as it is, so the
    released action and a build of the Dockerfile start ToolGate the same way."""
    runs = released()["runs"]
    assert set(runs) == {"using", "image"}, runs
    assert runs["image"].startswith("docker://") and runs["image"].endswith(f"@{DIGEST}")
    steps = instructions((ROOT / "Dockerfile").read_text("utf-8"))
    argv = entrypoint(steps)
    assert argv is not None and argv[0].startswith("/") and argv[-2:] == ["-m", "gate.action"]
    assert "-P" in argv
    assert [w for w, _ in steps if w == "CMD"] == []


def test_release_workflow__pins_the_digest_it_built_from_this_dockerfile_and_tested():
    wf = load((ROOT / ".github" / "workflows" / "release.yml").read_text("utf-8"))
    on = wf.get("on", wf.get(True))
    assert on["workflow_dispatch"]["inputs"]["version"]["required"] is True
    image, tag = wf["jobs"]["image"], wf["jobs"]["tag"]
    assert image["permissions"] == {"contents": "read", "packages": "write"}
    assert tag["needs"] == "image", "tag only what was published"
    assert tag["permissions"] == {"contents": "write"}
    # the image: this checkout's Dockerfile, built and pushed; its digest is the job's output
    steps = image["steps"]
    push = next(s for s in steps if s.get("id") == "push")
    assert push["uses"].startswith("docker/build-push-action@")
    assert push["with"]["context"] == "." and push["with"]["file"] == "Dockerfile"
    assert push["with"]["push"] is True
    assert push["with"]["tags"] == "${{ steps.commit.outputs.tags }}", "the commit's tag only"
    assert image["outputs"]["digest"] == "${{ steps.push.outputs.digest }}"
    # then tested as the runner runs it, pulled by that digest, before any release tag
    runs = [str(s.get("run", "")) for s in steps]
    test_at = next(i for i, r in enumerate(runs) if "python -m tests.image.check_image" in r)
    assert '--image "ghcr.io/${GITHUB_REPOSITORY,,}@$DIGEST"' in runs[test_at]
    assert steps[test_at]["env"]["DIGEST"] == "${{ steps.push.outputs.digest }}"
    retag_at = next(i for i, r in enumerate(runs) if "imagetools create" in r)
    assert retag_at > test_at, "the release tags go on a tested image only"
    assert '"$image@$DIGEST"' in runs[retag_at] and steps[retag_at]["env"]["TAGS"] == (
        "${{ steps.meta.outputs.tags }}"
    )
    meta = next(s for s in steps if s.get("id") == "meta")
    assert "ghcr.io/${{ github.repository }}" in meta["with"]["images"]
    # the release commit pins that digest
    tag_step = next(s for s in tag["steps"] if "pin_image.py" in str(s.get("run", "")))
    assert tag_step["env"]["DIGEST"] == "${{ needs.image.outputs.digest }}"
    assert (
        'python3 .ci/pin_image.py "$VERSION" "ghcr.io/${GITHUB_REPOSITORY,,}" "$DIGEST"'
        in tag_step["run"]
    )
    tag_runs = "\n".join(str(s.get("run", "")) for s in tag["steps"])
    assert 'git tag "v$VERSION"' in tag_runs and 'git push origin "v$VERSION"' in tag_runs
