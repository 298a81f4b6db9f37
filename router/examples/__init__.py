"""Example requests: how users actually ask for a skill, and what a catalog's off-topic
requests look like. Pure: ``model`` (the ``Example`` record), ``loading`` (parsing the skill
folders' ``evals/evals.json`` and trigger-eval files and ``--examples`` JSON lines), ``sources``
(every source gathered), ``selection`` (caps, removed skills), ``scoring`` (how examples lift
or push down a skill's dense score), ``gate`` (the relevance gate calibrated per catalog on
``offtopic.txt``). The index stores them (``router.index.examples``); traffic adds to them
(``router.learning``)."""
