"""MagPy on the paper's benchmark programs (smoke size): eager results, one graph for static models.

Table 2's MagPy row is 1 graph for every static model. ``quantized`` reads tensor values into
Python floats in forward (``float(self.weight.min())``, as the original code does): the reads and
the arithmetic on them are graph nodes, one graph. ``blockdrop`` branches on a policy computed from
the input: each branch outcome is an assumption, one record per policy path (no eager fallback).
"""
from __future__ import annotations

import pytest
import torch
from conftest import same

import magpy
import models

ONE_GRAPH = ("align", "bert", "deberta", "densenet", "monodepth", "resnet", "tridentnet", "lstm", "quantized")
SPECULATIVE = ("blockdrop",)


@pytest.mark.parametrize("name", ONE_GRAPH + SPECULATIVE)
def test_model_matches_eager(name):
    model, get_input = models.build(name, "smoke")
    cm = magpy.compile(model, backend="eager")
    with torch.no_grad():
        for seed in range(3):
            args, kwargs = get_input(2, seed=seed)
            assert same(cm(*args, **kwargs), model(*args, **kwargs)), f"{name} differs from eager (seed {seed})"
    st = magpy.stats(cm)
    if name in ONE_GRAPH:
        assert st.monitor_runs == 1 and st.break_reasons == [] and st.graph_count == 1 and st.guard_hits == 2
    else:
        # one record per policy path: every call compiled, none eager
        assert st.break_reasons == [] and st.fallbacks == 0 and st.graph_count == st.records == st.monitor_runs
        assert st.monitor_runs + st.guard_hits == 3
