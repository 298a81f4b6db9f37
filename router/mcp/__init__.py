"""The MCP front door: ``search_skills``, ``activate_skill`` and ``read_skill_resource`` tools and
``skill://`` resources for any MCP host, over stdio or streamable HTTP.

The door serves either an Engine in-process (``backend.EngineBackend``) or a running gRPC service
(``proxy.GrpcBackend``); it keeps each MCP session's state itself and passes it on every call.
Over HTTP (``http``) it authenticates its own callers with accepted bearer tokens and keeps the
Host/Origin checks on (``auth``).
"""
