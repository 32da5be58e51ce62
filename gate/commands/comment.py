"""``toolgate comment``: post or update the sticky PR comment from a results file.

Everything else comes from the environment (``gate.github.context``, by the same rules as
for the Action): the token, the repository, ``GITHUB_API_URL``, and the pull request from
the ``pull_request`` / ``pull_request_target`` event. For other events nothing is posted (a
notice says why), unless ``--pr N`` names the pull request — the ``workflow_run`` pattern
for fork PRs, where the PR's head must then be the triggering run's head commit.

Exit code: 0 whether or not the comment could be posted — a GitHub failure is reported as
a warning and never changes anything else; 2 for bad input (an unreadable results file,
a ``TOOLGATE_GITHUB_BUDGET_S`` that is not a finite number above 0).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gate.commands.report import add_common_arguments, build_redactor, load_with_baseline
from gate.errors import ExitCode
from gate.github.activity import plan_comment
from gate.github.context import GitHubContext
from gate.github.publish import emit, post_comment


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results", required=True, metavar="FILE", help="the results.json to report"
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--pr",
        type=int,
        metavar="N",
        help="the pull request number (for workflow_run and other non-PR events)",
    )


def run(args: argparse.Namespace) -> int:
    results = load_with_baseline(Path(args.results), args.baseline)
    redactor = build_redactor(args.config, args.secret_env, os.environ)
    ctx = GitHubContext.from_environ(os.environ)
    ctx.require_valid()
    for warning in ctx.warnings:
        emit(sys.stdout, ctx, warning, "warning")
    plan = plan_comment(ctx, pr_override=args.pr)
    outcome = post_comment(results, ctx, plan, redactor=redactor)
    emit(sys.stdout, ctx, outcome.message, outcome.level)
    sys.stdout.flush()
    return ExitCode.PASS
