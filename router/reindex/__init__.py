"""New versions of the served index: ``reindexer`` (Reindex and reload of the served index,
one at a time, each built with ``router.builder.recipe``) and ``result`` (what a Reindex did,
and the counters of reindexes and reloads). It sits above ``router.builder`` and
``router.learning``, the two it joins."""
