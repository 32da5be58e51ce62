"""The Dockerfile's base image: pulled when a registry answers, else a stand-in made here.

The stand-in is Debian's own Python on the same Debian release as the ``FROM``
(``python:3.12.12-slim-bookworm`` → bookworm, whose Python is 3.11), made with
``debootstrap`` from the mirror this machine's apt uses and imported under the ``FROM``
tag, so that the Dockerfile builds unchanged. It is shaped like the official image where
the Dockerfile or a measurement depends on it:

* the official image's runtime packages (``ca-certificates``, ``netbase``, ``tzdata``),
  with pip and venv (Debian's ``python3-pip``, ``python3-venv``); no compiler, no git;
* ``/usr/local/bin/python`` (the ENTRYPOINT's interpreter) → ``/usr/bin/python3``, and
  pip's ``EXTERNALLY-MANAGED`` marker removed (the official image has neither);
* Debian's "slim" trimming (no documentation, manual pages or translations; dpkg told to
  keep leaving them out, as ``debian:bookworm-slim`` does), apt's lists and downloaded
  packages removed;
* no compiled bytecode of the standard library (the official image deletes its ``.pyc``
  files; with the Dockerfile's ``PYTHONDONTWRITEBYTECODE=1`` every start compiles what it
  imports, so the start-up measured here is not flattered);
* the certificate authorities this machine trusts (its ``/etc/ssl/certs/ca-certificates.crt``
  in place of Debian's), so that the build reaches PyPI wherever this machine's own pip
  does, a network whose HTTPS goes through a proxy of its own included.

What differs and cannot be helped: the Python version (Debian's 3.11, not 3.12) and its
layout (``/usr/lib/python3.11``, packages in ``/usr/local/lib/python3.11/dist-packages``),
and ``setuptools``/``wheel`` beside pip (Debian's pip depends on them). The image is labelled
``org.toolgate.stand-in`` so every report says which base it ran on.

The root file system is cached as a tarball under the cache folder (keyed by the release,
the mirror and this recipe), so a second run on the same machine imports it in seconds.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.image.engine import Engine

STAND_IN_LABEL = "org.toolgate.stand-in"
PACKAGES = ("python3", "python3-venv", "python3-pip", "ca-certificates", "netbase", "tzdata")
RECIPE = "4"
"""Bump when the stand-in's recipe changes (it is part of the cached tarball's name)."""

#: What debian:<release>-slim leaves out (and tells dpkg to keep leaving out).
SLIM_EXCLUDES = (
    "/usr/share/doc/*",
    "/usr/share/groff/*",
    "/usr/share/info/*",
    "/usr/share/linda/*",
    "/usr/share/lintian/overrides/*",
    "/usr/share/locale/*",
    "/usr/share/man/*",
)
SLIM_INCLUDES = ("/usr/share/doc/*/copyright", "/usr/share/locale/locale.alias")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class BaseError(Exception):
    """The base image could neither be pulled nor made; the message says why."""


@dataclass(frozen=True)
class Base:
    reference: str
    official: bool
    how: str
    """One line for the report: which base, and how it came to be here."""
    seconds: float


def apt_mirror(sources: Path = Path("/etc/apt")) -> str:
    """The Debian archive this machine's apt uses (its first ``URIs:`` or ``deb`` line for
    the main archive, not the security one), else deb.debian.org."""
    files = sorted((sources / "sources.list.d").glob("*.sources")) if sources.is_dir() else []
    for f in files:
        for m in re.finditer(r"^URIs:\s*(\S+)", f.read_text("utf-8", "replace"), re.M):
            if "security" not in m.group(1):
                return m.group(1).rstrip("/")
    lists = [sources / "sources.list", *sorted((sources / "sources.list.d").glob("*.list"))]
    for f in lists:
        if not f.is_file():
            continue
        for line in f.read_text("utf-8", "replace").splitlines():
            hit = re.match(r"\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+", line)
            if hit and "security" not in hit.group(1) and "debian" in hit.group(1):
                return hit.group(1).rstrip("/")
    return DEFAULT_MIRROR


def stand_in_of(engine: Engine, reference: str) -> str | None:
    """The stand-in label of the local image ``reference`` (``None``: not a stand-in, or
    not here)."""
    done = engine.docker(
        "image",
        "inspect",
        "--format",
        f'{{{{index .Config.Labels "{STAND_IN_LABEL}"}}}}',
        reference,
    )
    if done.returncode != 0:
        return None
    value = done.stdout.strip()
    return value if value and value != "<no value>" else None


def image_exists(engine: Engine, reference: str) -> bool:
    return engine.docker("image", "inspect", reference).returncode == 0


def provide(
    engine: Engine,
    reference: str,
    debian: str,
    cache: Path,
    *,
    mode: str = "auto",
    log: list[str] | None = None,
) -> Base:
    """The base ``reference`` in the engine: pulled (``mode`` ``auto`` or ``official``),
    else the stand-in (``auto`` or ``stand-in``)."""
    t0 = time.monotonic()
    why_not = ""
    if mode in ("auto", "official"):
        try:
            pulled = engine.docker("pull", "--quiet", reference, timeout=600)
        except subprocess.TimeoutExpired:
            why_not = "docker pull timed out after 600 s"
        else:
            if pulled.returncode == 0:
                return Base(reference, True, f"{reference}, pulled", time.monotonic() - t0)
            why_not = (pulled.stderr.strip().splitlines() or ["docker pull failed"])[-1]
        if mode == "official":
            raise BaseError(f"cannot pull {reference}: {why_not}")
        if image_exists(engine, reference) and stand_in_of(engine, reference) is None:
            return Base(
                reference,
                True,
                f"{reference}, present in the engine (pulled earlier)",
                time.monotonic() - t0,
            )
    label = stand_in_of(engine, reference)
    mirror = apt_mirror()
    key = _key(debian, mirror)
    if label == key:
        how = f"stand-in present in the engine ({_describe(engine, reference)})"
    else:
        tarball = _rootfs(debian, mirror, key, cache, log if log is not None else [])
        _import(engine, tarball, reference, key)
        how = f"stand-in made from {tarball.name} ({_describe(engine, reference)})"
    pulled_note = f"; the official image could not be pulled: {why_not}" if why_not else ""
    return Base(reference, False, how + pulled_note, time.monotonic() - t0)


def _key(debian: str, mirror: str) -> str:
    bundle = hashlib.sha256(CA_BUNDLE.read_bytes()).hexdigest() if CA_BUNDLE.is_file() else ""
    recipe = f"{RECIPE}|{debian}|{mirror}|{','.join(PACKAGES)}|{bundle}"
    digest = hashlib.sha256(recipe.encode())
    return f"debian-{debian}-python3-r{RECIPE}-{digest.hexdigest()[:12]}"


def _describe(engine: Engine, reference: str) -> str:
    done = engine.docker(
        "run",
        "--rm",
        "--network",
        "none",
        "--entrypoint",
        "/usr/local/bin/python",
        reference,
        "-c",
        "import platform; print(platform.python_version())",
    )
    version = done.stdout.strip() or "an unknown version"
    return f"Debian's Python {version}, not the official image's"


def _rootfs(debian: str, mirror: str, key: str, cache: Path, log: list[str]) -> Path:
    """The stand-in's root file system as a tarball in ``cache`` (made when missing)."""
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"{key}.tar"
    if tarball.is_file():
        log.append(f"stand-in root file system: cached {tarball}")
        return tarball
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").is_file() else None
    )
    if debootstrap is None:
        raise BaseError(
            "the base image cannot be pulled and debootstrap, which makes its stand-in, "
            "is not installed (Debian: apt-get install debootstrap)"
        )
    work = Path(tempfile.mkdtemp(prefix="standin-", dir=cache))
    root = work / "rootfs"
    try:
        t0 = time.monotonic()
        done = subprocess.run(
            [
                debootstrap,
                "--variant=minbase",
                f"--include={','.join(PACKAGES)}",
                debian,
                str(root),
                mirror,
            ],
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
            raise BaseError(f"debootstrap {debian} from {mirror} failed:\n{tail}")
        log.append(f"debootstrap {debian} from {mirror}: {time.monotonic() - t0:.0f} s")
        _shape(root)
        partial = tarball.with_suffix(".partial")
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."],
            check=True,
            capture_output=True,
            timeout=600,
        )
        partial.replace(tarball)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tarball


def _shape(root: Path) -> None:
    """Make the debootstrapped tree look like the official image where it matters."""
    # Debian slim: documentation, manual pages and translations out, and kept out.
    for pattern in SLIM_EXCLUDES:
        parent = root / pattern.strip("/").removesuffix("/*")
        for child in parent.glob("*") if parent.is_dir() else ():
            keep = child.name == "locale.alias" and parent.name == "locale"
            if child.is_dir() and parent.name == "doc" and (child / "copyright").exists():
                for f in child.iterdir():
                    if f.name != "copyright":
                        _remove(f)
                continue
            if not keep:
                _remove(child)
    dpkg = root / "etc" / "dpkg" / "dpkg.cfg.d" / "docker"
    dpkg.write_text(
        "# As debian:*-slim: no documentation, manual pages or translations.\n"
        + "".join(f"path-exclude {p}\n" for p in SLIM_EXCLUDES)
        + "".join(f"path-include {p}\n" for p in SLIM_INCLUDES)
    )
    apt = root / "etc" / "apt" / "apt.conf.d"
    clean = '"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true";'  # noqa: E501
    (apt / "docker-clean").write_text(
        f"DPkg::Post-Invoke {{ {clean} }};\nAPT::Update::Post-Invoke {{ {clean} }};\n"
        'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n'
    )
    (apt / "docker-no-languages").write_text('Acquire::Languages "none";\n')
    for junk in ("var/lib/apt/lists", "var/cache/apt/archives"):
        for f in (root / junk).glob("*"):
            if f.is_file():
                f.unlink()
    for f in (root / "var" / "cache" / "apt").glob("*.bin"):
        f.unlink()
    # The official image's interpreter path, and pip allowed to install into it.
    local_bin = root / "usr" / "local" / "bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    for name, target in (
        ("python", "/usr/bin/python3"),
        ("python3", "/usr/bin/python3"),
        ("pip", "/usr/bin/pip3"),
        ("pip3", "/usr/bin/pip3"),
    ):
        link = local_bin / name
        if not link.exists():
            link.symlink_to(target)
    for marker in (root / "usr" / "lib").glob("python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    # This machine's certificate authorities (see the module docstring).
    if CA_BUNDLE.is_file():
        shutil.copyfile(CA_BUNDLE, root / CA_BUNDLE.relative_to("/"))
    # No bytecode of the standard library or Debian's Python packages, as officially.
    for lib in (root / "usr" / "lib").glob("python3*"):
        for cache_dir in list(lib.rglob("__pycache__")):
            shutil.rmtree(cache_dir, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _import(engine: Engine, tarball: Path, reference: str, key: str) -> None:
    changes = [
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        f"LABEL {STAND_IN_LABEL}={key}",
        'CMD ["python3"]',
    ]
    argv = ["import"]
    for c in changes:
        argv += ["--change", c]
    with tarball.open("rb") as f:
        done = engine.docker(*argv, "-", reference, stdin=f, timeout=600)
    if done.returncode != 0:
        raise BaseError(f"docker import of {tarball} failed: {done.stderr.strip()[-500:]}")
