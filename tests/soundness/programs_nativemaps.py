"""A native mapped over tensors and drawn by another native in C (``tuple(map(torch.relu, xs))``,
``sum(map(torch.sum, xs))``, ``list(map(torch.add, xs, ys))``, ``map(self.proj, xs)``): the native's
calls were made from C, unseen, and the call fell back ("a tensor whose computation MagPy did not
see"). Each program changes what the map reads between calls (the list grows, a weight is scaled,
an outside list is swapped) and declares one record per shape of the data. Also `del` of a cell
variable (DELETE_DEREF), which had no rule, and a functools.partial called from C (by map or
functools.reduce), whose bound arguments were not guarded."""
from harness import program

F_ = "nativemaps"

program(F_, "tuple_of_a_map_of_relu_over_an_outside_list_that_grows", """
EXPECT = "record"
FEATURES = [torch.randn(4) for _ in range(2)]
def f(x):
    acts = tuple(map(torch.relu, [x * t for t in FEATURES]))
    return torch.stack(acts).sum(0)
def make(): return f
def inputs(i): return (torch.full((4,), float(i % 3) - 1.0),)
def step(i):
    if i == 3:
        FEATURES.append(torch.randn(4))
    if i == 5:
        FEATURES[0] = -FEATURES[0]
NCALLS = 7
""")

program(F_, "sum_of_a_map_of_torch_sum_and_max_of_numel", """
EXPECT = "record"
def f(xs):
    total = sum(map(torch.sum, xs))
    biggest = max(map(torch.numel, xs))
    return total / biggest
def make(): return f
def inputs(i): return ([torch.ones(2, i % 2 + 2), torch.arange(3.0) * i],)
NCALLS = 5
""")

program(F_, "list_of_a_two_argument_native_map_with_an_argument_list", """
EXPECT = "record"
BIAS = [torch.zeros(3), torch.ones(3)]
def f(xs):
    return torch.cat(list(map(torch.add, xs, BIAS)))
def make(): return f
def inputs(i): return ([torch.randn(3, generator=torch.Generator().manual_seed(i)) for _ in range(2)],)
def step(i):
    if i == 2:
        BIAS[1] = torch.full((3,), 5.0)
    if i == 4:
        BIAS.pop()   # (the map stops at the shorter list)
NCALLS = 6
""")

program(F_, "a_map_drawn_twice_gives_nothing_the_second_time", """
EXPECT = "record"
def f(xs):
    m = map(torch.neg, xs)
    first = list(m)
    second = list(m)
    return torch.stack(first), len(second)
def make(): return f
def inputs(i): return ([torch.randn(2), torch.randn(2) + i],)
""")

program(F_, "a_module_and_a_tensor_method_mapped_over_inputs", """
EXPECT = "record"
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
    def forward(self, xs):
        outs = tuple(map(self.proj, xs))
        return sum(map(torch.Tensor.tanh, outs))
m = Heads()
def make(): return m
def inputs(i): return ([torch.randn(3, 4, generator=torch.Generator().manual_seed(i)) for _ in range(3)],)
def step(i):
    if i == 2:
        with torch.no_grad():
            m.proj.weight.mul_(3.0)
    if i == 4:
        m.proj = nn.Linear(4, 2)
NCALLS = 6
""")

# `del` of a cell variable (DELETE_DEREF), here a cell of a closure made outside the call: the
# mock empties it as the call did, and a later call that finds it empty is another record.
program(F_, "del_of_a_closure_cell_from_outside_and_a_later_read_that_finds_it_empty", """
EXPECT = "record"
def factory():
    memo = torch.zeros(3)
    def f(x, reset):
        nonlocal memo
        try:
            prev = memo
        except NameError:
            prev = torch.full((3,), -1.0)
        out = x + prev
        if reset:
            del memo
        else:
            memo = out
        return out
    return f
f = factory()
def make(): return f
def inputs(i): return (torch.ones(3) * i, i in (1, 4))
NCALLS = 8
""")

program(F_, "del_of_a_local_cell_read_by_a_nested_function", """
EXPECT = "record"
OFFSET = [1.0]
def f(x):
    y = x * OFFSET[0]
    def g():
        return y
    out = g()
    del y
    try:
        out = out + g()
    except NameError:
        out = out - 1
    return out
def make(): return f
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        OFFSET[0] = 3.0
""")

# A functools.partial called from C (by map, by functools.reduce) passed its bound arguments to
# the Python function unseen: they became constants of the record.
program(F_, "partial_with_an_outside_list_bound_mapped_over_inputs", """
EXPECT = "record"
SC = [2.0]
def g(scale, t):
    return t * scale[0]
P = functools.partial(g, SC)
def f(x):
    return list(map(P, [x, x + 1])), sum(map(P, [x]))
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2:
        SC[0] = 7.0
""")

program(F_, "partial_keywords_changed_in_place_under_map", """
EXPECT = "record"
def g(t, scale):
    return t * scale
P = functools.partial(g, scale=2.0)
def f(x):
    return tuple(map(P, [x]))
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2:
        P.keywords["scale"] = 7.0
    if i == 3:
        P.__setstate__((g, (), {"scale": -1.0}, None))
NCALLS = 5
""")

program(F_, "partial_with_an_outside_list_as_a_reduce_fold", """
EXPECT = "record"
SC = [2.0]
def g(scale, a, b):
    return a + b * scale[0]
P = functools.partial(g, SC)
def f(x):
    return functools.reduce(P, [x, x, x])
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2:
        SC[0] = 7.0
""")


# -- a map of a native made in the call and drawn by Python code: a `for` loop, zip, [*m], next --------
# (the map is made of callbacks.native_applier when it is created, so every way of drawing it calls
# the native from a monitored frame; each was a fallback before)

program(F_, "for_loop_over_a_map_of_a_swapped_global_activation", """
EXPECT = "record"
ACT = torch.relu
def f(xs):
    out = []
    for y in map(ACT, xs):
        out.append(y * 2)
    return torch.stack(out)
def make(): return f
def inputs(i): return ([torch.randn(3, generator=torch.Generator().manual_seed(i)) for _ in range(2)],)
def step(i):
    global ACT
    if i == 3:
        ACT = torch.tanh
NCALLS = 6
""")

program(F_, "zip_of_a_map_with_an_outside_list_that_grows_and_is_swapped", """
EXPECT = "record"
SCALES = [torch.ones(3), torch.full((3,), 2.0)]
def f(x):
    return [a * s for a, s in zip(map(torch.sigmoid, [x, -x, x * 3]), SCALES)]
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        SCALES.append(torch.full((3,), -1.0))
    if i == 4:
        SCALES[0] = torch.zeros(3)
NCALLS = 6
""")

program(F_, "a_map_of_a_bound_tensor_method_drawn_by_next_then_star_unpacked", """
EXPECT = "record"
WEIGHTS = [torch.full((2,), 2.0), torch.full((2,), 3.0), torch.full((2,), 4.0)]
def f(x):
    m = map(x.mul, WEIGHTS)
    first = next(m)
    rest = [*m]
    return first, torch.cat(rest) if rest else first
def make(): return f
def inputs(i): return (torch.randn(2, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        WEIGHTS[2] = torch.full((2,), -1.0)
    if i == 4:
        del WEIGHTS[1:]
NCALLS = 6
""")

program(F_, "a_map_left_by_break_and_finished_by_enumerate", """
EXPECT = "record"
def f(xs):
    m = map(torch.neg, xs)
    head = []
    for y in m:
        head.append(y)
        if y.shape[0] > 2:
            break
    tail = [k * t for k, t in enumerate(m)]
    return torch.cat(head), tail
def make(): return f
def inputs(i): return ([torch.ones(2) * i, torch.ones(3 - i % 2), torch.ones(4), torch.ones(2)],)
NCALLS = 6
""")

program(F_, "a_map_of_a_native_made_in_the_call_escapes_to_an_outside_list", """
EXPECT = "dynamic"   # (the mock does not rebuild a lazy map that outlives the call: eager, as before)
PENDING = []
def f(xs):
    PENDING.append(map(torch.relu, xs))
    return xs[0] + 1
def make(): return f
def inputs(i): return ([torch.randn(2, generator=torch.Generator().manual_seed(i)), -torch.ones(2) * i],)
def post(out, i):
    return [t.clone() for t in PENDING.pop()]   # (drawn outside the call, after it returned)
NCALLS = 5
""")


# -- f(*map(g, xs)) / f(*filter(p, xs)) with a Python f: the interpreter unpacks the iterator in C,
# then enters f. The monitor puts a generator that draws it (callbacks.drain) in its place: ran eagerly
# before ("unpacks a `map` into call arguments")

program(F_, "a_python_function_called_with_a_star_unpacked_map_of_a_swapped_activation", """
EXPECT = "record"
ACT = torch.relu
TENSORS = [torch.arange(3.0) - 1, torch.ones(3)]
def combine(*parts, scale=1.0):
    return torch.stack(parts).sum(0) * scale
def f(x):
    return combine(*map(ACT, [x * t for t in TENSORS]), scale=len(TENSORS))
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global ACT
    if i == 2:
        TENSORS.append(-torch.ones(3))
    if i == 4:
        ACT = torch.tanh
NCALLS = 6
""")

program(F_, "a_python_function_called_with_a_star_unpacked_filter_over_an_outside_threshold", """
EXPECT = "record"
LIMIT = 2
def keep(t):
    return t.shape[0] > LIMIT
def first_two(a, b, *rest):
    return a.sum() - b.sum() + len(rest)
def f(xs):
    return first_two(*filter(keep, xs))
def make(): return f
def inputs(i): return ([torch.ones(3) * i, torch.ones(4), torch.ones(2), torch.ones(5) * 2],)
def step(i):
    global LIMIT
    if i == 3:
        LIMIT = 1   # (the 2-element tensor is kept now: a different call)
NCALLS = 6
""")


program(F_, "namedtuple_replace_maps_dict_pop_over_tensor_fields", """
EXPECT = "record"   # (`_replace` is `_make(map(kwds.pop, fields, self))`: pop hands tensors back unread)
import collections as _c
Det = _c.namedtuple("Det", "boxes scores")
STATE = {"scale": 2.0}
def f(x):
    d = Det(x, x.sum(-1))
    d = d._replace(scores=d.scores * STATE["scale"])
    return d
def make(): return f
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        STATE["scale"] = -1.0
NCALLS = 5
""")
