"""Calls split at a dynamic operation and resumed after it, around Python features whose
resumed frame must be the frame of *this* call: closures and lambdas made in the call (their
cells and captured values), number and string arguments first read after the split, dict
views iterated across the split, zero-argument ``super()`` and ``locals()`` after it, C
context managers (a lock) around it, and a dynamic operation that looks at its caller's frame."""
from harness import program

F_ = "splitresume"

program(F_, "nonlocal_counter_in_a_nested_def_written_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(x, k):
    total = 0
    def acc(t):
        nonlocal total
        total += k
        buf.write(f"{t.sum().item():.2f}\\n")
        total += 10 * k
        return t * 2
    y = acc(x)
    return y + total
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), 1 + i % 3)
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "lambda_of_this_call_captures_a_tensor_and_a_number", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, scale):
        h = self.fc(x)
        post = lambda t: (buf.write(f"{t.mean().item():.3f}\\n"), t * scale + h)[1]
        return post(h.relu())
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)), 0.5 * (1 + i % 3))
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "number_and_string_arguments_first_read_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
fc = nn.Linear(4, 4)
def f(x, scale, mode, flag=None):
    h = fc(x).relu()
    buf.write(f"h={h.sum().item():.3f}\\n")
    out = h * scale
    if mode == "neg":
        out = -out
    if flag:
        out = out + 1
    return out
def make(): return f
def inputs(i):
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
    return (x, [2, 3][i % 2], ["pos", "neg"][(i // 2) % 2]), ({"flag": True} if i >= 5 else {})
def state(): return buf.getvalue()
NCALLS = 8
""")

program(F_, "varargs_of_numbers_read_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(t, *ws, **opts):
    h = t.sin()
    buf.write(f"{h.max().item():.2f};")
    for w in ws:
        h = h * w
    return h + opts.get("bias", 0)
def make(): return f
def inputs(i):
    return (torch.randn(3, generator=torch.Generator().manual_seed(i)), 1 + i % 2, 0.5 * (i % 3)), {"bias": i % 2}
def state(): return buf.getvalue()
NCALLS = 7
""")

program(F_, "dict_items_loop_split_inside_values_updated_later", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = {"a": 1.0, "b": 2.0, "c": 3.0}
    def forward(self, x):
        out = x
        for name, w in self.weights.items():
            buf.write(f"{name}:{out.sum().item():.2f};")
            if name == "a":
                self.weights["c"] = w * 4.0
            out = out * w
        return out
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: m.weights["b"] = -1.0
def state(): return buf.getvalue(), dict(m.weights)
NCALLS = 6
""")

program(F_, "dict_keys_loop_grows_the_dict_after_the_split_raises", """
EXPECT = "split"
import io
buf = io.StringIO()
table = {"x": 1, "y": 2}
def f(t):
    out = t
    for k in table.keys():
        buf.write(k)
        if len(k) == 1 and k == "y" and out.numel() > 0:
            table[k + k] = 3
        out = out + table[k]
    return out
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    table.pop("yy", None)
def state(): return buf.getvalue(), dict(table)
NCALLS = 5
""")

program(F_, "zero_argument_super_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gain = 1.0
    def forward(self, x):
        return self.fc(x) * self.gain
class Child(Base):
    def forward(self, x):
        buf.write(f"{x.abs().sum().item():.2f}\\n")
        return super().forward(x).relu()
m = Child()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: m.gain = 3.0
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "locals_read_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(x, scale):
    a = x * 2
    b = x + 1
    buf.write(f"{a.sum().item():.2f}\\n")
    names = sorted(k for k in locals() if not k.startswith("."))
    env = locals()
    return env["a"] * scale + env["b"], names
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), 1.0 + i % 2)
def state(): return buf.getvalue()
NCALLS = 6
""")

program(F_, "with_a_lock_around_tensor_work", """
# a lock taken inside the call: the record would neither wait for it nor hold it (see README)
EXPECT = "dynamic"
import threading
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()
        self.fc = nn.Linear(4, 4)
        self.calls = 0
    def forward(self, x):
        with self._lock:
            y = self.fc(x)
        return y.relu() + self.calls
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3: m.calls = 2
def state(): return m.calls, m._lock.locked()
NCALLS = 6
""")

program(F_, "queue_size_read_in_forward", """
EXPECT = "dynamic"
import queue
q = queue.Queue()
def f(x):
    y = x.sin()
    n = q.qsize()
    return y * (n + 1)
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i in (1, 4): q.put(i)
def state(): return q.qsize()
NCALLS = 7
""")

program(F_, "dynamic_operation_reads_the_callers_frame", """
EXPECT = "dynamic"
import sys
seen = []
def whoami(depth=1):
    return sys._getframe(depth).f_code.co_name
def forward_step(x):
    h = x.relu()
    seen.append(sys._getframe().f_code.co_name)
    return h * len(seen)
def make(): return forward_step
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def state(): return list(seen)
NCALLS = 5
""")

program(F_, "module_logs_with_the_caller_name_through_inspect", """
EXPECT = "dynamic"
import inspect, io
buf = io.StringIO()
def log(msg):
    caller = inspect.currentframe().f_back.f_code.co_name
    buf.write(f"{caller}: {msg}\\n")
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        h = self.fc(x)
        log(f"{h.sum().item():.2f}")
        return h.tanh()
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def state(): return buf.getvalue()
NCALLS = 5
""")

program(F_, "closure_from_a_factory_of_the_call_counts_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
def make_bump(scale, start):
    count = start
    def bump(t):
        nonlocal count
        count += 1
        buf.write(f"{t.mean().item():.3f}\\n")
        count += 1
        return t * scale + count
    return bump
def f(x, scale, start):
    bump = make_bump(scale, start)
    return bump(x)
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), [1.0, 2.0][i % 2], 5 * (i // 3))
def state(): return buf.getvalue()
NCALLS = 7
""")

program(F_, "lambda_in_a_compiled_closure_writes_the_outer_counter_after_the_split", """
EXPECT = "split"
import io
buf = io.StringIO()
def build():
    calls = 0
    def forward(x):
        h = x.cos()
        def note(t):
            nonlocal calls
            buf.write(f"{t.sum().item():.2f}\\n")
            calls += 1
            return t + calls + h
        return note(x.relu())
    def count():
        return calls
    return forward, count
fwd, count = build()
def make(): return fwd
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def state(): return buf.getvalue(), count()
NCALLS = 6
""")

program(F_, "nested_closures_both_resumed_share_a_cell", """
EXPECT = "split"
import io
buf = io.StringIO()
def f(x, w):
    acc = []
    total = 0
    def outer(t):
        nonlocal total
        def inner(u):
            nonlocal total
            buf.write(f"{u.max().item():.2f};")
            total += w
            acc.append(total)
            return u * 2
        v = inner(t)
        total += 100
        return v
    y = outer(x)
    return y + total, list(acc)
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)), 1 + i % 2)
def state(): return buf.getvalue()
NCALLS = 6
""")
