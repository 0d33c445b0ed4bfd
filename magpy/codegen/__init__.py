"""Guard and mock generation (paper §4.2, Algorithm 1) as Python source compiled once per record.

Code generation reads a :class:`~magpy.trace.Trace` (the result of one monitor run), never the
monitor itself:

- :mod:`.guard`: the guard, which checks that everything the run read from outside is as it was;
- :mod:`.guard_batch`: checks of state the record holds, batched into a few C-level passes;
- :mod:`.mock`: the mock, which rebuilds the run's final state from the graph's outputs;
- :mod:`.speculation`: the checks of what the run assumed of values its graph computes;
- :mod:`.matched_path`: :func:`generate`, which puts them together into the record's code.
"""
from .matched_path import GeneratedCode, generate

__all__ = ["GeneratedCode", "generate"]
