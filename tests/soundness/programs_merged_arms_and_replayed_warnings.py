"""Branch merging and replayed effects: a library arm recorded while an outside number had
another value (its guard must not be lost to the run's by dedup), arms whose tensors differ only
in storage offset or leaf-ness, or whose numbers differ only in the sign of zero, merged into one
conditional node; `warnings.warn` under filters other than "default"; a dict subclass with
`__missing__` whose item guard must not run `__missing__` again on every split hit."""
from harness import program

F_ = "merged_arms_and_replayed_warnings"

program(F_, "arm_keeps_a_global_number_it_was_recorded_with", """
EXPECT = "record"
G = {"s": 1}
def f(x):
    y = x * 2
    if y.sum() > 0:
        y = y * G["s"]
    else:
        y = y - G["s"]
    return y
PLAN = [(1., 1), (-1., 1), (1., 4), (-1., 4), (-1., 4), (1., 4)]
def step(i): G["s"] = PLAN[i][1]
def make(): return f
def inputs(i): return (torch.full((2,), PLAN[i][0]),)
NCALLS = 6
""")

program(F_, "arm_keeps_a_module_attribute_it_was_recorded_with", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.temp = 1.0
    def forward(self, x):
        y = x * 2
        if y.sum() > 0:
            y = y / self.temp
        else:
            y = y * self.temp
        return y
m = M()
PLAN = [(1., 1.0), (-1., 1.0), (1., 0.5), (-1., 0.5), (1., 0.5)]
def step(i): m.temp = PLAN[i][1]
def make(): return m
def inputs(i): return (torch.full((2,), PLAN[i][0]),)
NCALLS = 5
""")

program(F_, "arms_give_views_at_other_storage_offsets", """
EXPECT = "record"
def f(x):
    z = x * 2
    if z.sum() > 0:
        y = z[1:]
    else:
        y = z[:-1]
    return y, y.storage_offset()
def make(): return f
def inputs(i): return (torch.full((3,), 1.0 if i % 2 == 0 else -1.0),)
NCALLS = 4
""")

program(F_, "arms_give_a_leaf_and_a_computed_tensor", """
EXPECT = "record"
def f(x):
    z = x * 2
    if z.sum() > 0:
        y = torch.ones(2, requires_grad=True)
    else:
        y = torch.ones(2, requires_grad=True) * 1
    return z + 1, y.is_leaf
def make(): return f
def inputs(i): return (torch.full((2,), 1.0 if i % 2 == 0 else -1.0),)
NCALLS = 4
""")

program(F_, "arms_leave_zero_and_negative_zero", """
EXPECT = "record"
import math
def f(x):
    y = x * 2
    if y.sum() > 0:
        k = 0.0
    else:
        k = -0.0
    return y, str(k), math.atan2(k, -1.0)
def make(): return f
def inputs(i): return (torch.full((2,), 1.0 if i % 2 == 0 else -1.0),)
NCALLS = 4
""")

program(F_, "warning_under_always_and_error_filters", """
EXPECT = "record"
import warnings
def f(x):
    warnings.warn("deprecated path", DeprecationWarning)
    return x * 2
FILTERS = ["always", "always", "always", "error", "error", "ignore", "always"]
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def invoke(f, i):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter(FILTERS[i])
        try:
            out = f(*inputs(i))
        except DeprecationWarning as e:
            out = "raised " + str(e)
    return out, [(str(x.message), x.category.__name__, x.lineno) for x in w]
NCALLS = 7
""")

program(F_, "dict_subclass_with_missing_made_in_the_call", """
EXPECT = "split"
LOG = []
class Miss(dict):
    def __missing__(self, k):
        LOG.append(("miss", k))
        return 0
def f(x):
    d = Miss()
    return x + d["z"]
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return list(LOG)
NCALLS = 4
""")

program(F_, "warning_between_outside_writes_under_error_filter", """
EXPECT = "dynamic"
import warnings
OUT = []
def f(x):
    OUT.append(1)
    warnings.warn("deprecated path", UserWarning)
    OUT.append(2)
    return x * 2
FILTERS = ["always", "always", "error", "error", "always"]
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def invoke(f, i):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter(FILTERS[i])
        try:
            out = f(*inputs(i))
        except UserWarning as e:
            out = "raised " + str(e)
    return out, len(w), list(OUT)
NCALLS = 5
""")
