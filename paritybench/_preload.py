"""Imported once by the forkserver that forks the workers, so every worker starts warm.

Importing torch and TorchDynamo takes seconds; done here, each forked worker inherits them.
A tiny ``torch.compile`` warms Dynamo's lazily built tables. Intra-op parallelism is set to
one thread before any operator runs: a worker forked from a process with a live OpenMP pool
can deadlock, and parallel jobs are the unit of parallelism here anyway. Everything else is
best effort: a library that fails to import is simply left to the worker (and its stubs).
"""

import importlib
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402

torch.set_num_threads(1)

import torch._dynamo  # noqa: E402


def _warm_up() -> None:
    layer = torch.nn.Linear(2, 2)
    torch.compile(layer, backend="eager", fullgraph=True)(torch.ones(1, 2))
    torch.jit.script(layer)
    torch._dynamo.reset()


_warm_up()

# Libraries the ParityBench preamble imports in every file; importing them once here saves
# each worker the time. Failures are expected where a library is absent.
for _name in ("numpy", "scipy", "pandas", "matplotlib", "matplotlib.pyplot", "yaml", "paritybench.compilers",
              "torch._inductor", "torch.testing._internal.jit_utils", "torch._dynamo.testing", "paritybench.utils"):
    try:
        importlib.import_module(_name)
    except Exception:  # noqa: BLE001, S112 - absent or broken: the worker decides what to stub
        continue
