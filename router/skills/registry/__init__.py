"""Skills from registries: the discovery RFC's well-known index
(``/.well-known/agent-skills/index.json``, schema 0.2.0). ``index`` reads an index (pure),
``unpack`` opens a verified artifact safely (pure), ``fetch`` downloads, verifies and caches by
digest (httpx), ``export`` writes a catalog as an index."""
