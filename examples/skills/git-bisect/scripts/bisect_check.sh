#!/usr/bin/env bash
# Template check for `git bisect run`.
# Exit 0 = good, 1 = bad, 125 = skip (commit cannot be tested).
set -u

# 1. Build; an unbuildable commit is skipped, not blamed.
if ! make build >/dev/null 2>&1; then
  exit 125
fi

# 2. Run the failing test several times to filter out flakiness.
for attempt in 1 2 3; do
  if ! python -m pytest -q tests/test_export.py::test_csv_header >/dev/null 2>&1; then
    echo "bad on attempt ${attempt}" >&2
    exit 1
  fi
done
exit 0
