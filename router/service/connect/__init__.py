"""The JSON door: router.v1.SkillRouter over the Connect protocol (unary calls, JSON and binary
protobuf bodies, HTTP/1.1), through the gRPC door's own handler chain."""
