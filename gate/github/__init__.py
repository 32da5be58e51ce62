"""Everything that talks to GitHub or to the Actions runner.

* ``context`` — the Actions environment (every ``INPUT_*``, ``GITHUB_*`` and
  ``TOOLGATE_*`` variable) read once into one typed object;
* ``activity`` — the pure decisions "what does this invocation do" (``plan``) and
  "comment on this event, and where" (``plan_comment``);
* ``client`` — PyGithub with our retries inside a bounded total time;
* ``comments`` — the sticky comment upsert (marker + own login, de-duplicated);
* ``workflow`` — annotations, ``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``;
* ``publish`` — all of the above at the end of a run, never raising;
* ``artifacts`` — baseline results from the base branch's runs;
* ``workflow_run`` — ``mode: comment``, the comment for a fork PR's earlier run.
"""
