"""New versions of the index: ``recipe`` (the one build recipe ``skill-router index``, the
Reindex RPC and ``skill-router eval`` each build with: the plan, the traffic learned, the
encoder serving queries, the build and the export) and ``reindexer`` (Reindex and reload of
the served index, one at a time, and their counters). It sits above ``router.learning`` and
``router.index``, the two it joins."""
