"""Coverage runs over real user programs in ParityBench format (the paper's Table 3).

A ParityBench file (``test_<owner>_<repo>.py``) holds one GitHub project's model code and a
``TESTCASES`` list; :mod:`paritybench.runner` runs every case of every file in its own
worker process (eager twice, then MagPy, TorchDynamo ``fullgraph=True`` and TorchScript on
fresh modules), :mod:`paritybench.report` writes Table 3. ``paritybench/corpus/`` is our own
corpus in the same format, each file exercising one family of Python features.

    python -m paritybench run --jobs 2                      # our corpus
    PARITYBENCH_DIR=.../generated python -m paritybench table3   # the real benchmark

See paritybench/README.md.
"""

from .evaluate import RunConfig
from .loader import CORPUS_DIR, find_testfiles, load_testfile
from .report import write_reports
from .runner import RunOptions, run

__all__ = ["CORPUS_DIR", "RunConfig", "RunOptions", "find_testfiles", "load_testfile", "run", "write_reports"]
