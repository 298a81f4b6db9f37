"""The ops web console: server-rendered pages for debugging routing (``/route``, ``/skills``,
``/skills/NAME``, ``/index``), a client of the gRPC API like any other caller. A door, like
``router.mcp``: nothing below imports it."""
