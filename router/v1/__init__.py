"""Generated gRPC code for protos/router/v1/router.proto. Do not edit: run `make proto`."""
