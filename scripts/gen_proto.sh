#!/usr/bin/env bash
# Regenerate the Python gRPC code for protos/router/v1/router.proto, and the JSON door's
# OpenAPI document beside it (protos/router/v1/router.openapi.json, scripts/gen_openapi.py).
#
# Usage: scripts/gen_proto.sh [OUT_DIR]
#   OUT_DIR defaults to the repository root, so the files land in router/v1/ and protos/.
#   Set PYTHON to choose the interpreter (default: .venv/bin/python if present, else python3).
# The same script feeds `make proto` and the staleness test, which generates into a temporary
# folder and compares the result byte for byte with the committed files.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "${1:-$repo}" && cd "${1:-$repo}" && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$repo/.venv/bin/python" ]]; then PYTHON="$repo/.venv/bin/python"; else PYTHON=python3; fi
fi

mkdir -p "$out/router/v1"
cd "$repo"
"$PYTHON" -m grpc_tools.protoc -Iprotos \
  --python_out="$out" --pyi_out="$out" --grpc_python_out="$out" \
  protos/router/v1/router.proto
printf '%s\n' '"""Generated gRPC code for protos/router/v1/router.proto. Do not edit: run `make proto`."""' \
  > "$out/router/v1/__init__.py"
mkdir -p "$out/protos/router/v1"
"$PYTHON" scripts/gen_openapi.py "$out/protos/router/v1/router.openapi.json"
