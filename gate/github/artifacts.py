"""The baseline for a pull request: where ``baseline: auto`` finds the base results.

docs/action.md ("Where the baseline comes from") gives the sources in the order tried,
how an artifact of another dataset version or gate name is compared, and the caps on an
artifact, which is untrusted input: the zip is never extracted to disk as such, only its
one ``results.json`` member is copied out, in chunks (memory stays flat). Every outcome
carries ``source``, the comment's one line on what the head was compared with.

GitHub is reached through PyGithub (workflow → runs → artifacts). The zip download
answers ``302`` with a short-lived, pre-signed storage URL, usually on another host
(which PyGithub's own stream helper refuses to follow), so the redirect is followed here
with the standard library, sending the token only when the location is the API's own
host. A GitHub failure never stops the gate: it becomes a warning and "no baseline".
"""

from __future__ import annotations

import posixpath
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import IO, Any, Protocol

from github import GithubException

from gate.config import Config
from gate.errors import GitHubError, Problem, ResultsFileError, TransientGitHubError
from gate.github.client import ClientFactory
from gate.github.context import DEFAULT_ARTIFACT_MAX_MB, GitHubContext
from gate.results import Results, read_results

MAX_ZIP_BYTES = DEFAULT_ARTIFACT_MAX_MB * 1024 * 1024
"""Largest artifact zip downloaded (declared and received size); the Action takes it from
``TOOLGATE_ARTIFACT_MAX_MB`` (:mod:`gate.github.context`)."""

MAX_RESULTS_BYTES = DEFAULT_ARTIFACT_MAX_MB * 1024 * 1024
"""Largest ``results.json`` taken out of the zip (declared and inflated size)."""

MAX_RATIO = 200
"""Largest compression ratio (inflated ÷ compressed) accepted for a member larger than
:data:`RATIO_FLOOR`: results.json deflates about 35:1 (the shipped example), deflate
itself cannot pass about 1,030:1, a zip bomb sits near that."""

RATIO_FLOOR = 1024 * 1024
"""Members up to this size are not ratio-checked (a tiny file may compress very well)."""

MAX_RUNS_SCANNED = 20
"""Successful base-branch runs looked at for the newest artifact (each costs a request)."""

MAX_ARTIFACTS_SCANNED = 50
"""Repository artifacts of the right name looked at (source 3)."""

DOWNLOAD_TIMEOUT_S = 60.0
"""Socket timeout of the zip download, per read; the whole download is bounded by
``DOWNLOAD_DEADLINE_S``."""

DOWNLOAD_DEADLINE_S = 300.0

RESULTS_MEMBER = "results.json"


@dataclass(frozen=True, slots=True)
class PullRequestRef:
    """What the baseline search needs to know about the change under test (from the
    event, trusted): a pull request, or a merge queue's group (``number`` ``None``)."""

    number: int | None
    base_ref: str
    """The base branch name, e.g. ``main``."""
    base_sha: str
    head_sha: str


@dataclass(frozen=True, slots=True)
class BaselineChoice:
    """The outcome of the search.

    ``path`` is the baseline results file to compare with (the committed file, or the
    artifact's ``results.json`` copied to the destination), ``None`` when nothing is
    compared. ``source`` is the one line the comment shows either way.
    """

    path: Path | None
    results: Results | None
    source: str
    notices: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    missing: str | None = None
    """Why there is no baseline, in words (``path`` ``None``): the first line of the
    reports says "not compared" and this."""

    @classmethod
    def none(cls, source: str, notice: str, missing: str) -> BaselineChoice:
        """No baseline: ``none (source)`` for the comment, with a notice."""
        return cls(None, None, f"none ({source})", notices=(notice,), missing=missing)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """An artifact found on the base branch, with what the comment says about it."""

    artifact: Any  # github.Artifact.Artifact
    run_number: int
    run_id: int
    head_sha: str
    branch: str
    created_at: datetime
    workflow_note: str = ""
    """Empty for this workflow; ``" of workflow <name>"`` for another one."""

    @classmethod
    def of(cls, run: Any, artifact: Any, workflow_note: str = "") -> _Candidate:
        """The artifact of a workflow run (PyGithub objects)."""
        return cls(
            artifact=artifact,
            run_number=run.run_number,
            run_id=run.id,
            head_sha=run.head_sha,
            branch=run.head_branch,
            created_at=_aware(artifact.created_at or run.created_at),
            workflow_note=workflow_note,
        )


class _Clock(Protocol):
    def __call__(self) -> datetime: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class ArtifactSearch:
    """Source 2 and 3: find and fetch the base branch's results artifact.

    ``repo`` is a PyGithub ``Repository``; ``workflow_file`` the running workflow's file
    name (from ``GITHUB_WORKFLOW_REF``), or ``run_id`` the running workflow run's id, to
    find "the same workflow".
    """

    repo: Any
    pr: PullRequestRef
    artifact_name: str
    workflow_file: str | None = None
    run_id: int | None = None
    now: _Clock = utc_now
    token: str | None = field(default=None, repr=False)
    max_zip_bytes: int = MAX_ZIP_BYTES
    max_results_bytes: int = MAX_RESULTS_BYTES
    call: Callable[[str, Callable[[], Any]], Any] = field(default=lambda what, fn: fn())
    """Runs one GitHub operation: :meth:`gate.github.client.GitHubClient.call` retries
    5xx and rate limits within the client's time budget; the default runs it once."""

    # ── finding ─────────────────────────────────────────────────────────────

    def find(self) -> tuple[_Candidate | None, list[str]]:
        """The artifact to use, and notes on what was looked at (for the notice)."""
        notes: list[str] = []
        try:
            workflow = self._this_workflow(notes)
        except GithubException as exc:
            if exc.status != 404:
                raise
            # Renamed, deleted, or not visible to this token: the other workflows' artifacts
            # are still searched, as documented.
            key = self.workflow_file or f"run {self.run_id}"
            notes.append(f"the running workflow was not found ({key}: 404)")
            workflow = None
        if workflow is not None:
            found = self._from_workflow(workflow)
            if found is not None:
                return found, notes
            notes.append(
                f"no successful run of workflow {_wf_name(workflow)} on {self.pr.base_ref} "
                f"has an artifact named {self.artifact_name!r}"
            )
        found = self._from_any_workflow()
        if found is None:
            notes.append(
                f"no workflow of this repository uploaded an artifact named "
                f"{self.artifact_name!r} from {self.pr.base_ref}"
            )
        return found, notes

    def _this_workflow(self, notes: list[str]) -> Any | None:
        if self.workflow_file:
            return self.repo.get_workflow(self.workflow_file)
        if self.run_id is not None:
            run = self.repo.get_workflow_run(self.run_id)
            return self.repo.get_workflow(run.workflow_id)
        notes.append("the running workflow is unknown (no GITHUB_WORKFLOW_REF or GITHUB_RUN_ID)")
        return None

    def _from_workflow(self, workflow: Any) -> _Candidate | None:
        # First the base SHA itself: that is exactly what the PR branched from.
        at_sha = workflow.get_runs(
            branch=self.pr.base_ref, status="success", head_sha=self.pr.base_sha
        )
        for run in islice(at_sha, MAX_RUNS_SCANNED):
            cand = self._candidate_of_run(run)
            if cand is not None and cand.head_sha == self.pr.base_sha:
                return cand
        # Else the newest successful run of the base branch that kept an artifact.
        for run in islice(
            workflow.get_runs(branch=self.pr.base_ref, status="success"), MAX_RUNS_SCANNED
        ):
            cand = self._candidate_of_run(run)
            if cand is not None:
                return cand
        return None

    def _candidate_of_run(self, run: Any) -> _Candidate | None:
        # A PR from a fork can be named like the base branch; only the base repository's
        # own runs (pushes, schedules, manual runs) describe the base branch.
        if str(run.event).startswith("pull_request") or run.head_branch != self.pr.base_ref:
            return None
        for art in run.get_artifacts():
            if art.name == self.artifact_name and not art.expired:
                return _Candidate.of(run, art)
        return None

    def _from_any_workflow(self) -> _Candidate | None:
        repo_id = self.repo.id
        at_sha: _Candidate | None = None
        newest: _Candidate | None = None
        for art in islice(self.repo.get_artifacts(name=self.artifact_name), MAX_ARTIFACTS_SCANNED):
            if art.name != self.artifact_name or art.expired:
                continue
            wr = art.workflow_run
            if wr.head_branch != self.pr.base_ref or wr.head_repository_id != repo_id:
                continue
            is_at_sha = wr.head_sha == self.pr.base_sha
            if at_sha is not None or (newest is not None and not is_at_sha):
                continue
            run = self.repo.get_workflow_run(wr.id)
            if run.conclusion != "success" or str(run.event).startswith("pull_request"):
                continue
            cand = _Candidate.of(run, art, f" of workflow {run.name}")
            if is_at_sha:
                at_sha = cand
            elif newest is None:
                newest = cand  # the list is newest first
        return at_sha or newest

    # ── fetching ────────────────────────────────────────────────────────────

    def download(self, cand: _Candidate, dest: Path) -> None:
        """Copy the artifact's ``results.json`` to ``dest`` (size-capped, validated names)."""
        declared = int(cand.artifact.size_in_bytes or 0)
        if declared > self.max_zip_bytes:
            raise GitHubError(
                f"artifact {self.artifact_name!r} of run #{cand.run_number} is "
                f"{_mib(declared)}, over the {_mib(self.max_zip_bytes)} limit"
            )
        status, headers, _ = self.repo.requester.requestJson(
            "GET", cand.artifact.archive_download_url, follow_302_redirect=False
        )
        location = {k.lower(): v for k, v in headers.items()}.get("location")
        if status not in (301, 302, 303, 307, 308) or not location:
            raise GitHubError(
                f"downloading artifact {self.artifact_name!r} of run #{cand.run_number}: "
                f"expected a redirect to the zip, got HTTP {status}"
            )
        with tempfile.TemporaryFile() as zipped:
            self._fetch(location, zipped, cand)
            zipped.seek(0)
            extract_results(zipped, dest, max_bytes=self.max_results_bytes)

    def _fetch(self, location: str, sink: IO[bytes], cand: _Candidate) -> None:
        req = urllib.request.Request(location, method="GET")
        api = urllib.parse.urlsplit(self.repo.requester.base_url)
        loc = urllib.parse.urlsplit(location)
        if loc.scheme not in ("https", "http"):
            raise GitHubError(
                f"artifact download redirected to an unsupported URL scheme {loc.scheme!r}"
            )
        if (loc.hostname, loc.port) == (api.hostname, api.port) and self.token:
            # Same host as the API (GitHub Enterprise Server storage, the test server): the
            # token is expected there. Elsewhere the URL is pre-signed: never send it.
            req.add_header("Authorization", f"token {self.token}")
        opener = urllib.request.build_opener(_NoRedirect())
        deadline = time.monotonic() + DOWNLOAD_DEADLINE_S
        received = 0
        try:
            with opener.open(req, timeout=DOWNLOAD_TIMEOUT_S) as resp:
                if resp.status != 200:
                    raise _status_error(resp.status)
                while chunk := resp.read(1 << 16):
                    received += len(chunk)
                    if received > self.max_zip_bytes:
                        raise GitHubError(
                            f"artifact {self.artifact_name!r} of run #{cand.run_number} is over "
                            f"the {_mib(self.max_zip_bytes)} limit; download stopped"
                        )
                    if time.monotonic() > deadline:
                        raise GitHubError(
                            f"artifact download took over {DOWNLOAD_DEADLINE_S:.0f} s"
                        )
                    sink.write(chunk)
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the connection
            raise _status_error(exc.code) from exc
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            # A dropped connection or a stalled read: the next attempt may well succeed.
            raise TransientGitHubError(f"artifact download failed: {exc}") from exc


def search_for(
    ctx: GitHubContext, client_factory: ClientFactory, *, now: _Clock, artifact_name: str
) -> Callable[[PullRequestRef], ArtifactSearch]:
    """The search for a PR in the context's repository: a client of the context's token
    (the one token rule), "this workflow" from ``GITHUB_WORKFLOW_REF`` or the run id, and
    the same token for a download redirected to the API's own host."""
    repository = ctx.repository
    if repository is None:
        raise GitHubError("no repository to search (GITHUB_REPOSITORY is not set)")

    def search(pr: PullRequestRef) -> ArtifactSearch:
        client = client_factory(ctx)
        return ArtifactSearch(
            repo=client.call("GET repository", lambda: client.gh.get_repo(repository)),
            pr=pr,
            artifact_name=artifact_name,
            workflow_file=ctx.workflow_file,
            run_id=ctx.run_id,
            now=now,
            token=ctx.token,
            max_zip_bytes=ctx.artifact_max_bytes,
            max_results_bytes=ctx.artifact_max_bytes,
            call=client.call,
        )

    return search


def _status_error(status: int) -> GitHubError:
    """A storage 5xx (or 429) is worth another attempt; anything else is final."""
    message = f"artifact download answered HTTP {status}"
    if status >= 500 or status == 429:
        return TransientGitHubError(message, status=status)
    return GitHubError(message)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The storage URL is final: a further redirect is refused, not followed blindly."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# ─── the zip ──────────────────────────────────────────────────────────────────


def unsafe_member(name: str) -> str | None:
    """Why a zip member name is refused, or ``None`` when it is a plain relative path."""
    if not name:
        return "an empty name"
    if "\\" in name:
        return "a backslash"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if any(part == ".." for part in name.split("/")):
        return "a '..' segment"
    if "\x00" in name:
        return "a NUL byte"
    return None


def extract_results(zipped: IO[bytes], dest: Path, *, max_bytes: int = MAX_RESULTS_BYTES) -> None:
    """Copy the one ``results.json`` of an artifact zip to ``dest``.

    The archive is refused whole when any member name is unsafe (:func:`unsafe_member`),
    when it holds no ``results.json``, or two at the same (shallowest) depth. The member is
    copied in chunks and stopped at ``max_bytes`` whatever its header claims.
    """
    try:
        archive = zipfile.ZipFile(zipped)
    except zipfile.BadZipFile as exc:
        raise GitHubError(f"the artifact is not a zip archive ({exc})") from exc
    with archive:
        infos = archive.infolist()
        for info in infos:
            why = unsafe_member(info.filename)
            if why is not None:
                raise GitHubError(
                    f"the artifact zip is refused: member {info.filename!r} has {why}"
                )
        matches = [
            i for i in infos if not i.is_dir() and posixpath.basename(i.filename) == RESULTS_MEMBER
        ]
        if not matches:
            names = ", ".join(sorted(i.filename for i in infos)[:10]) or "nothing"
            raise GitHubError(f"the artifact holds no {RESULTS_MEMBER} (it holds {names})")
        depth = min(i.filename.count("/") for i in matches)
        shallowest = [i for i in matches if i.filename.count("/") == depth]
        if len(shallowest) > 1:
            raise GitHubError(
                f"the artifact holds {len(shallowest)} {RESULTS_MEMBER} files at the same level "
                f"({', '.join(i.filename for i in shallowest)}); upload one"
            )
        member = shallowest[0]
        if member.file_size > max_bytes:
            raise GitHubError(
                f"{member.filename} in the artifact is {_mib(member.file_size)}, "
                f"over the {_mib(max_bytes)} limit"
            )
        if _absurd_ratio(member.file_size, member.compress_size):
            raise GitHubError(
                f"{member.filename} in the artifact would inflate "
                f"{member.file_size / max(1, member.compress_size):,.0f} times "
                f"({_mib(member.compress_size)} → {_mib(member.file_size)}), beyond the "
                f"{MAX_RATIO}:1 a results file reaches; refused as a zip bomb"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        copied = 0
        try:
            with archive.open(member) as src, tmp.open("wb") as out:
                # In chunks, so memory stays flat whatever the member inflates to; the
                # actual size is checked as it grows (zipfile itself stops at the
                # declared size, and refuses a member that ends before it).
                while chunk := src.read(1 << 16):
                    copied += len(chunk)
                    if copied > max_bytes or copied > member.file_size:
                        raise GitHubError(
                            f"{member.filename} in the artifact inflates past "
                            f"{_mib(min(max_bytes, member.file_size))}; refused"
                        )
                    if _absurd_ratio(copied, member.compress_size):
                        raise GitHubError(
                            f"{member.filename} in the artifact inflates over {MAX_RATIO} "
                            "times its compressed size; refused as a zip bomb"
                        )
                    out.write(chunk)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            tmp.unlink(missing_ok=True)
            raise GitHubError(f"the artifact zip is damaged: {exc}") from exc
        except GitHubError:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(dest)


def _absurd_ratio(inflated: int, compressed: int) -> bool:
    return inflated > RATIO_FLOOR and inflated > MAX_RATIO * max(1, compressed)


# ─── the whole search ─────────────────────────────────────────────────────────


def find_baseline(
    config: Config,
    *,
    dest: Path,
    pr: PullRequestRef | None,
    dataset_sha256: str | None,
    search: Callable[[PullRequestRef], ArtifactSearch] | None,
    now: _Clock = utc_now,
) -> BaselineChoice:
    """``baseline: auto``: the committed file, else the base branch's artifact, else none.

    ``search`` builds the GitHub side for a PR (``None`` when there is no token or API);
    ``dest`` is where an artifact's ``results.json`` is written; ``dataset_sha256`` is the
    head's dataset hash (``None``: not checked here, the comparison reports it).
    """
    committed = _committed(config)
    if committed is not None:
        return committed
    if pr is None:
        return BaselineChoice.none(
            "not a pull request",
            "No baseline: this run is not for a pull request or a merge queue's group, "
            "so nothing is compared.",
            "this run is not for a pull request, a merge queue's group or a branch",
        )
    if search is None:
        return BaselineChoice.none(
            "no GitHub token or API to look for the base branch's results",
            "No baseline: no GitHub token to look for the base branch's results artifact.",
            "no GitHub token to look for the base branch's results artifact",
        )
    try:
        artifact_search = search(pr)
        cand, notes = artifact_search.call("find the baseline artifact", artifact_search.find)
    except Exception as exc:  # PyGithub raises many types; none may stop the gate
        return _none_after_failure(f"looking for the baseline artifact failed: {_short(exc)}")
    name = artifact_search.artifact_name
    if cand is None:
        why = "; ".join(notes)
        return BaselineChoice.none(
            f"no {name!r} artifact from {pr.base_ref}",
            f"No baseline: {why}. A push to {pr.base_ref} runs the workflow as a base "
            f"run that uploads it (the README's workflow does; see docs/action.md).",
            f"no {name!r} artifact from {pr.base_ref} yet",
        )
    age_days = max(0.0, (_aware(now()) - cand.created_at).total_seconds() / 86400)
    source = (
        f"artifact {name} of run #{cand.run_number}{cand.workflow_note} on {cand.branch} "
        f"at {cand.head_sha[:7]}, {_age(age_days)} old"
    )
    at_base = cand.head_sha == pr.base_sha
    notices: tuple[str, ...] = ()
    warnings: list[str] = []
    if not at_base:
        notices = (
            f"The baseline is {source}: no successful run at the base "
            f"{pr.base_sha[:7]} kept one, so the newest was used.",
        )
        if age_days > config.baseline.max_age_days:
            warnings.append(
                f"The baseline ({source}) is older than baseline.max_age_days "
                f"({config.baseline.max_age_days:g} days): flips may come from changes on "
                f"{pr.base_ref} since then, not from this PR. Re-run the workflow on "
                f"{pr.base_ref} to refresh it."
            )
    try:
        artifact_search.call(
            "download the baseline artifact", lambda: artifact_search.download(cand, dest)
        )
    except Exception as exc:
        return _none_after_failure(f"fetching {source} failed: {_short(exc)}")
    try:
        results = read_results(dest, display=f"{name} (run #{cand.run_number})/results.json")
    except ResultsFileError as exc:
        return _none_after_failure(f"{source} is not a valid results file: {_short(exc)}")
    if results.shard is not None:  # part of the dataset: nothing to compare case by case
        problem = (
            f"holds shard {results.shard.index}/{results.shard.count} only; upload the merged "
            "results"
        )
        dest.unlink(missing_ok=True)
        return BaselineChoice.none(
            f"{source} {problem}",
            f"Nothing is compared: {source} {problem}.",
            f"{source} {problem}",
        )
    if results.gate_name != config.name:
        # Renamed (`name:`), or another gate's artifact under the same name: its cases are
        # compared by their hashes all the same, and the source line says whose it is.
        source += f", made by the gate {results.gate_name!r} (this gate is {config.name!r})"
    if dataset_sha256 and results.dataset.sha256 != dataset_sha256:
        notices = (
            *notices,
            f"The baseline ({source}) was made from another version of the dataset "
            f"(sha256 {results.dataset.sha256[:12]}…, this run {dataset_sha256[:12]}…): "
            "each case is compared by its own hash.",
        )
    return BaselineChoice(dest, results, source, notices=notices, warnings=tuple(warnings))


def _committed(config: Config) -> BaselineChoice | None:
    rel = config.baseline.path
    if not rel:
        return None
    path = config.resolve(rel)
    source = f"committed file {rel}"
    if not path.is_file():
        # Named but missing is a mistake worth an input error: the user asked for it.
        raise ResultsFileError(
            Problem(
                str(config.source or "toolgate.yml"),
                None,
                "baseline.path",
                f"{rel!r} does not exist (resolved to {path})",
            )
        )
    results = read_results(path, display=rel)
    return BaselineChoice(path, results, source)


def _none_after_failure(message: str) -> BaselineChoice:
    return BaselineChoice(
        None,
        None,
        "none (the base branch's results could not be fetched)",
        warnings=(f"No baseline: {message}. The gate runs without one.",),
        missing=f"the base branch's results could not be fetched ({message})",
    )


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _age(days: float) -> str:
    hours = round(days * 24)
    if hours < 24:
        return f"{hours} hour{'s' if hours != 1 else ''}"
    whole = max(1, round(days))
    return f"{whole} day{'s' if whole != 1 else ''}"


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def _wf_name(workflow: Any) -> str:
    return str(getattr(workflow, "path", "") or getattr(workflow, "name", "") or "?").rsplit(
        "/", 1
    )[-1]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]
