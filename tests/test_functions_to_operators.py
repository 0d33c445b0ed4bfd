"""A Python function handed to a tensor operator: followed when the operator is torch's own
Python code, a clear break reason when a native operator would call it back."""
import torch
from torch._higher_order_ops.associative_scan import associative_scan

import magpy


def _combine(a, b):
    return a * 0.5 + b


def test_a_torch_python_function_taking_the_programs_function_is_followed():
    def f(x):
        return associative_scan(_combine, x, dim=0, combine_mode="generic") * 2

    cm = magpy.compile(f, backend="eager")
    for i in range(3):
        x = torch.arange(8.0).reshape(4, 2) + i
        assert torch.equal(cm(x), f(x))
    reasons = magpy.stats(cm).break_reasons
    assert reasons and all("vmap" in r for r in reasons)   # followed into torch.vmap, not refused at the call
    assert not any("pass a function" in r for r in reasons)


def test_a_native_operator_calling_a_python_function_back_is_a_clear_break():
    def f(x):
        return x.clone().apply_(lambda v: v * 3.0) + 1

    cm = magpy.compile(f, backend="eager")
    x = torch.arange(3.0)
    assert torch.equal(cm(x), f(x))
    s = magpy.stats(cm)
    assert s.records == 0
    assert any("passes the Python function" in r and "native tensor operator" in r for r in s.break_reasons)
