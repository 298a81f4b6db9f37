"""What every door (``service``, ``mcp``, ``console`` and the next one) shares, below them all:
the gRPC API's names and its status map (``api``), what callers see of the server's paths
(``path_policy``), the index poller (``poller``) and the command-line flags of a door that
calls a running server (``flags``). Nothing here imports a door."""
