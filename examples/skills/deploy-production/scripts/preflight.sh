#!/usr/bin/env bash
# Pre-flight checks before a production deploy. Usage: preflight.sh <tag>
set -euo pipefail

tag="${1:-}"
if [[ -z "$tag" ]]; then
  echo "Error: a release tag is required. Usage: preflight.sh v2025.03.1" >&2
  exit 2
fi

fail=0
check() {
  local label="$1"; shift
  if "$@" >/dev/null 2>&1; then
    echo "ok    ${label}"
  else
    echo "FAIL  ${label}"
    fail=1
  fi
}

check "tag ${tag} exists" git rev-parse -q --verify "refs/tags/${tag}"
check "tag is on main" git merge-base --is-ancestor "${tag}" origin/main
check "release notes published" gh release view "${tag}"
check "no pending production migrations lock" test ! -e /tmp/migration.lock

exit "$fail"
