"""Example requests: how users actually ask for a skill, and what a catalog's off-topic
requests look like. Pure: ``model`` (the ``Example`` record), ``loading`` (parsing the skill
folders' ``evals/evals.json`` and trigger-eval files and ``--examples`` JSON lines), ``sources``
(every source gathered), ``selection`` (caps, removed skills), ``scoring`` (how examples lift
or push down a skill's dense score). The relevance gate they help calibrate and the
routing settings fitted on them are ``router.calibration``'s. The index stores them
(``router.index.example_store``); traffic adds to them (``router.learning``)."""
