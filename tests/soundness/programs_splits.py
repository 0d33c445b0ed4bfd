"""Calls split at a dynamic operation (a native MagPy does not annotate, a write to a file,
``next()`` of an iterator from outside) and resumed after it: in submodules, helpers, loops over
module lists, comprehensions; objects made before the split and used after it (identity, lists
stored outside), outside state the continuation reads changed between calls, writes made
before the split that the operation reads (handlers around it: programs_trywith.py)."""
from harness import program

F_ = "splits"

program(F_, "write_in_a_submodule_scale_changed", """
EXPECT = "split"
import io
buf = io.StringIO()
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 2.0
    def forward(self, x):
        y = self.fc(x).relu()
        buf.write(f"{y.sum().item():.3f}\\n")
        return y * self.scale + x
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = nn.Linear(4, 4)
    def forward(self, x):
        h = self.b(x)
        return torch.tanh(self.a(h) + 1) - h
m = Net()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: m.a.scale = 0.5
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "native_pushes_to_an_outside_list_user_appends", """
EXPECT = "split"
import heapq
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.heap = []
    def forward(self, x):
        y = x.relu()
        heapq.heappush(self.heap, round(float(y.sum()), 3))
        return y + len(self.heap) + self.heap[0]
m = M()
def make(): return m
def inputs(i): return (torch.randn(4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2: m.heap.append(-5.0)
    if i == 4: m.heap.clear()
def state(): return list(m.heap)
NCALLS = 6
""")

program(F_, "split_in_a_helper_then_closure_over_its_locals", """
EXPECT = "split"
import io
buf = io.StringIO()
def helper(x, k):
    base = x * k
    buf.write(f"{base.mean().item():.2f}\\n")
    shift = lambda t: t + base + k
    return [shift(t) for t in (x, base)]
def f(x, k):
    return helper(x.cos(), k)
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), 1 + i % 2)
def state(): return buf.getvalue()
NCALLS = 5
""")

program(F_, "write_in_a_loop_over_a_module_list_block_replaced", """
EXPECT = "split"
import io
buf = io.StringIO()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x):
        outs = []
        for blk in self.blocks:
            x = blk(x).relu()
            buf.write(f"{x.sum().item():.3f}\\n")
            outs.append(x)
        return x, outs
m = Net()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        torch.manual_seed(7)
        m.blocks[1] = nn.Linear(4, 4)
def state(): return buf.getvalue()
NCALLS = 5
""")

program(F_, "write_in_enumerate_and_zip_loops", """
EXPECT = "split"
import io
buf = io.StringIO()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fcs = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.gains = [1.0, 2.0]
    def forward(self, x):
        for i, (fc, g) in enumerate(zip(self.fcs, self.gains)):
            x = fc(x) * g
            buf.write(f"{i} {x.abs().max().item():.2f}\\n")
            x = x + i
        return x
m = Net()
def make(): return m
def inputs(i): return (torch.randn(1, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2: m.gains[1] = -1.0
def state(): return buf.getvalue(), list(m.gains)
NCALLS = 5
""")

program(F_, "write_inside_a_list_comprehension", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(xs):
    ys = [buf.write(f"{x.sum().item():.2f}\\n") and x * 2 for x in xs]
    return torch.stack(ys).sum(0)
def make(): return f
def inputs(i): return ([torch.randn(3, generator=torch.Generator().manual_seed(i + k)) for k in range(3)],)
def state(): return buf.getvalue()
NCALLS = 4
""")

program(F_, "next_of_an_outside_iterator_user_advances_it", """
EXPECT = "split"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.noise = iter([0.1 * k for k in range(40)])
    def forward(self, x):
        y = self.fc(x)
        eps = next(self.noise)
        return y * eps + 1
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: next(m.noise)
def state(): return list(__import__("itertools").islice(__import__("copy").copy(m.noise), 3))
NCALLS = 6
""")

program(F_, "global_written_before_the_write_read_by_it_and_after", """
EXPECT = "split"
import io
buf = io.StringIO()
COUNT = 0
def f(x):
    global COUNT
    COUNT += 1
    buf.write(f"call {COUNT}\\n")
    return x * COUNT
def make(): return f
def inputs(i): return (torch.randn(2, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global COUNT
    if i == 3: COUNT = 10
    if i in (2, 5): COUNT = 0
def state(): return buf.getvalue(), COUNT
NCALLS = 6
""")

program(F_, "list_stored_outside_before_the_split_appended_after", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.cache = None
    def forward(self, x):
        acc = [self.fc(x)]
        self.cache = acc
        buf.write(f"{acc[0].mean().item():.3f}\\n")
        acc.append(acc[0].relu())
        return acc[-1], self.cache is acc, len(self.cache)
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def state(): return buf.getvalue(), [t.shape for t in m.cache]
NCALLS = 4
""")

program(F_, "two_natives_data_flowing_between_them", """
EXPECT = "split"
import bisect
import heapq
EDGES = [-1.0, 0.0, 1.0]
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
    def forward(self, x):
        m = x.mean().item()
        b = bisect.bisect(EDGES, m)
        heapq.heappush(self.seen, (b, len(self.seen)))
        return x * b - self.seen[0][0]
m = M()
def make(): return m
def inputs(i): return (torch.randn(4, generator=torch.Generator().manual_seed(i)) + (i % 3) - 1,)
def step(i):
    if i == 4: EDGES.insert(0, -3.0)
def state(): return list(m.seen), list(EDGES)
NCALLS = 7
""")

program(F_, "three_levels_deep_with_a_range_loop_around", """
EXPECT = "split"
import io
buf = io.StringIO()
class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, k):
        y = self.fc(x)
        buf.write(f"{k}:{y.std().item():.2f}\\n")
        return y.tanh() * k
class Mid(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()
    def forward(self, x):
        total = x
        for k in range(1, 3):
            total = total + self.leaf(x, k)
        return total
class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()
    def forward(self, x):
        return self.mid(x.sin()).sum(-1, keepdim=True) * x
m = Top()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def state(): return buf.getvalue()
NCALLS = 4
""")

program(F_, "value_of_the_native_returned_and_stored", """
EXPECT = "split"
import struct
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
    def forward(self, x):
        s = float(x.sum())
        packed = struct.pack("d", s)
        self.last = packed
        return x / (1 + len(packed)), packed
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def state(): return m.last
NCALLS = 5
""")

program(F_, "native_in_a_loop_over_a_changing_length", """
EXPECT = "split"
import heapq
class Box:
    def __init__(self):
        self.heap = []
def f(x):
    box = Box()
    h = torch.zeros(3)
    for t in range(x.size(0)):
        heapq.heappush(box.heap, t * 1.5)
        h = h + x[t] * (2.0 if len(box.heap) > 3 else 1.0)
    return h, list(box.heap)
def make(): return f
def inputs(i): return (torch.randn((2, 3, 5, 4, 6, 3, 3, 2)[i], 3, generator=torch.Generator().manual_seed(i)),)
NCALLS = 8
""")

program(F_, "native_after_rows_of_a_changing_length", """
EXPECT = "split"
import bisect
EDGES = [0.0, 1.0]
def f(x):
    rows = x.unbind(0)
    out = []
    for r in rows:
        out.append(r * bisect.bisect(EDGES, float(r.sum())))
    return torch.stack(out)
def make(): return f
def inputs(i): return (torch.randn((2, 4, 3, 4, 5, 4, 3, 2)[i], 2, generator=torch.Generator().manual_seed(i)),)
NCALLS = 8
""")

program(F_, "two_closures_of_one_code_split_inside", """
EXPECT = "split"
import io
buf = io.StringIO()
def make_scaler(k):
    def scale(x):
        y = x * 2
        buf.write(f"{k}\\n")
        return y * k
    return scale
s1, s2 = make_scaler(2.0), make_scaler(3.0)
def f(x, which):
    return (s1 if which else s2)(x) + 1
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), i % 2 == 0)
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "split_in_super_call_decorated_helper_and_varargs", """
EXPECT = "split"
import bisect
import functools
EDGES = [-1.0, 0.0, 1.0]
def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out
    return wrapper
@traced
def bucket(v, *, lo=0):
    return bisect.bisect(EDGES, v, lo=lo)
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x, *extra, **opts):
        y = self.fc(x)
        b = bucket(float(y.mean()), lo=opts.get("lo", 0))
        return y * b + sum(extra)
class Child(Base):
    def forward(self, x, *extra, **opts):
        return super().forward(x, *extra, **opts).tanh() + 1
m = Child()
def make(): return m
def inputs(i): return ((torch.randn(2, 3, generator=torch.Generator().manual_seed(i)) * 3, 1.0, 2.0), {"lo": i % 2})
def step(i):
    if i == 3: EDGES.append(2.0)
NCALLS = 6
""")

program(F_, "result_of_the_native_branched_on_and_unpacked_star", """
EXPECT = "split"
import heapq
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.heap = [0.5]
    def forward(self, x):
        v = float(x.max())
        args = (self.heap, v)
        smallest = heapq.heappushpop(*args)
        if smallest > 0.2:
            return x * smallest
        return x - 1
m = M()
def make(): return m
def inputs(i): return (torch.randn(4, generator=torch.Generator().manual_seed(i)),)
def state(): return list(m.heap)
NCALLS = 6
""")

program(F_, "native_in_a_while_loop_deeper_than_the_split_depth", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(x, n):
    k = 0
    while k < n:
        x = x * 0.9 + k
        buf.write(f"{k}\\n")
        k += 1
    return x
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), (12, 12, 3, 12)[i])
def state(): return buf.getvalue()
NCALLS = 4
""")

program(F_, "submodule_with_a_forward_hook_around_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
seen = []
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x):
        y = self.fc(x)
        buf.write(f"{y.sum().item():.2f}\\n")
        return y.relu()
class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
    def forward(self, x):
        return self.inner(x) * 2
m = Outer()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        h = m.inner.register_forward_hook(lambda mod, a, out: seen.append(tuple(out.shape)))
        CLEANUP.append(h.remove)
def state(): return buf.getvalue(), list(seen)
NCALLS = 5
""")

program(F_, "static_and_class_methods_split_value_kept_on_self", """
EXPECT = "split"
import bisect
class M(nn.Module):
    EDGES = [0.0, 0.5]
    def __init__(self):
        super().__init__()
        self.last = None
    @staticmethod
    def level(v):
        return bisect.bisect(M.EDGES, v)
    @classmethod
    def scale(cls, x, v):
        return x * (cls.level(v) + 1)
    def forward(self, x):
        v = float(x.abs().mean())
        out = self.scale(x, v)
        prev = self.last
        self.last = v
        return out if prev is None else out + prev
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: M.EDGES = [0.0, 0.25, 0.75]
def state(): return m.last
NCALLS = 6
""")

# A loop whose trip count is a value read from a tensor, ended before the split: the code before
# the split is recorded with the loop unrolled, so the count is an assumption of that record,
# checked after its graph (a graph that updates BatchNorm statistics or a counter in place gets
# no value guard on the buffer: the check is what tells the count changed).
program(F_, "loop_count_from_a_buffer_before_a_split_with_batchnorm", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        self.register_buffer("depth", torch.tensor(2.0))
    def forward(self, x):
        y = self.bn(x)
        for _ in range(int(self.depth.item())):
            y = y * 2
        buf.write(f"{y.sum().item():.3f}\\n")
        return y + 1
def inputs(i): return (torch.randn(4, 3),)
NCALLS = 6
_m = []
def make():
    m = M(); _m.append(m); return m
def step(i):
    if i == 2: _m[-1].depth.fill_(3.0)
    if i == 4: _m[-1].depth.fill_(1.0)
def state(): return buf.getvalue()
""")

program(F_, "loop_count_from_a_buffer_before_a_split_with_a_counter_bumped_in_place", """
EXPECT = "split"
import io
buf = io.StringIO()
_m = []
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.register_buffer("hops", torch.tensor([2]))
    def forward(self, x):
        self.calls.add_(1)
        hops = int(self.hops[0])
        y = x
        for i in range(hops):
            y = y.roll(1) + i
        buf.write(f"{y.mean().item():.2f}\\n")
        return y * 2
def make():
    m = M(); _m.append(m); return m
def inputs(i): return (torch.arange(4.0),)
def step(i):
    if i == 2: _m[-1].hops[0] = 3
    if i == 3: _m[-1].hops[0] = 0
def state(): return buf.getvalue()
NCALLS = 5
""")
