"""Custom torch.autograd.Function: straight-through estimators, gradient reversal, functions with
non-tensor arguments read from outside state; gradients compared after backward. With gradients
the graph calls the class's ``apply`` (its own backward runs); a forward that changes outside
state runs eagerly."""
from harness import program

F_ = "autograd"

program(F_, "straight_through_round", """
EXPECT = "record"   # (the graph calls apply: the class's own backward runs)
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()
    @staticmethod
    def backward(ctx, g):
        return g
class Quant(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.levels = 4.0
    def forward(self, x):
        h = self.lin(x) * self.levels
        return RoundSTE.apply(h) / self.levels
m = Quant()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.levels = 16.0
def post(out, i):
    out.pow(2).sum().backward()
    g = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    return g
""")

program(F_, "gradient_reversal_alpha", """
EXPECT = "dynamic"
class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)
    @staticmethod
    def backward(ctx, g):
        return -ctx.alpha * g, None
class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Linear(4, 4)
        self.dom = nn.Linear(4, 1)
        self.alpha = 0.1
    def forward(self, x):
        f = self.feat(x)
        return self.dom(GradReverse.apply(f, self.alpha))
m = DANN()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i): m.alpha = 0.1 * (i + 1)
def post(out, i):
    out.sum().backward()
    g = m.feat.weight.grad.clone()
    m.zero_grad()
    return g
""")

program(F_, "ste_sign_with_saved_tensor", """
EXPECT = "record"   # (the graph calls apply: the class's own backward runs)
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)
W = torch.randn(4, requires_grad=True)
def binarize(x):
    return SignSTE.apply(x * W)
def make(): return binarize
def inputs(i): return torch.randn(4) * 2
def post(out, i):
    out.sum().backward()
    g = W.grad.clone()
    W.grad = None
    return g
""")

program(F_, "function_reads_global_in_backward", """
EXPECT = "record"   # (the graph calls apply: the class's backward runs, reading what it reads then)
GRAD_SCALE = 1.0
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0
    @staticmethod
    def backward(ctx, g):
        return g * GRAD_SCALE
W = torch.ones(3, requires_grad=True)
def f(x):
    return Scale.apply(W * x).sum()
def make(): return f
def inputs(i): return torch.arange(3.0)
def step(i):
    global GRAD_SCALE
    GRAD_SCALE = float(i + 1)
def post(out, i):
    out.backward()
    g = W.grad.clone()
    W.grad = None
    return g
""")

program(F_, "function_multiple_outputs", """
EXPECT = "record"   # (the graph calls apply: the class's own backward runs)
class SplitGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, ga, gb):
        return ga + gb
P = nn.Parameter(torch.randn(3))
def f(x):
    a, b = SplitGrad.apply(P + x)
    return a.sum() + b.prod()
def make(): return f
def inputs(i): return torch.randn(3)
def post(out, i):
    out.backward()
    g = P.grad.clone()
    P.grad = None
    return g
""")

program(F_, "ste_in_training_only", """
EXPECT = "record"   # (the graph calls apply: the class's own backward runs)
class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)
    @staticmethod
    def backward(ctx, g):
        return g, None, None
class Act(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.hi = 0.5
    def forward(self, x):
        h = self.lin(x)
        if self.training:
            return Clip.apply(h, -self.hi, self.hi)
        return h.clamp(-self.hi, self.hi)
m = Act()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.hi = 0.1
    if i == 3: m.eval()
def post(out, i):
    out.sum().backward()
    g = m.lin.weight.grad.clone()
    m.zero_grad()
    return g
""")

program(F_, "detach_trick_ste", """
class Quant(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))
    def forward(self, x):
        wq = self.w + (self.w.round() - self.w).detach()
        return (x * wq).sum()
m = Quant()
def make(): return m
def inputs(i): return torch.randn(4)
def post(out, i):
    out.backward()
    g = m.w.grad.clone()
    m.w.grad = None
    return g
""")

program(F_, "grad_accumulates_in_param_between_calls", """
m = nn.Linear(3, 1)
def make(): return m
def inputs(i): return torch.randn(2, 3)
def post(out, i):
    out.sum().backward()       # no zero_grad: grads accumulate across calls
    return m.weight.grad.clone()
""")

program(F_, "leaf_made_in_the_call_gets_requires_grad", """
class Lego(nn.Module):
    def __init__(self):
        super().__init__()
        self.aux = nn.Parameter(torch.randn(2, 3, 4))
        self.coef = nn.Parameter(torch.randn(2, 3, 4))
    def forward(self, x):
        self.proxy = torch.zeros(self.aux.size())
        self.proxy.scatter_(2, self.aux.argmax(dim=2, keepdim=True), 1)
        self.proxy.requires_grad = True
        return x @ (self.coef * self.proxy).sum(0).t()
m = Lego()
def make(): return m
def inputs(i): return torch.randn(5, 4)
def post(out, i):
    out.sum().backward()
    g = (m.proxy.grad.clone(), m.coef.grad.clone())
    m.coef.grad = None
    return g
""")

program(F_, "function_forward_counts_calls_in_a_global", """
# forward changes outside state: a graph calling apply would run it again on every call, beside
# the mock's replay: the call runs eagerly.
EXPECT = "dynamic"
CALLS = [0]
class Counted(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        CALLS[0] += 1
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
W = nn.Parameter(torch.randn(3))
def f(x):
    return Counted.apply(W * x).sum()
def make(): return f
def inputs(i): return torch.randn(3)
def post(out, i):
    out.backward()
    g = W.grad.clone()
    W.grad = None
    return g, CALLS[0]
""")

program(F_, "function_backward_replaced_between_calls", """
# The class's backward (and forward) are guarded: replacing one makes the next call a miss.
EXPECT = "record"
class Surrogate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x > 0).to(x.dtype)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (1 + x.abs()) ** 2
def sigmoid_surrogate(ctx, g):
    x, = ctx.saved_tensors
    s = torch.sigmoid(4 * x)
    return g * 4 * s * (1 - s)
lin = nn.Linear(3, 3)
def f(x):
    return Surrogate.apply(lin(x)).sum()
def make(): return f
def inputs(i): return torch.randn(2, 3)
NCALLS = 6
def step(i):
    if i == 3: Surrogate.backward = staticmethod(sigmoid_surrogate)
def post(out, i):
    out.backward()
    g = lin.weight.grad.clone()
    lin.zero_grad()
    return g
""")

program(F_, "function_forward_reads_a_global_that_changes", """
# What forward reads is guarded (it runs monitored): a changed global makes the call a miss.
EXPECT = "record"
SHIFT = 0.5
class Shifted(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + SHIFT
    @staticmethod
    def backward(ctx, g):
        return g
W = nn.Parameter(torch.randn(3))
def f(x):
    return Shifted.apply(W * x).pow(2).sum()
def make(): return f
def inputs(i): return torch.randn(3)
NCALLS = 5
def step(i):
    global SHIFT
    if i == 3: SHIFT = -2.0
def post(out, i):
    out.backward()
    g = W.grad.clone()
    W.grad = None
    return g
""")

program(F_, "function_changes_its_input_in_place", """
# forward changes its input in place (mark_dirty): the graph would not call apply beside the
# recorded change; the call runs eagerly.
EXPECT = "dynamic"
class ReluInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        x.clamp_(min=0)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (x > 0).to(g.dtype)
lin = nn.Linear(3, 3)
def f(x):
    return ReluInplace.apply(lin(x) * 1.0).sum()
def make(): return f
def inputs(i): return torch.randn(2, 3)
def post(out, i):
    out.backward()
    g = lin.weight.grad.clone()
    lin.zero_grad()
    return g
""")

program(F_, "function_with_a_scale_from_a_module_attribute", """
# A non-tensor argument read from outside state, changed between calls: a constant of the graph's
# apply call, guarded where it was read.
EXPECT = "record"
class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.s = 0.5
    def forward(self, x):
        return ScaleGrad.apply(self.lin(x), self.s)
m = M()
def make(): return m
def inputs(i): return torch.randn(2, 3)
NCALLS = 5
def step(i):
    if i == 3: m.s = 3.0
def post(out, i):
    out.sum().backward()
    g = m.lin.weight.grad.clone()
    m.zero_grad()
    return g
""")

program(F_, "function_keeps_a_list_argument_that_changes_before_backward", """
# the graph passes the program's own list: backward reads it as it is then
EXPECT = "record"
CFG = [1.0]
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cfg):
        ctx.cfg = cfg
        return x * 1.0
    @staticmethod
    def backward(ctx, g):
        return g * ctx.cfg[0], None
W = nn.Parameter(torch.ones(3))
def f(x):
    return Scale.apply(W * x, CFG)
def make(): return f
def inputs(i): return torch.arange(3.0) + 1
NCALLS = 5
def step(i): CFG[0] = 1.0
def post(out, i):
    CFG[0] = float(i + 5)
    out.sum().backward()
    g = W.grad.clone(); W.grad = None
    return g
""")

program(F_, "function_backward_appends_to_a_list_argument", """
# the graph passes the program's own list, which backward changes
EXPECT = "record"
STATS = []
LOG = []
class Track(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, stats):
        ctx.stats = stats
        return x * 1.0
    @staticmethod
    def backward(ctx, g):
        ctx.stats.append(float(g.sum()))
        return g, None
W = nn.Parameter(torch.ones(3))
def f(x):
    return Track.apply(W * x, STATS)
def make(): return f
def inputs(i): return torch.arange(3.0) + i
NCALLS = 4
def post(out, i):
    (out * 2).sum().backward()
    g = W.grad.clone(); W.grad = None
    LOG.append(list(STATS))
    STATS.clear()
    return g
""")

program(F_, "function_backward_writes_a_dict_argument", """
# the graph passes the program's own dict, which backward changes
EXPECT = "record"
STATS = {}
LOG = []
class Track(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, stats):
        ctx.stats = stats
        return x * 1.0
    @staticmethod
    def backward(ctx, g):
        ctx.stats["g"] = float(g.sum())
        return g, None
W = nn.Parameter(torch.ones(3))
def f(x):
    return Track.apply(W * x, STATS)
def make(): return f
def inputs(i): return torch.arange(3.0) + i
NCALLS = 4
def post(out, i):
    (out * 2).sum().backward()
    g = W.grad.clone(); W.grad = None
    LOG.append(dict(STATS))
    STATS.clear()
    return g
""")

program(F_, "function_reads_a_config_dict_in_forward_and_backward", """
# A config dict from outside handed to the Function (YOSO's lsh_config): forward's read of it is
# guarded, backward reads the live dict; both keys change between calls.
EXPECT = "record"
CONF = {"scale": 2.0, "grad": 1.0}
class Cumulate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, conf):
        ctx.conf = conf
        return x * conf["scale"]
    @staticmethod
    def backward(ctx, g):
        return g * ctx.conf["grad"], None
W = nn.Parameter(torch.ones(3))
def f(x):
    return Cumulate.apply(W * x, CONF).sum()
def make(): return f
def inputs(i): return torch.arange(3.0) + i
NCALLS = 6
def step(i):
    if i == 2: CONF["grad"] = -3.0
    if i == 4: CONF["scale"] = 0.5
def post(out, i):
    out.backward()
    g = W.grad.clone()
    W.grad = None
    return g
""")

program(F_, "function_given_a_config_object_made_in_the_call", """
# An object made in the call, kept on ctx: no source to pass the graph, the call runs eagerly.
EXPECT = "dynamic"
EXPECT_BY_TORCH = {"2.14": "split"}   # (apply is C there: the call splits at it)
class Opts:
    def __init__(self, k): self.k = k
class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, opts):
        ctx.opts = opts
        return x * opts.k
    @staticmethod
    def backward(ctx, g):
        return g * ctx.opts.k, None
W = nn.Parameter(torch.ones(3))
def f(x):
    return Scaled.apply(W * x, Opts(1.5)).sum()
def make(): return f
def inputs(i): return torch.arange(3.0)
def post(out, i):
    out.backward()
    g = W.grad.clone()
    W.grad = None
    return g
""")
