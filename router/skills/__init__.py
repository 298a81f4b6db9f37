"""Skill discovery, parsing, validation and lint.

Import from the modules: ``model`` (the records), ``parse`` (SKILL.md), ``manifest``
(manifest.json), ``fields`` (frontmatter fields), ``files`` (reading a skill's files),
``walk`` and ``discovery`` (finding skills), ``lint``, ``resources``, ``limits`` (shared
caps such as the description length) and ``sources/`` (the ``SkillSource`` base every
source of skills implements and its factory, and the sources: folders on disk, MCP servers,
several as one, a version's own files). This package
imports none of them itself, so a server that only reads index records and activates skills does not
pay for the scanning code (the walk, discovery, lint, pathspec) at start-up.
"""
