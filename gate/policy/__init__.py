"""The statistics and policy layer (numpy lives here and nowhere else).

Three layers (STYLE habit 4): the scorers score one sample; :mod:`gate.policy.reduce`
reduces sample scores over samples and cases into a :class:`gate.results.Results`;
:mod:`gate.policy.decide` applies the config's gates, the variance guards
(:mod:`gate.policy.guards`) and the baseline comparison (:mod:`gate.baseline.diff`) to
produce the verdict. :mod:`gate.policy.confirm` plans adaptive confirmation samples and
:mod:`gate.policy.advisor` says what the samples can detect.
"""
