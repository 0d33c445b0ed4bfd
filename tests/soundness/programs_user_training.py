"""Written the ways users write such code, changing outside state between calls: training steps compiled whole: optimizers, schedulers, grad clipping, custom Functions."""
from harness import program

F_ = "user_training"

program(F_, "sgd_step_inside_call_lr_changed_by_scheduler", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
OPT = torch.optim.SGD(NET.parameters(), lr=0.1, momentum=0.9)
SCHED = torch.optim.lr_scheduler.StepLR(OPT, step_size=2, gamma=0.5)
def train_step(x, y):
    OPT.zero_grad()
    loss = F.mse_loss(NET(x), y)
    loss.backward()
    OPT.step()
    return loss.detach()
def make(): return train_step
def inputs(i): return (torch.ones(3, 2), torch.zeros(3, 1))
def step(i):
    if i > 0: SCHED.step()
def state(): return OPT.state_dict()["param_groups"][0]["lr"], [s["momentum_buffer"] for s in OPT.state.values()]
NCALLS = 6
""")

program(F_, "adam_step_counts_in_state", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
OPT = torch.optim.Adam(NET.parameters(), lr=0.01)
def train_step(x, y):
    loss = F.mse_loss(NET(x), y)
    OPT.zero_grad(set_to_none=True)
    loss.backward()
    OPT.step()
    return loss.detach()
def make(): return train_step
def inputs(i): return (torch.ones(3, 2), torch.zeros(3, 1))
def step(i):
    if i == 3: OPT.param_groups[0]["lr"] = 0.5
def state(): return [dict(s) for s in OPT.state.values()]
NCALLS = 5
""")

program(F_, "grad_clip_norm_returned_and_logged", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
NORMS = []
MAXN = [10.0]
def train_step(x):
    NET.zero_grad()
    loss = NET(x).pow(2).sum()
    loss.backward()
    n = nn.utils.clip_grad_norm_(NET.parameters(), MAXN[0])
    NORMS.append(float(n))
    return loss.detach()
def make(): return train_step
def inputs(i): return (torch.ones(3, 2) * (i + 1),)
def step(i):
    if i == 2: MAXN[0] = 0.1
def state(): return list(NORMS), [p.grad for p in NET.parameters()]
""")

program(F_, "grad_accumulation_every_k_calls", """
EXPECT = "split"
NET = nn.Linear(2, 1)
OPT = torch.optim.SGD(NET.parameters(), lr=0.1)
STEP = [0]
def train_step(x):
    loss = NET(x).sum() / 2
    loss.backward()
    STEP[0] += 1
    if STEP[0] % 2 == 0:
        OPT.step(); OPT.zero_grad()
    return loss.detach()
def make(): return train_step
def inputs(i): return (torch.ones(1, 2),)
NCALLS = 6
""")

program(F_, "custom_function_backward_reads_global", """
EXPECT = "record"
GSCALE = [1.0]
class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g * GSCALE[0]
W = torch.ones(2, requires_grad=True)
def f(x):
    return ScaleGrad.apply(x * W).sum()
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    W.grad = None
    if i == 2: GSCALE[0] = 10.0
def post(out, i):
    out.backward()
    return W.grad.clone()
""")

program(F_, "custom_function_forward_branches_on_attribute", """
EXPECT = "record"
class Clip(torch.autograd.Function):
    lo = 0.0
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=Clip.lo)
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x >= Clip.lo)
W = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
def f(x):
    return Clip.apply(W * x)
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    W.grad = None
    if i == 2: Clip.lo = 1.0
def post(out, i):
    out.sum().backward()
    return W.grad.clone()
""")

program(F_, "custom_function_needs_input_grad_branch", """
EXPECT = "record"
CALLED = []
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        CALLED.append(ctx.needs_input_grad)
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb
A = torch.ones(2, requires_grad=True)
B = torch.full((2,), 2.0, requires_grad=True)
def f(x):
    return Mul.apply(A * x, B).sum()
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    A.grad = None; B.grad = None
    if i == 2: B.requires_grad_(False)
def post(out, i):
    out.backward()
    return A.grad.clone()
def state(): return list(CALLED)
""")

program(F_, "autograd_grad_inside_call_create_graph", """
EXPECT = "record"
W = torch.tensor([1.0, 2.0], requires_grad=True)
ORDER = [2]
def f(x):
    y = (W * x).pow(ORDER[0]).sum()
    (g,) = torch.autograd.grad(y, W, create_graph=True)
    return g.sum()
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    W.grad = None
    if i == 2: ORDER[0] = 3
def post(out, i):
    out.backward()
    return W.grad.clone()
""")

program(F_, "retain_grad_intermediate_returned", """
EXPECT = "split"
NET = nn.Linear(2, 2)
def f(x):
    h = NET(x)
    h.retain_grad()
    return h, h.relu().sum()
def make(): return f
def inputs(i): return (torch.ones(1, 2) * (i - 1),)
def post(out, i):
    out[1].backward()
    return out[0].grad
""")

program(F_, "backward_inside_call_accumulates", """
EXPECT = "split"
NET = nn.Linear(2, 1)
def f(x):
    loss = NET(x).sum()
    loss.backward()
    return loss.detach()
def make(): return f
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.zero_grad(set_to_none=False)
    if i == 3: NET.weight.grad = None
""")

program(F_, "ema_model_update_with_decay_schedule", """
EXPECT = "record"
NET = nn.Linear(2, 2)
EMA = nn.Linear(2, 2)
STEPS = [0]
def update(x):
    STEPS[0] += 1
    d = min(0.99, (1 + STEPS[0]) / (10 + STEPS[0]))
    with torch.no_grad():
        for pe, p in zip(EMA.parameters(), NET.parameters()):
            pe.mul_(d).add_(p, alpha=1 - d)
    return EMA(x)
def make(): return update
def inputs(i): return (torch.ones(1, 2),)
NCALLS = 5
""")

program(F_, "loss_scaler_skip_step_on_inf", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
OPT = torch.optim.SGD(NET.parameters(), lr=0.1)
SCALER = {"scale": 4.0, "skipped": 0}
def train_step(x):
    OPT.zero_grad()
    loss = NET(x).sum() * SCALER["scale"]
    loss.backward()
    found_inf = any(not torch.isfinite(p.grad).all() for p in NET.parameters())
    if found_inf:
        SCALER["scale"] /= 2; SCALER["skipped"] += 1
    else:
        for p in NET.parameters(): p.grad.div_(SCALER["scale"])
        OPT.step()
    return loss.detach()
def make(): return train_step
def inputs(i): return (torch.full((1, 2), float("inf")) if i == 2 else torch.ones(1, 2),)
NCALLS = 5
""")

program(F_, "params_frozen_by_name_pattern", """
EXPECT = "dynamic"
NET = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
OPT = torch.optim.SGD(NET.parameters(), lr=0.5)
FROZEN = ["0."]
def train_step(x):
    for n, p in NET.named_parameters():
        p.requires_grad_(not any(n.startswith(fz) for fz in FROZEN))
    OPT.zero_grad()
    NET(x).sum().backward()
    OPT.step()
    return NET(x).detach()
def make(): return train_step
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: FROZEN[:] = ["1."]
""")
