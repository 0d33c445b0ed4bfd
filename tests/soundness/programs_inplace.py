"""In-place tensor updates: operator.iadd on buffers, inplace activations, nn.init in forward, out=,
.data writes, copy_, tensor setitem, in-place on arguments/buffers, running statistics."""
from harness import program

F_ = "inplace"

program(F_, "iadd_buffer_total", """
class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("total", torch.zeros(4))
    def forward(self, x):
        y = self.lin(x)
        self.total += y.sum(0).detach()
        return y
m = Acc()
def make(): return m
def inputs(i): return torch.randn(3, 4)
""")

program(F_, "iadd_nothing_returned", """
class Meter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))
    def forward(self, x):
        self.total += x
        self.count += 1
m = Meter()
def make(): return m
def inputs(i): return torch.randn(3)
""")

program(F_, "relu_inplace_on_argument", """
def block(x, w):
    F.relu(x, inplace=True)
    return x @ w
W = torch.randn(4, 2)
def make(): return block
def inputs(i): return (torch.randn(3, 4), W)
""")

program(F_, "torch_relu_underscore_buffer", """
class Clipper(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.randn(4))
    def forward(self, x):
        self.state.sub_(x.mean(0))
        torch.relu_(self.state)
        h = x * 2
        torch.relu_(h)
        return h + self.state
m = Clipper()
def make(): return m
def inputs(i): return torch.randn(2, 4)
""")

program(F_, "nn_init_in_forward", """
class Reinit(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.reset_bias = False
        self.fill = 0.5
    def forward(self, x):
        if self.reset_bias:
            nn.init.zeros_(self.lin.bias)
        nn.init.constant_(self.lin.weight[0], self.fill)
        return self.lin(x)
m = Reinit()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.reset_bias = True
    if i == 3: m.fill = -1.0
""")

program(F_, "out_kwarg_into_buffer", """
class OutBuf(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3, 4))
    def forward(self, x):
        torch.add(x, 1.0, out=self.buf)
        torch.mul(self.buf, 2.0, out=self.buf)
        return self.buf
m = OutBuf()
def make(): return m
def inputs(i): return torch.randn(3, 4)
""")

program(F_, "data_write_param", """
class Decay(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))
        self.decay = 0.5
    def forward(self, x):
        self.w.data = self.w.data * self.decay
        return x * self.w
m = Decay()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.decay = 0.9
""")

program(F_, "data_inplace_ema", """
class EmaStat(nn.Module):
    def __init__(self):
        super().__init__()
        self.ema = nn.Parameter(torch.zeros(4), requires_grad=False)
    def forward(self, x):
        self.ema.data.mul_(0.9).add_(0.1 * x.mean(0))
        return x - self.ema
m = EmaStat()
def make(): return m
def inputs(i): return torch.randn(5, 4)
""")

program(F_, "copy_last_input", """
class Delta(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("last", torch.zeros(4))
    def forward(self, x):
        d = x - self.last
        self.last.copy_(x)
        return d
m = Delta()
def make(): return m
def inputs(i): return torch.randn(4)
""")

program(F_, "setitem_buffer_from_sum", """
class Logger(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(5))
    def forward(self, x):
        self.buf[0] = x.sum()
        self.buf[1:4] = x[:3]
        return x * self.buf[0]
m = Logger()
def make(): return m
def inputs(i): return torch.randn(4)
""")

program(F_, "inplace_argument_returned_view", """
def normalize_(x):
    x.sub_(x.mean())
    x.div_(x.std() + 1e-5)
    return x[0]
def make(): return normalize_
def inputs(i): return torch.randn(3, 4)
""")

program(F_, "running_stats_train_eval", """
class MyNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(d))
        self.register_buffer("running_var", torch.ones(d))
        self.momentum = 0.1
    def forward(self, x):
        if self.training:
            mean, var = x.mean(0), x.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / (var + 1e-5).sqrt()
m = MyNorm(4)
def make(): return m
def inputs(i): return torch.randn(6, 4)
def step(i):
    if i == 2: m.eval()
    if i == 3: m.momentum = 0.5; m.train()
NCALLS = 5
""")

program(F_, "ema_of_parameters", """
class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)
        self.ema = nn.Linear(4, 4)
        self.decay = 0.9
    def forward(self, x):
        with torch.no_grad():
            for pe, p in zip(self.ema.parameters(), self.net.parameters()):
                pe.mul_(self.decay).add_(p, alpha=1 - self.decay)
        return self.net(x) - self.ema(x)
m = Student()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.decay = 0.5
""")

program(F_, "histogram_index_add", """
class Hist(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("counts", torch.zeros(5))
    def forward(self, idx):
        self.counts.index_add_(0, idx, torch.ones(idx.shape[0]))
        return self.counts / self.counts.sum()
m = Hist()
def make(): return m
def inputs(i): return torch.tensor([i % 5, (i + 2) % 5, 1])
""")

program(F_, "inplace_on_list_of_args", """
def bump_all(ts, k):
    for t in ts:
        t.add_(k)
    return ts[0] * 2
TS = [torch.zeros(3), torch.ones(3)]
def make(): return bump_all
def inputs(i): return (TS, float(i))
""")

program(F_, "inplace_grad_accumulation_buffer", """
class GradBank(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("bank", torch.zeros(3, 3))
        self.k = 0
    def forward(self, x):
        y = self.lin(x)
        self.bank[self.k % 3] += y.detach().mean(0)
        return y
m = GradBank()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i): m.k = i
""")

program(F_, "tensor_data_assigned_power_iteration_and_aliasing", """
# `self.u.data = l2normalize(...)` (spectral norm's power iteration on buffers), a buffer given
# data of another shape, and a buffer given the data of a tensor from outside (afterwards the
# two share memory: the caller changes that tensor in place between calls).
def l2n(v):
    return v / (v.norm() + 1e-12)
shared = torch.arange(3.0)
class SN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        g = torch.Generator().manual_seed(0)
        self.u = nn.Parameter(l2n(torch.randn(3, generator=g)), requires_grad=False)
        self.v = nn.Parameter(l2n(torch.randn(4, generator=g)), requires_grad=False)
        self.register_buffer("hist", torch.zeros(1))
        self.register_buffer("alias", torch.zeros(3))
    def forward(self, x):
        w = self.fc.weight
        self.v.data = l2n(torch.mv(w.data.t(), self.u.data))
        self.u.data = l2n(torch.mv(w.data, self.v.data))
        sigma = self.u.dot(w.mv(self.v))
        self.hist.data = torch.cat([self.hist, sigma.detach().reshape(1)])
        self.alias.data = shared
        return self.fc(x) / sigma + self.alias.sum(), self.hist.shape
m = SN()
def make(): return m
def inputs(i): return torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
def step(i):
    if i == 2:
        shared.mul_(2)
    if i % 2 == 0:
        m.hist.data = torch.zeros(1)
NCALLS = 6
def state(): return m.u.clone(), m.v.clone(), m.hist.clone(), m.alias.clone(), m.alias.data_ptr() == shared.data_ptr()
""")

program(F_, "in_place_shape_changes_of_outside_tensors", """
# In-place operators that change a tensor's shape or strides, not its values: a buffer
# transposed in place every call (it alternates), an argument unsqueezed in place (the caller
# passes the same tensor again), a buffer resized; the program returns the shapes it saw.
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.arange(6.0).reshape(2, 3))
        self.register_buffer("r", torch.zeros(2))
    def forward(self, x):
        before = tuple(self.b.shape), self.b.stride()
        self.b.t_()
        x.unsqueeze_(0)
        self.r.resize_(self.r.numel() + 1).fill_(1.0)
        return self.b.sum(0), before, x.shape, self.r.shape
m = M()
x0 = torch.ones(3)
def make(): return m
def inputs(i): return (x0,) if i < 3 else (torch.ones(2),)
def step(i):
    if i == 2:   # (the caller puts the shapes back as they were before call 0)
        x0.resize_(3)
        m.r.resize_(2)
def state(): return m.b.clone(), m.b.stride(), m.r.clone(), x0.shape
NCALLS = 5
""")
