"""The gRPC edge: ``server`` (health, reflection, graceful stop), ``servicer`` (protobuf <->
engine calls, error mapping), ``codec`` (activation messages), ``interceptors``, ``metrics``,
``poller`` (pick up versions written by a batch job), ``logs``."""
