"""Closures made in the call and natives mapped over Python code: closures over an argument the
call never loads (the interpreter moves it into the cell: no guard sees it), or over a number
MagPy lifted; a LiftedInt left in a returned closure's cell; natives mapped over what another map
or a generator hands out, whose calls run in C; a map passed in and summed; numbers read from
tensors drawn by a native from a map of a Python function. Wrong handling returns the first
call's values on later calls."""
from harness import program

F_ = "closure_cells_and_native_maps"

program(F_, "a_returned_closure_over_an_argument_the_call_never_loads", """
EXPECT = "record"
def f(x, k, s):
    return x * 2, (lambda y: y * x + k), (lambda: s)
def make(): return f
def inputs(i): return (torch.ones(2), i, "abc"[i % 3])
def invoke(f, i):
    out, g, h = f(*inputs(i))
    return out, g(torch.tensor([1.0, 2.0])), h()
NCALLS = 5
""")

program(F_, "a_closure_stored_outside_over_an_unread_argument_and_a_nonlocal_counter", """
EXPECT = "record"
CB = {}
def f(x, k, n):
    CB["add"] = lambda t: t + k
    def counter():
        nonlocal n
        n += 1
        return n
    return x, counter
def make(): return f
def inputs(i): return (torch.ones(1), float(i), 10 * i)
def invoke(f, i):
    out, counter = f(*inputs(i))
    return out, CB["add"](torch.zeros(1)), counter(), counter()
NCALLS = 5
""")

program(F_, "closures_over_a_lifted_number_and_a_lifted_size", """
EXPECT = "record"
HOLD = []
def f(x, k):
    y = x * k
    n = x.shape[0]
    HOLD.append(lambda: k)
    def g():
        return k + n
    g.attr = k
    return y, g, [k], (lambda m=n: m), collections.defaultdict(lambda: n)
def make(): return f
def inputs(i): return (torch.ones(1 + i % 3), i)
def invoke(f, i):
    y, g, ks, dflt, dd = f(*inputs(i))
    return y, g(), type(g()).__name__, g.attr, type(g.attr).__name__, ks, dflt(), type(dflt()).__name__, \\
        dd["z"], type(dd["z"]).__name__, HOLD[-1](), type(HOLD[-1]()).__name__
NCALLS = 6
""")

program(F_, "an_argument_rebound_before_the_closure_is_made", """
EXPECT = "record"
def f(x, k):
    def setk(v):
        nonlocal k
        k = v
    setk(1)
    j = k
    return x, (lambda: k), (lambda: j)
def make(): return f
def inputs(i): return (torch.ones(1), i % 2)
def invoke(f, i):
    x, a, b = f(*inputs(i))
    return x, a(), b()
NCALLS = 4
""")

program(F_, "a_value_reading_native_mapped_over_another_map_and_a_generator", """
EXPECT = "record"
def f(x):
    first = list(map(torch.Tensor.item, map(torch.neg, [x[:1], x[1:2]])))
    second = [*map(torch.Tensor.tolist, (t * 2 for t in [x]))]
    return first, second
def make(): return f
def inputs(i): return (torch.tensor([float(i % 2), -float(i % 3)]),)   # (tolist's values: a record each)
NCALLS = 7
""")

program(F_, "a_bound_setitem_mapped_over_a_map_of_a_native_writes_outside", """
EXPECT = "record"
L = [None, None]
D = {}
def f(x):
    list(map(L.__setitem__, [0, 1], map(torch.neg, [x, x * 2])))
    list(map(D.__setitem__, ["a"], map(torch.relu, [x - 1])))
    return x + 1
def make(): return f
def inputs(i): return (torch.full((2,), float(i)),)
NCALLS = 5
""")

program(F_, "a_map_passed_in_is_summed", """
EXPECT = "split"   # (each call draws the iterator: `sum` runs eagerly, the rest is compiled)
def f(x, it):
    return x * sum(it)
def make(): return f
def inputs(i): return (torch.ones(2), map(float, [i, i + 1][: 1 + i % 2]))
NCALLS = 5
""")

program(F_, "numbers_read_from_tensors_drawn_by_natives_from_maps", """
EXPECT = "dynamic"   # (values read: a record per value at first, then lifted or eager)
import math
def g(v):
    return v * 2
def f(x):
    items = [t.item() for t in [x[:1], x[1:2]]]
    a = sum(map(g, items))
    b = math.fsum(map(g, map(torch.Tensor.item, [x[:1], x[1:2]])))
    c = ",".join(map(str, map(torch.Tensor.item, [x[:1]])))
    d = sum(map(abs, map(torch.Tensor.item, [x[1:2] * 2])))
    return x * a, b, c, d
def make(): return f
def inputs(i): return (torch.tensor([float(i) - 2.0, 1.0 - i]),)
NCALLS = 6
""")
