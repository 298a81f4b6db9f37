import os
import sys

REQUIRED = ["DATABASE_URL", "REDIS_URL"]
missing = [name for name in REQUIRED if name not in os.environ]
for key, value in sorted(os.environ.items()):
    if key.startswith("CI_"):
        print(key)
sys.exit(1 if missing else 0)
