"""Building index versions: ``recipe`` (the one recipe ``skill-router index``, the Reindex RPC
and ``skill-router eval`` each build with: the plan, the traffic learned, the encoder serving
queries, the build, the export, and where the version goes: a folder or object storage),
``plan`` (the build plan from the configuration, its skill source resolved once), ``pipeline``
(discover, build, prune; the sharded build's shard and merge), ``version`` (write one version
and make it current), ``inputs`` (what a version build is handed), ``shards`` (a sharded
build's partials) and ``fine_tune/`` (encoder fine-tuning of a version). The format they write
and its loading are ``router.index``'s; object storage is ``router.objectstore``'s. Import
from the modules; this package imports none of them."""
