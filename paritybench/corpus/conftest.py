"""The corpus files are ParityBench programs named ``test_*.py``, not pytest tests.

They are run by ``python -m paritybench`` (and by tests/test_paritybench.py); this keeps
``pytest paritybench/`` from collecting them as test modules.
"""

collect_ignore_glob = ["test_*.py"]
