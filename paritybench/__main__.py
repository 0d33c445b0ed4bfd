"""``python -m paritybench``: see :mod:`paritybench.cli`."""

import sys

from experiments.isolation import interrupt_on_sigterm

from .cli import main

if __name__ == "__main__":
    interrupt_on_sigterm()  # scancel / docker stop end the run as Ctrl-C does, workers killed
    sys.exit(main())
