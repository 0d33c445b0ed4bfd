"""MagPy with the XLA backend, and LazyTensor's graph count (Table 2), on torch_xla's CPU client.

Runs only in the XLA stage, ``./reproduce.sh test-xla`` (``.venv-xla``: torch 2.9.0 and
torch_xla 2.9.0, ``PJRT_DEVICE=CPU``), which CI runs and which fails when it cannot: the default
suite does not collect this file (``conftest.py``), and here a missing torch_xla is a collection
error, not a skip. ``tests/test_xla_stage.py`` (default suite) checks that the stage exists.

* ``magpy.compile(model, backend="xla")`` on the eight Table 2 programs at smoke size, model and
  inputs on the XLA device as the experiments' MagPy-XLA cells run them: the first call (monitored)
  and a second one (guards, mock and the XLA-compiled graph) equal eager's on the CPU.
* The LazyTensor graph count of :mod:`experiments.runners.graphs`: one graph for a program XLA traces
  whole, one more for each place where the program needs a value (a tensor read into Python).
"""
from __future__ import annotations

import os
import re

import pytest
import torch
import torch.utils._pytree as pytree
import torch_xla  # noqa: F401  (the stage's point: a missing torch_xla fails collection)
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

import magpy
import models
from experiments.compare import Tolerance, compare
from experiments.compilers import to_device
from experiments.runners import graphs

# The experiments' float32 tolerance (experiments/conf/config.yaml): XLA's CPU kernels round differently.
TOLERANCE = Tolerance(rtol=1e-3, atol=1e-3)


def test_the_stage_runs_on_xla_cpu() -> None:
    assert os.environ.get("PJRT_DEVICE") == "CPU" and str(xr.device_type()).upper() == "CPU"
    assert torch.__version__.split("+")[0] == "2.9.0" and torch_xla.__version__.split("+")[0] == "2.9.0"


@pytest.mark.parametrize("name", models.STATIC_MODELS)
def test_magpy_xla_backend_matches_eager(name: str) -> None:
    model, get_input = models.build(name, "smoke")
    args, kwargs = get_input(1)
    with torch.no_grad():
        expected = model(*args, **kwargs)
        device = torch_xla.device()
        on_xla = model.to(device)
        xargs, xkwargs = to_device((args, kwargs), device)
        try:  # the program itself on the XLA device (LazyTensor), uncompiled
            on_xla(*xargs, **xkwargs)
            xm.mark_step()
            failure = None
        except RuntimeError as err:
            failure = err
        compiled = magpy.compile(on_xla, backend="xla")
        if failure is not None:
            # torch_xla cannot run the program (ALIGN at smoke size: its AvgPool2d(ceil_mode=True) with
            # a kernel larger than the feature map gives an empty output on XLA, 1x1 on the CPU):
            # MagPy compiling it raises what running it raises, no other error and no result.
            first_line = str(failure).strip().splitlines()[0]
            with pytest.raises(type(failure), match=re.escape(first_line)):
                compiled(*xargs, **xkwargs)
            return
        first = compiled(*xargs, **xkwargs)    # monitored: runs the program, records the graph
        second = compiled(*xargs, **xkwargs)   # guards pass: torch_xla compiles the graph, runs it
        xm.mark_step()
        third = compiled(*xargs, **xkwargs)    # the compiled graph, from torch_xla's cache
        xm.mark_step()
    stats = magpy.stats(compiled)
    for which, out in (("first", first), ("second", second), ("third", third)):
        assert all(t.device.type == "xla" for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor))
        found = compare(expected, to_device(out, torch.device("cpu")), TOLERANCE)
        assert found, f"{name}: {which} call differs from eager: {found.mismatch}"
    # one monitored run, then guard hits that ran the XLA-compiled graph (none of it eagerly) ...
    assert stats.monitor_runs == 1 and stats.guard_hits == 2 and stats.fallbacks == 0, stats
    assert stats.graph_count >= 1


class _Whole(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class _ReadsValues(_Whole):
    """Reads a tensor into Python twice: LazyTensor must run the graph traced so far each time."""

    def forward(self, x):
        h = torch.relu(self.a(x))
        if h.sum().item() > 0:        # cut 1
            h = h * 2
        scale = float(h.max())        # cut 2
        return self.b(h) / scale      # the rest: cut at the step's end (mark_step)


@pytest.mark.parametrize(("program", "graphs_per_call"), [(_Whole, 1), (_ReadsValues, 3)])
def test_lazytensor_count_is_one_graph_per_cut(program, graphs_per_call) -> None:
    torch.manual_seed(0)
    model, x = program().eval(), torch.randn(2, 8)
    spec = {"device": "cpu", "compiler": {"frontend": "lazytensor", "backend": "xla"}}
    with torch.no_grad():
        expected = model(x)
        out, row = graphs._count_lazytensor(spec, model, [x], {})
    assert compare(expected, to_device(out, torch.device("cpu")), TOLERANCE)
    assert row["graph_count"] == graphs_per_call
    # the first call compiled each graph once; the counted (second) call only hit XLA's cache
    assert row["compiled_graphs"] == graphs_per_call and row["mark_steps"] == 1
    assert row["syncs"] == graphs_per_call - 1
