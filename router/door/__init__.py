"""What every door (``service``, ``mcp``, ``console`` and the next one) shares, below them all
and above the engine: the gRPC API's names and its status map (``api``), the channel a caller
opens to the service (``channel``), what callers see of the server's paths (``path_policy``),
the index poller (``poller``) and the doors' shared command-line flags (``flags``). Nothing
here imports a door."""
