"""Python functions handed to tensor operators. A torch function written in Python that takes the
program's function (a higher-order operator's ``combine_fn``) is followed like Python: the
function runs monitored where it is called (here through ``torch.vmap``, a transform no graph of
plain operators holds: the call splits there, with that reason). A native operator that calls
the function back (``Tensor.apply_``) cannot be followed: the call runs eagerly. The function or
what it reads changes between calls."""
from harness import program

F_ = "functions_to_operators"

program(F_, "associative_scan_with_a_combine_function_reading_a_global", """
EXPECT = "split"   # (at the vmap call: before and after it run compiled)
from torch._higher_order_ops.associative_scan import associative_scan
SCALE = 1.0
def combine(a, b):
    return a * SCALE + b
def f(x):
    return associative_scan(combine, x, dim=0, combine_mode="generic")
def make(): return f
def inputs(i): return (torch.arange(8.0).reshape(4, 2) + i,)
def step(i):
    global SCALE
    if i == 2: SCALE = 0.5
""")

program(F_, "native_apply_with_a_function_changed_between_calls", """
EXPECT = "dynamic"
FNS = [lambda v: v * 2.0]
def f(x):
    return x.clone().apply_(FNS[0]) + 1
def make(): return f
def inputs(i): return (torch.arange(3.0) + i,)
def step(i):
    if i == 2: FNS[0] = lambda v: v - 3.0
""")
