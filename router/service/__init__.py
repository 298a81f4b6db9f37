"""The gRPC edge: ``server`` (health, reflection, graceful stop), ``servicer`` (engine calls,
error mapping), ``codec/`` (every protobuf <-> model conversion), ``interceptors``, ``metrics``,
``poller`` (pick up versions written by a batch job), ``logs``."""
