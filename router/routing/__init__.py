"""Per-turn retrieval, pure and read-only over an index snapshot: ``model`` (requests and
results), ``request`` (request checks), ``fusion`` (dense + lexical scores into one ranking),
``router`` (one turn: explicit, always-on, active and retrieved skills), ``catalog`` (the text
an agent injects). ``activation`` re-exports ``is_skill_content`` for gateways."""
