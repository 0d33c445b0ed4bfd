"""Threads: the compiled callable used from two threads at once."""
from harness import program

F_ = "threads"

program(F_, "two_threads_same_shapes", """
m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
def make(): return m
def inputs(i): return torch.randn(2, 8)
def invoke(f, i):
    xs = [torch.randn(2, 8) for _ in range(8)]
    outs = [None] * 8
    def work(j):
        for k in range(j, 8, 2):
            outs[k] = f(xs[k])
    ts = [threading.Thread(target=work, args=(j,)) for j in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
""")

program(F_, "two_threads_different_shapes", """
def f(x):
    return (x @ x.t()).relu().sum(-1)
def make(): return f
def inputs(i): return torch.randn(2, 3)
def invoke(f, i):
    xs = [torch.randn(2 + (k % 3), 3) for k in range(12)]
    outs = [None] * 12
    def work(j):
        for k in range(j, 12, 2):
            outs[k] = f(xs[k])
    ts = [threading.Thread(target=work, args=(j,)) for j in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
""")

program(F_, "two_threads_shared_buffer_update", """
class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.lock = threading.Lock()
    def forward(self, x):
        self.total += x
        return x * 2
m = Acc()
def make(): return m
def inputs(i): return torch.ones(3)
def invoke(f, i):
    outs = [None] * 10
    def work(j):
        for k in range(j, 10, 2):
            # (the lock: `total += x` from two threads at once is a data race in eager too, since
            # torch releases the GIL inside the add; the calls still alternate between threads)
            with m.lock:
                outs[k] = f(torch.full((3,), float(k)))
    ts = [threading.Thread(target=work, args=(j,)) for j in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
def state(): return None
""")

program(F_, "threads_with_different_grad_modes", """
m = nn.Linear(4, 4)
def make(): return m
def inputs(i): return torch.randn(2, 4)
def invoke(f, i):
    xs = [torch.randn(2, 4) for _ in range(6)]
    outs = [None] * 6
    def work(j):
        with torch.set_grad_enabled(j == 0):
            for k in range(j, 6, 2):
                y = f(xs[k])
                outs[k] = (y, y.requires_grad)
    ts = [threading.Thread(target=work, args=(j,)) for j in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
""")

program(F_, "threads_with_config_per_call", """
class Scale(nn.Module):
    def forward(self, x, k):
        return x * k
m = Scale()
def make(): return m
def inputs(i): return (torch.ones(2), 1.0)
def invoke(f, i):
    outs = [None] * 8
    def work(j):
        for k in range(j, 8, 2):
            outs[k] = f(torch.ones(2), float(k))
    ts = [threading.Thread(target=work, args=(j,)) for j in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
""")
