"""Skill discovery, parsing, validation and lint.

Import from the modules: ``model`` (the records), ``parse`` (SKILL.md), ``manifest``
(manifest.json), ``walk`` and ``discovery`` (finding skills), ``lint``, ``resources``. This
package imports none of them itself, so a server that only reads index records does not pay
for the scanning code (pathspec, YAML) at start-up.
"""
