"""Calls split at a dynamic operation that a `try` or `with` of its own frame covers
(magpy.splits): the frame goes on from the operation with its result, or, where the operation
raises, by raising its exception there, so the frame's `except`, `finally` and `__exit__` run as
in eager (grad mode restored by `torch.no_grad()`'s `__exit__`, a user context manager that
swallows the error, a handler that reads a local only it needs). Outside state changes between
calls: a buffer closed and replaced, weights changed in place, a number that makes the
operation raise on some calls only."""
from harness import program

F_ = "trywith"

program(F_, "write_under_no_grad_in_forward", """
EXPECT = "split"
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x):
        with torch.no_grad():
            z = self.fc(x)
            buf.write(f"{z.sum().item():.2f}\\n")
            w = z * 2
        return self.fc(x) + w
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

program(F_, "print_under_no_grad_then_grad_again", """
EXPECT = "split"
import io
buf = io.StringIO()
lin = nn.Linear(4, 2)
def f(x, scale):
    h = lin(x)
    with torch.no_grad():
        k = buf.write(f"mean {h.mean().item():.3f}\\n")
        ref = h * scale * k
    return (h - ref).pow(2).sum()
def make(): return f
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)), 0.5 + i % 2)
def post(out, i):
    out.backward()
    return out.requires_grad
def state(): return buf.getvalue(), lin.weight.grad
NCALLS = 6
""")

program(F_, "try_except_write_to_a_buffer_closed_between_calls", """
EXPECT = "split"
import io
buf = io.StringIO()
FAILS = []
def f(x):
    y = x.sin()
    try:
        buf.write(f"{y.sum().item():.3f};")
        y = y + 1
    except ValueError as e:
        FAILS.append(type(e).__name__)
        y = y - 1
    return y * 2
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global buf
    if i == 3: buf.close()
    if i == 5: buf = io.StringIO()
def state(): return (buf.getvalue() if not buf.closed else "closed"), list(FAILS)
NCALLS = 7
""")

program(F_, "user_context_manager_swallows_the_error", """
EXPECT = "split"
import io
LOG = []
sink = io.StringIO()
class Quiet:
    def __enter__(self):
        LOG.append("enter")
        return self
    def __exit__(self, kind, value, tb):
        LOG.append(("exit", None if kind is None else kind.__name__))
        return kind is not None and issubclass(kind, ValueError)
def f(x):
    y = x * 3
    with Quiet():
        sink.write(f"{y.abs().sum().item():.1f};")
        y = y + 1
    return y
def make(): return f
def inputs(i): return (torch.randn(2, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global sink
    if i == 2: sink.close()
    if i == 5: sink = io.StringIO()
def state(): return list(LOG), (sink.getvalue() if not sink.closed else "closed")
NCALLS = 7
""")

program(F_, "try_finally_around_a_pack_that_raises_on_some_calls", """
EXPECT = "split"
import struct
DONE = []
def f(x):
    y = x.relu()
    n = int(y.sum().item())
    try:
        p = struct.pack("b", n)
    finally:
        DONE.append("done")
    return y + len(p)
def make(): return f
def inputs(i): return (torch.full((3,), [1.0, 2.0, 90.0, 3.0, 4.0, 70.0, 5.0][i]),)
def state(): return list(DONE)
NCALLS = 7
""")

program(F_, "handler_reads_a_local_only_it_needs", """
EXPECT = "split"
import struct
def f(x):
    backup = x * 0.5
    y = x.tanh()
    try:
        p = struct.pack("b", int(y.sum().item() * 50))
        out = y + p[0]
    except struct.error:
        out = backup
    return out
def make(): return f
def inputs(i): return (torch.full((2,), [0.1, 0.2, 3.0, 0.3, 4.0, 0.4][i]),)
NCALLS = 6
""")
