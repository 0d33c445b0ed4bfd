"""Calls split where splitting used to be refused (magpy.splits, magpy.continuation):

* the dynamic operation is in a function called from forward, and a `try`/`except`, `with` or
  `finally` of an *outer* frame covers that call: the continuation hands an exception of the inner
  frames (the operation's, or one raised after it) to the outer frame, raised at its call, so its
  handlers and `__exit__` run as in eager (grad mode restored, the error swallowed or re-raised);
* a `for` loop steps an iterator that comes from outside the call (a generator argument, a
  global `iter(list)`, a loader object whose `__next__` MagPy does not follow, a `zip` of two):
  each step (`next(it)`, or the end of the loop) runs eagerly, the loop body is compiled.

Outside state changes between calls as users change it: a log closed and reopened, weights
changed in place, the list an iterator walks replaced or grown, iterators of other lengths,
a flag that makes the code after the operation raise. Where an iterator is left partly
consumed (``break``), how far it got is compared too.
"""
from harness import program

F_ = "splits_outer"

# -- a handler of an outer frame covers the call that leads to the dynamic operation ----------------

program(F_, "helper_writes_under_no_grad_of_forward", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def helper(self, x):
        z = self.fc(x)
        buf.write(f"{z.sum().item():.3f}\\n")
        return z * 2
    def forward(self, x):
        with torch.no_grad():
            y = self.helper(x)
        return self.fc(x) + y
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        with torch.no_grad(): m.fc.weight.mul_(0.5)
def post(out, i): return (out.requires_grad, torch.is_grad_enabled())
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "outer_except_catches_the_write_to_a_closed_log", """
EXPECT = "split"
import io
_log = [io.StringIO()]
FAILS = []
def log(y):
    _log[0].write(f"{y.sum().item():.2f};")
    return y.abs()
def f(x):
    y = x.sin()
    try:
        y = log(y) * 3
    except ValueError as e:
        FAILS.append(type(e).__name__)
        y = y - 1
    return y * 2
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2: _log[0].close()
    if i == 4: _log[0] = io.StringIO()
def state(): return (_log[0].getvalue() if not _log[0].closed else "closed"), list(FAILS)
NCALLS = 7
""")

program(F_, "raise_after_the_operation_reaches_the_outer_context_manager", """
EXPECT = "split"
import io
buf = io.StringIO()
LOG = []
STRICT = [False]
class Quiet:
    def __enter__(self):
        LOG.append("enter")
        return self
    def __exit__(self, kind, value, tb):
        LOG.append(("exit", None if kind is None else kind.__name__))
        return kind is not None and issubclass(kind, KeyError)
def check(y):
    buf.write(f"{y.max().item():.2f};")
    if STRICT[0]:
        raise KeyError("strict")
    return y + 1
def f(x):
    y = x * 3
    with Quiet():
        y = check(y)
    return y - x
def make(): return f
def inputs(i): return (torch.randn(2, generator=torch.Generator().manual_seed(i)),)
def step(i): STRICT[0] = i in (2, 3, 5)
def state(): return list(LOG), buf.getvalue()
NCALLS = 7
""")

program(F_, "middle_frame_finally_and_outer_frames_around_it", """
EXPECT = "split"
import io
_buf = [io.StringIO()]
DONE = []
class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        h = self.fc(x).relu()
        _buf[0].write(f"{h.mean().item():.3f}\\n")
        return h * 2
class Mid(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()
    def forward(self, x):
        try:
            out = self.leaf(x) + 1
        finally:
            DONE.append(len(DONE))
        return out
class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return torch.tanh(self.mid(self.fc(x))) - x
m = Top()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        with torch.no_grad(): m.mid.leaf.fc.bias.add_(1.0)
    if i == 4: _buf[0].close()   # (the write raises: through Mid's `finally`, out of the call)
    if i == 5: _buf[0] = io.StringIO()
def state(): return ("closed" if _buf[0].closed else _buf[0].getvalue()), list(DONE)
NCALLS = 7
""")

# -- a loop steps an iterator from outside the call -------------------------------------------------

program(F_, "generator_argument_of_changing_length", """
EXPECT = "split"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(4, 4)
    def forward(self, steps, h):
        for x in steps:
            h = torch.tanh(self.cell(x) + h)
        return h
m = M()
def make(): return m
def gen(i, n):
    g = torch.Generator().manual_seed(i)
    for _ in range(n):
        yield torch.randn(2, 4, generator=g)
def inputs(i): return (gen(i, [3, 5, 0, 2, 4, 1][i]), torch.zeros(2, 4))
def step(i):
    if i == 4:
        with torch.no_grad(): m.cell.weight.mul_(-1.0)
NCALLS = 6
""")

program(F_, "global_list_iterator_replaced_and_grown_between_calls", """
EXPECT = "split"
DATA = [torch.ones(3) * k for k in range(4)]
_IT = [None]
def f(x):
    total = x * 0
    for row in _IT[0]:
        total = total + row * x
        if row.shape[0] > 5:
            break
    return total.relu()
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2: DATA[1] = torch.full((3,), -2.0)
    if i == 3: DATA.append(torch.ones(3) * 9)
    if i == 4: DATA.append(torch.ones(6))   # (the loop breaks there: the rest is left in the iterator)
    if i == 5: DATA.append(torch.ones(3))
    _IT[0] = iter(DATA)
def state(): return _IT[0].__length_hint__()
NCALLS = 6
""")

program(F_, "loader_object_with_its_own_next_and_a_break", """
EXPECT = "split"
class Loader:
    def __init__(self, n, seed):
        self.n, self.k, self.g = n, 0, torch.Generator().manual_seed(seed)
    def __iter__(self):
        return self
    def __next__(self):
        if self.k >= self.n:
            raise StopIteration
        self.k += 1
        return torch.randn(2, 3, generator=self.g), self.k
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
    def forward(self, loader, limit):
        loss = torch.zeros(())
        for x, k in loader:
            loss = loss + self.fc(x).pow(2).mean() * k
            if k >= limit:
                break
        else:
            loss = loss * 2
        return loss
m = M()
def make(): return m
_LOADERS = []
def inputs(i):
    _LOADERS.append(Loader([3, 4, 0, 4, 2, 5][i], i))
    return (_LOADERS[-1], [9, 2, 9, 3, 9, 4][i])
def post(out, i):
    out.backward()
    return _LOADERS[-1].k
def state(): return m.fc.weight.grad
NCALLS = 6
""")

program(F_, "loop_in_a_helper_over_a_zip_of_two_outside_iterators", """
EXPECT = "split"
def accumulate(pairs, h):
    for a, b in pairs:
        h = h * 0.5 + a * b
    else:
        h = h + 1
    return h
def f(pairs, x):
    h = accumulate(pairs, x.cos())
    return h.sum(0)
def make(): return f
def inputs(i):
    g = torch.Generator().manual_seed(i)
    n = [2, 3, 1, 3, 0][i]
    xs = [torch.randn(2, 3, generator=g) for _ in range(n)]
    ys = [torch.randn(2, 3, generator=g) for _ in range(n + i % 2)]
    return (zip(iter(xs), iter(ys)), torch.randn(2, 3, generator=g))
NCALLS = 5
""")

program(F_, "loop_under_no_grad_over_a_generator_that_raises_on_some_calls", """
EXPECT = "split"
BAD = [None]
ERRS = []
def rows(i, n):
    g = torch.Generator().manual_seed(i)
    for k in range(n):
        if k == BAD[0]:
            raise ValueError(f"row {k}")
        yield torch.randn(3, generator=g)
lin = nn.Linear(3, 3)
def f(it, x):
    try:
        with torch.no_grad():
            for r in it:
                x = lin(x) + r
    except ValueError as e:
        ERRS.append(str(e))
        x = x - 1
    return x, torch.is_grad_enabled()
def make(): return f
def inputs(i): return (rows(i, 3), torch.randn(3, generator=torch.Generator().manual_seed(50 + i)))
def step(i): BAD[0] = 1 if i in (2, 4) else None
def state(): return list(ERRS)
NCALLS = 6
""")

program(F_, "loop_in_a_helper_then_a_number_argument_read_after_it", """
EXPECT = "split"
def helper(it, x):
    for t in it:
        x = x.relu() + t
    return x * 2
def f(it, x, scale):
    y = helper(it, x.sin())
    return y * scale
def make(): return f
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return (iter([torch.randn(3, generator=g) for _ in range(3)]), torch.randn(3, generator=g), [0.5, 2.0, 3.0][i % 3])
NCALLS = 6
""")
