"""MagPy on the paper's benchmark programs (smoke size): eager results, one graph for static models.

Table 2's MagPy row is 1 graph for every static model. ``quantized`` reads a tensor value into a
Python float in forward (``float(self.weight.min())``, as the original code does) and ``blockdrop``
branches on a policy computed from the input: both are dynamic until graph splitting lands.
"""
from __future__ import annotations

import pytest
import torch
from conftest import same

import magpy
import models

ONE_GRAPH = ("align", "bert", "deberta", "densenet", "monodepth", "resnet", "tridentnet", "lstm")
DYNAMIC = ("quantized", "blockdrop")


@pytest.mark.parametrize("name", ONE_GRAPH + DYNAMIC)
def test_model_matches_eager(name):
    model, get_input = models.build(name, "smoke")
    cm = magpy.compile(model, backend="eager")
    with torch.no_grad():
        for seed in range(3):
            args, kwargs = get_input(2, seed=seed)
            assert same(cm(*args, **kwargs), model(*args, **kwargs)), f"{name} differs from eager (seed {seed})"
    st = magpy.stats(cm)
    assert st.monitor_runs == 1
    if name in ONE_GRAPH:
        assert st.break_reasons == [] and st.graph_count == 1 and st.guard_hits == 2
    else:
        assert st.graph_count == 0 and st.break_reasons
