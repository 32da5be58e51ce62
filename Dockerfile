# ToolGate as a Docker container action (action.yml: `runs: using: docker`).
#
# GitHub's rules for action Dockerfiles, each one kept here on purpose:
# * no USER: the runner mounts GITHUB_WORKSPACE owned by the runner's user; only the
#   default Docker user (root) can write the results folder there;
# * no WORKDIR: GitHub mounts the workspace and sets it as the working directory, over
#   whatever the image holds, so nothing may rely on the image's working directory;
# * an absolute exec-form ENTRYPOINT (no shell, no relative path), so `args:` are
#   passed untouched and the entrypoint does not depend on the working directory;
# * `safe.directory '*'` in the SYSTEM git config: a `git config` in an earlier workflow
#   step writes the runner's HOME, which this container does not see, and the mounted
#   workspace belongs to another uid, so git would refuse it as "dubious ownership".
#
# Official Debian-based slim Python image, pinned to a patch version (bump deliberately;
# the release workflow can pin it further by digest).
FROM python:3.12.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/opt/toolgate

# git: the gate runs inside the checked-out repository (the agent under test may call git,
# and baseline lookups read the workspace). Its version comes from the pinned Debian
# release; pinning the exact Debian revision would break every build at the next Debian
# security update (old revisions leave the archive), so DL3008 is ignored here on purpose.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

# Dependencies first (exact versions, see requirements.lock) so that a code change does
# not rebuild this layer. The packages' own test suites (`tests` folders, 16.8 MB, most of
# it numpy's) go in the same layer, as the official image drops its standard library's;
# the bytecode pip writes stays: with PYTHONDONTWRITEBYTECODE nothing is cached at run
# time, and without it every start would compile numpy, pydantic and the rest again.
COPY requirements.lock /opt/toolgate/requirements.lock
RUN python -m pip install --no-cache-dir -r /opt/toolgate/requirements.lock \
    && find "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
        -depth -type d -name tests -exec rm -rf '{}' +

# The agent's own packages are not baked in: the `install` and `setup` inputs are run by the
# entrypoint when the step starts (a virtualenv of the agent's made with this image's
# python -m venv, then bash), so the prebuilt image takes them as a Dockerfile build does.

# ToolGate itself: the package source on PYTHONPATH (no build backend needed in the image),
# compiled once here: the entrypoint and its child import it on every start, and nothing
# may write bytecode at run time (2.7 MB for 0.14 s less from `docker run` to the first
# sample, measured by tests/image).
COPY gate /opt/toolgate/gate
RUN python -m compileall -q /opt/toolgate/gate

# -P: never put the working directory (the user's repository) on sys.path, so a folder
# named `gate` in the checked-out repository cannot shadow ToolGate's own package.
ENTRYPOINT ["/usr/local/bin/python", "-P", "-m", "gate.action"]
