"""``python -m router.cli``: the ``skill-router`` command."""

import sys

from router.cli import main

sys.exit(main())
