"""Objects made in the call as outputs: instances of user classes with slots, nested
``torch.distributions`` objects, closures and lambdas made in the call (their cells and defaults
are this call's), as user models return them, with outside state changing between calls; also
``torch.utils.checkpoint`` (the checkpointed function is what the call computes), a Parameter
made in the call, and tensors compared with None as conditions."""
from harness import program

F_ = "made_objects_and_checkpoints"

program(F_, "slotted_action_value_output", """
class ActionValue:
    __slots__ = ("action", "value", "_unset")
    def __init__(self, action, value):
        self.action = action
        self.value = value
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
    def forward(self, x):
        q = self.lin(x)
        return ActionValue(q.argmax(-1), q.max(-1).values)
m = Head()
def make(): return m
def inputs(i): return torch.randn(2, 4) * (i + 1)
def post(out, i):
    return (type(out).__name__, out.action, out.value, hasattr(out, "_unset"))
EXPECT = "record"
""")

program(F_, "slots_and_dict_subclass_output", """
class Base:
    __slots__ = ("mean",)
class Out(Base):
    pass
def f(x):
    o = Out()
    o.mean = x.mean(0)
    o.spread = x.std(0)
    return o, o
def make(): return f
def inputs(i): return torch.randn(3, 2) + i
def post(out, i):
    return (out[0] is out[1], out[0].mean, out[0].spread)
EXPECT = "record"
""")

program(F_, "independent_normal_policy", """
D = torch.distributions
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
        self.log_std = nn.Parameter(torch.zeros(2))
    def forward(self, x):
        return D.Independent(D.Normal(self.mu(x), self.log_std.exp()), 1)
m = Policy()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    with torch.no_grad():
        m.log_std.fill_(0.1 * i)
def post(out, i):
    a = torch.ones(3, 2)
    return (type(out).__name__, type(out.base_dist).__name__, out.log_prob(a), out.entropy(),
            out.batch_shape, out.event_shape, out.base_dist.scale)
EXPECT = "record"
""")

program(F_, "closure_returned_with_its_cells", """
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        h = self.lin(x)
        count = 0
        def score(y):
            nonlocal count
            count += 1
            return (h * y).sum() + count
        def peek():
            return count
        return score, peek
m = Scorer()
def make(): return m
def inputs(i): return torch.randn(2, 3) + i
def post(out, i):
    score, peek = out
    y = torch.ones(2, 3)
    return (score(y), score(y), peek(), score.__qualname__, score.__closure__[0] is peek.__closure__[0])
EXPECT = "record"
""")

program(F_, "lambda_with_default_made_in_call", """
def f(x):
    y = x * 2
    return (lambda z, y=y: z + y), (lambda z, *, k=y.sum(): z * k)
def make(): return f
def inputs(i): return torch.full((2,), float(i))
def post(out, i):
    add, mul = out
    return (add(torch.ones(2)), mul(torch.ones(2)), add is not mul)
EXPECT = "record"
""")

program(F_, "closure_over_outside_cell_and_self_reference", """
def build():
    table = {"scale": 2.0}
    def forward(x):
        y = x + 1
        def fn(n):
            return y * table["scale"] if n == 0 else fn(n - 1)
        return fn
    return forward, table
fwd, table = build()
def make(): return fwd
def inputs(i): return torch.arange(3.0) * i
def step(i):
    table["scale"] = 2.0 + (i // 2)
def post(out, i):
    table["scale"] += 1.0   # (the returned closure reads the outside cell when it is called)
    return out(2)
EXPECT = "record"
""")

program(F_, "kl_divergence_of_distributions_made_in_the_call", """
D = torch.distributions
class Tempered(D.Normal):
    pass
def kl_plain(p, q):
    return D.kl._kl_normal_normal(p, q)
def kl_doubled(p, q):
    return 2 * D.kl._kl_normal_normal(p, q)
D.register_kl(Tempered, D.Normal)(kl_plain)
class VAEHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 6)
    def forward(self, x):
        mu, log_var = self.enc(x).chunk(2, -1)
        q = Tempered(mu, (0.5 * log_var).exp())
        prior = D.Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl = D.kl_divergence(q, prior).sum(-1)
        return q.rsample() + kl[:, None], kl
m = VAEHead()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    torch.manual_seed(i)
    if i == 3:   # (a new registration clears torch's memo of the pair's function)
        D.register_kl(Tempered, D.Normal)(kl_doubled)
NCALLS = 6
EXPECT = "record"   # (a first call finds the pair's function in torch's registry: that run breaks)
""")

# -- torch.utils.checkpoint: the checkpointed function is what the call computes ---------------------

program(F_, "checkpoint_method_in_inference", """
from torch.utils.checkpoint import checkpoint
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.calls = 0
    def inner(self, x, scale):
        self.calls += 1
        return self.b(torch.relu(self.a(x))) * scale
    def forward(self, x):
        return checkpoint(self.inner, x, 2.0, use_reentrant=False) + x
m = Block()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def context(i): return torch.no_grad()
EXPECT = "record"
""")

program(F_, "checkpoint_non_reentrant_gradients", """
from torch.utils.checkpoint import checkpoint
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 6)
        self.block = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.3), nn.GELU(), nn.Linear(6, 6))
        self.head = nn.Linear(6, 2)
    def forward(self, x):
        h = self.stem(x)
        h = checkpoint(self.block, h, use_reentrant=False)
        return self.head(h)
torch.manual_seed(0)
m = Net()
def make(): return m
def inputs(i): return torch.randn(5, 4)
def step(i):
    m.zero_grad()
    torch.manual_seed(i)
def post(out, i):
    out.square().sum().backward()
    return [p.grad.clone() for p in m.parameters()]
EXPECT = "record"
""")

program(F_, "checkpoint_reentrant_with_input_grad", """
from torch.utils.checkpoint import checkpoint
lin = nn.Linear(3, 3)
def body(a, b):
    return torch.tanh(lin(a)) * b
def f(x, y):
    return checkpoint(body, x, y, use_reentrant=True).sum(0)
def make(): return f
def inputs(i):
    return (torch.randn(4, 3, requires_grad=True), torch.randn(4, 3))
def post(out, i):
    out.sum().backward()
    g = lin.weight.grad.clone()
    lin.weight.grad = None
    return g
EXPECT = "record"
""")

program(F_, "checkpoint_sequential_segments", """
from torch.utils.checkpoint import checkpoint_sequential
seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4), nn.Sigmoid())
class Wrap(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = seq
        self.segments = 3
    def forward(self, x):
        return checkpoint_sequential(self.seq, self.segments, x, use_reentrant=False)
m = Wrap()
def make(): return m
def inputs(i): return torch.randn(2, 4, requires_grad=True)
def step(i):
    m.zero_grad()
def post(out, i):
    out.sum().backward()
    return seq[0].weight.grad.clone()
EXPECT = "record"
""")

program(F_, "checkpoint_reentrant_without_input_grad_is_a_break", """
from torch.utils.checkpoint import checkpoint
lin = nn.Linear(3, 3)
def f(x):
    return checkpoint(lin, x, use_reentrant=True)
def make(): return f
def inputs(i): return torch.randn(2, 3)
def post(out, i):
    return out.requires_grad
EXPECT = "split"   # (the checkpoint call runs eagerly, the rest is a record)
""")

# -- a Parameter made in the call -----------------------------------------------------------------

program(F_, "parameter_from_init_helper_in_forward", """
class Adapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def make_weight(self, n):
        return nn.Parameter(torch.eye(n) * 0.5)
    def forward(self, x):
        w = self.make_weight(x.shape[1])
        y = self.lin(x) @ w
        return y, w
m = Adapter()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def post(out, i):
    y, w = out
    y.sum().backward()
    return (type(w).__name__, w.is_leaf, w.requires_grad, w.grad)
EXPECT = "record"
""")

# -- comparisons on tensors used as conditions ----------------------------------------------------

program(F_, "tensor_compared_with_none_as_a_condition", """
class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x, mask):
        y = self.lin(x)
        if mask == None:
            return y
        if mask != None:
            y = y * mask
        return y
m = Masked()
def make(): return m
def inputs(i): return (torch.randn(2, 3), None if i == 2 else torch.rand(2, 3))
EXPECT = "record"
""")
