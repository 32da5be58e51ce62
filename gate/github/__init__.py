"""Everything that talks to GitHub or to the Actions runner.

* ``context`` — the Actions environment in one typed object, and the pure decision
  "comment on this event or not" (``plan_comment``);
* ``client`` — PyGithub with our retries inside a bounded total time;
* ``comments`` — the sticky comment upsert (marker + own login, de-duplicated);
* ``workflow`` — annotations, ``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``;
* ``publish`` — all of the above at the end of a run, never raising;
* ``artifacts`` — baseline results from the base branch's runs.
"""
