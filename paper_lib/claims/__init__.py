"""The claims wing: what decides, apart from what runs and what renders.

One module per notebook family: :mod:`.grammar` (notebooks 01 and 02), :mod:`.lm` (03 and 04),
:mod:`.recall` (05), :mod:`.boundary` (06). Each holds

- ``CLAIMS``: its rows of the report (:class:`~paper_lib.pipeline.report.Claim`: the claim in
  words, the paper's number, the metrics it reads, its rule and power gate), with the labels of
  its metrics (a :class:`~paper_lib.pipeline.report.Claims`; a notebook prints its verdicts with
  ``CLAIMS.markdown(key, metrics, profile)``, the same the report shows);
- the rules and gates only it uses, and the thresholds its notebooks' prose reads (the rule types,
  the combinators and a gate two families share are :mod:`paper_lib.pipeline.rules`; a rule that a
  second family needs moves there);
- ``METRICS``: per notebook, every metric it writes and the plain words for it (``{name: label}``;
  a name in braces is a field, :class:`~paper_lib.pipeline.labels.Labels`), which the notebook
  tests check against what the notebook writes at smoke (but for the family's ``NOT_AT_SMOKE``).

:mod:`.registry` gathers every family for the report and the site; ``python -m
paper_lib.claims report|site --profile cpu`` hands them to the plumbing
(:mod:`paper_lib.pipeline.report`, :mod:`paper_lib.pipeline.site`), which knows no claim and no
metric by name (``tests/test_layout.py`` says so). The layering: this wing reads the plumbing and
the predictors' facts; experiments and notebooks read it; nothing below it does.

Adding a claim
--------------
1. the experiment (``paper_lib/experiments/<name>.py``) writes the metrics it needs;
2. the family's module here: the ``Claim`` row in ``CLAIMS``, its rule and gate (the family's own,
   a new one beside them, or :mod:`paper_lib.pipeline.rules`' combinators), and the metrics'
   words in ``METRICS``;
3. the family's test (``tests/test_claims_<family>.py``; notebook 06's rules also
   ``tests/test_boundary_map.py``): the rule reaching each verdict;
4. the notebook prints ``CLAIMS.markdown("<key>", metrics, profile)``;
5. its name in at most a dozen words in ``registry.NAMES`` (the summary's tables), and, where the paper
   gives a number, ``number=``: the rule on that number alone (the "number reproduced?" column).

The row lands at the end of the report (after the published rows of ``registry.ROW_ORDER``). The words
a reader sees for the columns of a notebook's tables are :data:`paper_lib.claims.words.COLUMNS`. A
new notebook family is one new module here with ``CLAIMS`` and ``METRICS``: the registry finds it.

A new metric's words go in its family's ``METRICS`` even when no claim reads it: the notebook
test then checks that the notebook writes it.

Adding a predictor
------------------
1. ``paper_lib/predictors/<name>.py``: the class, registered, with its facts (``label``, ``sees``,
   ``paper``, ``bounded``, ``keeps`` and ``added_state``; :class:`paper_lib.predictors.Predictor`),
   and its import line in ``paper_lib/predictors/__init__.py``;
2. its test. The groups, notebook 04's rows and table, the ablation's gate and labels here, and
   notebook 05's models and state budget follow from the facts.

Adding a profile
----------------
1. its record in :data:`paper_lib.pipeline.profiles.PROFILES` (threads, where it publishes,
   whether its runs prove nothing, whether its report refreshes the README);
2. what it changes in each notebook's settings, in :data:`paper_lib.profile_settings.PROFILE_SETTINGS`.
"""
