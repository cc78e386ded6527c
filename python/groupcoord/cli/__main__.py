"""``python -m groupcoord.cli``: the same as the ``groupcoord`` command."""

import sys

from groupcoord.cli.main import main

sys.exit(main())
