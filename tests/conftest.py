"""The whole suite's setting: the content scan is off unless a test names a scanner (the real
one, installed in .scanner by `make scanner`, would otherwise scan every test's build); the
scan's own tests pass ``admission.scanner_path`` or ``--scanner``."""

from __future__ import annotations

import os

from router.admission.scanner import SETTING_ENV

os.environ.setdefault(SETTING_ENV, "off")
