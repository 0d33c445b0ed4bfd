"""``python -m paritybench``: see :mod:`paritybench.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
