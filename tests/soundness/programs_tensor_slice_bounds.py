"""Slices bounded by one-element integer tensors (``rel[512 - span:512 + span]`` with
``span = torch.tensor(n)``): a bound the graph computes from no input, draw or in-place change
is a number of the record; every other bound stays a tensor the graph reads each call."""
from harness import program

F_ = "tensor_slice_bounds"

program(F_, "span_from_the_sizes_of_the_inputs", """
def f(rel, q, k):
    span = torch.tensor(min(max(q.size(-2), k.size(-2)), 6))
    return rel[6 - span:6 + span, :] * 2
REL = torch.randn(12, 3)
def make(): return f
SIZES = [(2, 3), (2, 3), (5, 1), (4, 4), (9, 2), (4, 4)]
def inputs(i): return (REL, torch.randn(SIZES[i][0], 3), torch.randn(SIZES[i][1], 3))
NCALLS = 6
""")

program(F_, "bound_changed_in_place_by_an_input", """
def f(x, n):
    k = torch.tensor(1)
    k.add_(n.sum())
    return x[:k] + 1
def make(): return f
NS = [1, 1, 3, 0, 2, 3]
def inputs(i): return (torch.arange(8.0), torch.tensor([NS[i]]))
NCALLS = 6
""")

program(F_, "bound_item_assigned_from_an_input", """
def f(x, n):
    k = torch.tensor(0)
    k[...] = n.argmax()
    return x[k:] * 3
def make(): return f
WS = [[0., 5., 1.], [0., 5., 1.], [9., 1., 1.], [0., 1., 7.]]
def inputs(i): return (torch.arange(6.0), torch.tensor(WS[i % 4]))
NCALLS = 6
""")

program(F_, "bound_from_a_random_draw", """
def f(x):
    k = torch.randint(1, 5, ())
    return x[:k].sum() + k
def make(): return f
def inputs(i): return torch.arange(6.0)
NCALLS = 6
""")

program(F_, "bound_from_the_index_of_a_loop", """
def f(x):
    parts = []
    for i in range(3):
        parts.append(x[:torch.tensor(i + 1)].sum())
    return torch.stack(parts)
def make(): return f
def inputs(i): return torch.randn(5)
NCALLS = 4
""")

program(F_, "bound_from_a_tensor_held_outside", """
CFG = {"span": torch.tensor(2)}
def f(x):
    return x[:CFG["span"] + 1] * 2
def make(): return f
def inputs(i): return torch.arange(6.0)
def step(i):
    if i == 2: CFG["span"].fill_(4)
    if i == 4: CFG["span"] = torch.tensor(1)
NCALLS = 6
""")

program(F_, "bound_computed_from_a_constant_then_the_constant_changes_in_place", """
def f(x):
    k = torch.tensor(3)
    a = x[:k].sum()
    k.sub_(x[0].long())
    return a, x[:k].sum()
def make(): return f
def inputs(i): return torch.tensor([float(i % 3), 1.0, 2.0, 3.0, 4.0])
NCALLS = 6
""")

program(F_, "bound_derived_from_a_tensor_item_assigned_from_an_input", """
def f(x):
    k = torch.tensor(2)
    first = x[:k].sum()
    k[...] = k + (x[0] > 0).long()
    return first + x[k - 1:k].sum()
def make(): return f
XS = [[1.0, 2.0, 3.0, 4.0], [-1.0, 2.0, 3.0, 4.0], [1.0, 5.0, 7.0, 4.0], [-2.0, 2.0, 9.0, 4.0]]
def inputs(i): return torch.tensor(XS[i % 4])
NCALLS = 6
""")

program(F_, "bound_from_a_view_of_a_tensor_changed_through_another_view", """
def f(x):
    base = torch.tensor([3, 1])
    head = base[0]
    base[1:].fill_(0)
    base.view(-1)[0:1].copy_((x[0] > 0).long() + 1)
    return x[:head + 1].sum()
def make(): return f
XS = [[1.0, 2.0, 3.0, 4.0], [-1.0, 2.0, 3.0, 4.0], [1.0, 5.0, 7.0, 4.0]]
def inputs(i): return torch.tensor(XS[i % 3])
NCALLS = 5
""")
