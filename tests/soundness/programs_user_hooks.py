"""Written the ways users write such code, changing outside state between calls: hooks that run later (backward, grad accumulation), checkpointing, contexts around the call."""
from harness import program

F_ = "user_hooks"

program(F_, "post_accumulate_grad_hook_registered_between_calls", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
SEEN = []
H = []
def train(x):
    NET.zero_grad()
    loss = NET(x).sum()
    loss.backward()
    return loss.detach()
def make(): return train
def inputs(i): return (torch.ones(1, 2) * i,)
def step(i):
    if i == 2: H.append(NET.weight.register_post_accumulate_grad_hook(lambda p: SEEN.append(p.grad.sum().item())))
    if i == 3: H.pop().remove()
def state(): return list(SEEN)
NCALLS = 5
""")

program(F_, "full_backward_hook_added_between_calls", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
NET = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
GR = []
H = []
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    NET.zero_grad()
    if i == 2: H.append(NET[0].register_full_backward_hook(lambda m, gi, go: GR.append(go[0].sum().item())))
    if i == 3: H.pop().remove()
def post(out, i):
    out.sum().backward()
    return NET[0].weight.grad.clone()
def state(): return list(GR)
NCALLS = 5
""")

program(F_, "global_forward_hook_registered_between_calls", """
EXPECT = "record"
NET = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
SEEN = []
H = []
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: H.append(nn.modules.module.register_module_forward_hook(lambda m, a, o: SEEN.append(type(m).__name__)))
    if i == 3: H.pop().remove()
def state(): return list(SEEN)
NCALLS = 5
""")

program(F_, "checkpoint_with_dropout_backward_matches", """
EXPECT = "record"
import torch.utils.checkpoint as cp
BLOCK = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.Linear(3, 3))
def f(x):
    return cp.checkpoint(BLOCK, x, use_reentrant=False).sum()
def make(): return f
def inputs(i): return (torch.ones(2, 3, requires_grad=True),)
def step(i): BLOCK.zero_grad()
def post(out, i):
    out.backward()
    return BLOCK[0].weight.grad.clone()
def state(): return torch.get_rng_state()
""")

program(F_, "saved_tensors_hooks_context_around_some_calls", """
EXPECT = "record"
PACKED = []
W = torch.ones(3, requires_grad=True)
def f(x):
    return (torch.sin(x * W)).sum()
def make(): return f
def inputs(i): return (torch.ones(3),)
def context(i):
    if i in (2, 3):
        return torch.autograd.graph.saved_tensors_hooks(lambda t: (PACKED.append(1), t)[1], lambda t: t)
    return contextlib.nullcontext()
def step(i): W.grad = None
def post(out, i):
    out.backward()
    return W.grad.clone()
def state(): return len(PACKED)
NCALLS = 5
""")

program(F_, "no_grad_context_around_some_calls", """
EXPECT = "record"
NET = nn.Linear(2, 2)
CACHE = {}
def f(x):
    y = NET(x)
    CACHE["last"] = y
    return y
def make(): return f
def inputs(i): return (torch.ones(1, 2),)
def context(i):
    return torch.no_grad() if i in (2, 3) else contextlib.nullcontext()
def post(out, i): return out.requires_grad, CACHE["last"].requires_grad
NCALLS = 5
""")

program(F_, "forward_hook_with_kwargs_always_called", """
EXPECT = "record"
LOG = []
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = nn.Linear(2, 2)
    def forward(self, x, scale=1.0):
        return self.lin(x) * scale
NET = Net()
NET.register_forward_hook(lambda m, a, kw, o: LOG.append(kw.get("scale")), with_kwargs=True, always_call=True)
def f(x, s):
    return NET(x, scale=s)
def make(): return f
def inputs(i): return (torch.ones(1, 2), float(1 + i // 2))
def state(): return list(LOG)
""")

program(F_, "hook_mutates_module_counter_attribute", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = nn.Linear(2, 2); self.calls = 0
    def forward(self, x):
        return self.lin(x) * (1 + self.calls)
NET = Net()
def pre(m, args):
    m.calls += 1
NET.lin.register_forward_pre_hook(lambda m, a: setattr(NET, "calls", NET.calls + 1))
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
""")

program(F_, "grad_hook_on_parameter_scales_gradient_changed", """
EXPECT = "dynamic"
NET = nn.Linear(2, 1)
SCALE = [1.0]
NET.weight.register_hook(lambda g: g * SCALE[0])
def train(x):
    NET.zero_grad()
    NET(x).sum().backward()
    return NET.weight.grad.clone()
def make(): return train
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: SCALE[0] = 10.0
""")

program(F_, "anomaly_detect_context_around_call", """
EXPECT = "record"
W = torch.ones(2, requires_grad=True)
def f(x): return (W * x).sum()
def make(): return f
def inputs(i): return (torch.ones(2),)
def context(i):
    return torch.autograd.detect_anomaly(check_nan=True) if i == 2 else contextlib.nullcontext()
def step(i): W.grad = None
def post(out, i):
    out.backward(); return W.grad.clone()
""")
