"""Everything that happens once a skill is picked: ``activator`` (Activate, ReadResource,
ValidateArguments against the served skills), ``content`` (the ``<skill_content>`` text and the
compaction marker check), and
``arguments`` / ``argument_errors`` (JSON Schema checks of a callable skill's arguments).
Import from the modules; this package imports none of them."""
