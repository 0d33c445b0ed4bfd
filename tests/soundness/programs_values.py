"""Small tensor values read into Python: .item() flags, .tolist(), a parameter read every training
step, NaN checks, int() of a counter buffer, a view changed earlier in the call."""
from harness import program

F_ = "values"

program(F_, "flag_tensor_item", """
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("flag", torch.tensor(True))
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        if self.flag.item():
            return self.lin(x)
        return x
m = Gate()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.flag.fill_(False)
""")

program(F_, "tolist_scales", """
class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scales", torch.tensor([1.0, 2.0]))
    def forward(self, x):
        s = self.scales.tolist()
        return x * s[0] + x.pow(2) * s[1]
m = Mix()
def make(): return m
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: m.scales[1] = -3.0
""")

program(F_, "parameter_read_each_train_step", """
class Temp(nn.Module):
    def __init__(self):
        super().__init__()
        self.logit_scale = nn.Parameter(torch.tensor(1.0))
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        scale = float(self.logit_scale.detach().exp().clamp(max=100))
        return self.lin(x) * scale
m = Temp()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def post(out, i):
    loss = out.pow(2).mean() + m.logit_scale
    loss.backward()
    with torch.no_grad():
        for p in m.parameters():
            p -= 0.1 * p.grad
            p.grad = None
""")

program(F_, "nan_input_guard", """
def safe_norm(x):
    if torch.isnan(x).any():
        return torch.zeros_like(x)
    return x / x.norm()
def make(): return safe_norm
def inputs(i):
    x = torch.randn(4)
    if i == 2: x[1] = float("nan")
    return x
""")

program(F_, "int_of_counter_buffer", """
class Warmup(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
    def forward(self, x):
        n = int(self.steps)
        self.steps += 1
        return x * min(1.0, (n + 1) / 4)
m = Warmup()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i % 2 == 0: m.steps.zero_()
NCALLS = 6
""")

program(F_, "view_changed_earlier_in_call", """
class Flip(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2, 2))
    def forward(self, x):
        v = self.buf[0]
        v.fill_(x.sum())
        if self.buf[0, 0] > 0:
            return x + 1
        return x - 1
m = Flip()
def make(): return m
def inputs(i): return torch.full((3,), (-1.0) ** i)
""")

program(F_, "threshold_item_clamp", """
class Clamp(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("thr", torch.tensor(0.5))
    def forward(self, x):
        return x.clamp(max=self.thr.item())
m = Clamp()
def make(): return m
def inputs(i): return torch.linspace(-1, 1, 5)
def step(i):
    if i == 2: m.thr.fill_(0.0)
""")

program(F_, "input_value_branch", """
def route(x):
    if x.max() > 0.5:
        return x * 2
    return x / 2
def make(): return route
def inputs(i): return torch.full((3,), [0.1, 0.9, 0.2, 0.8][i])
""")

program(F_, "loss_scale_skip_step", """
class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor(4.0))
        self.skipped = 0
    def forward(self, g):
        if not torch.isfinite(g).all():
            self.scale.mul_(0.5)
            self.skipped += 1
            return torch.zeros_like(g)
        return g / self.scale
m = Scaler()
def make(): return m
def inputs(i):
    g = torch.ones(3)
    if i == 1: g[0] = float("inf")
    return g
""")

program(F_, "data_dependent_init_behind_a_long_branch", """
class Actnorm(nn.Module):
    # The `if` body is long enough that its jump needs EXTENDED_ARG, which CPython 3.10/3.11
    # do not trace separately: the truth test of the buffer must still be seen and guarded.
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1, 3, 1, 1))
        self.bias = nn.Parameter(torch.zeros(1, 3, 1, 1))
        self.register_buffer("initialized", torch.tensor(0).byte())
    def forward(self, x):
        if not self.initialized:
            self.bias.squeeze().data.copy_(x.transpose(0, 1).flatten(1).mean(1)).view_as(self.scale)
            self.scale.squeeze().data.copy_(x.transpose(0, 1).flatten(1).std(1, False) + 1e-06).view_as(self.bias)
            a = x.transpose(0, 1).flatten(1).mean(1).abs().sum().neg().exp().log().sin().cos().tanh()
            b = x.transpose(0, 1).flatten(1).std(1, False).abs().sum().neg().exp().log().sin().cos()
            c = x.transpose(0, 1).flatten(1).amax(1).abs().sum().neg().exp().log().sin().cos().tanh()
            self.initialized += 1
        return (x - self.bias) / self.scale
m = Actnorm()
def make(): return m
def inputs(i): return torch.randn(4, 3, 2, 2) * (i + 1)
""")
