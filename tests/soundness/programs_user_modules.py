"""Written the ways users write such code, changing outside state between calls: nn.Module hooks, parameters replaced, requires_grad toggled, state_dict, parametrizations."""
from harness import program

F_ = "user_modules"

program(F_, "forward_hook_added_then_removed_between_calls", """
EXPECT = "record"
LOG = []
NET = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
H = []
def hook(m, inp, out):
    LOG.append(round(float(out.sum()), 4))
    return out * 2
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: H.append(NET[0].register_forward_hook(hook))
    if i == 3: H.pop().remove()
def state(): return list(LOG)
NCALLS = 5
""")

program(F_, "forward_pre_hook_on_top_module_modifies_input", """
EXPECT = "record"
NET = nn.Linear(2, 2)
SC = [1.0]
def pre(m, args):
    return (args[0] * SC[0],)
NET.register_forward_pre_hook(pre)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: SC[0] = 3.0
""")

program(F_, "parameter_replaced_with_new_parameter", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.weight = nn.Parameter(torch.full((2, 2), 0.5))
def post(out, i):
    out.sum().backward()
    return NET.weight.grad.clone()
def state(): return NET.weight.grad
""")

program(F_, "parameter_data_replaced_new_shape", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
    def forward(self, x):
        return (x[: self.w.shape[0]] * self.w).sum(), self.w.shape[0]
NET = Net()
def make(): return NET
def inputs(i): return (torch.arange(5.0),)
def step(i):
    if i == 2:
        NET.w.data = torch.full((4,), 2.0)
""")

program(F_, "parameter_data_replaced_same_shape", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.weight.data = torch.full((2, 2), 3.0)
""")

program(F_, "requires_grad_toggled_between_calls", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.weight.requires_grad_(False)
    if i == 3: NET.weight.requires_grad_(True)
def post(out, i):
    return out.requires_grad, out.grad_fn is not None
NCALLS = 5
""")

program(F_, "freeze_all_then_branch_on_requires_grad", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        if self.lin.weight.requires_grad:
            return self.lin(x)
        return self.lin(x).detach() * 0
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2:
        for p in NET.parameters(): p.requires_grad = False
""")

program(F_, "load_state_dict_between_calls", """
EXPECT = "record"
NET = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
def make(): return NET
def inputs(i): return (torch.randn(4, 2),)
def step(i):
    if i == 2:
        sd = {k: v.clone() + 1 for k, v in NET.state_dict().items() if v.dtype.is_floating_point}
        NET.load_state_dict(sd, strict=False)
    if i == 3: NET.eval()
""")

program(F_, "bias_removed_between_calls", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2:
        del NET.bias
        NET.register_parameter("bias", None)
""")

program(F_, "buffer_registered_later_used_if_present", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        y = self.lin(x)
        if hasattr(self, "mask"):
            y = y * self.mask
        return y
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.register_buffer("mask", torch.tensor([1.0, 0.0]), persistent=False)
    if i == 3: NET.mask.fill_(2.0)
""")

program(F_, "weight_norm_parametrization", """
EXPECT = "record"
NET = nn.utils.parametrizations.weight_norm(nn.Linear(2, 2))
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2:
        with torch.no_grad(): NET.parametrizations.weight.original0.mul_(2)
""")

program(F_, "spectral_norm_power_iteration_in_training", """
EXPECT = "record"
NET = nn.utils.spectral_norm(nn.Linear(3, 3))
def make(): return NET
def inputs(i): return (torch.ones(1, 3),)
def step(i):
    if i == 3: NET.eval()
def state(): return NET.weight_u.clone()
NCALLS = 5
""")

program(F_, "prune_mask_changed", """
EXPECT = "record"
import torch.nn.utils.prune as prune
NET = nn.Linear(3, 3)
prune.l1_unstructured(NET, "weight", amount=0.3)
def make(): return NET
def inputs(i): return (torch.ones(1, 3),)
def step(i):
    if i == 2: NET.weight_mask.zero_()
    if i == 3: prune.remove(NET, "weight")
""")

program(F_, "module_half_between_calls", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def make(): return NET
def inputs(i): return (torch.ones(1, 2, dtype=torch.float64 if i >= 2 else torch.float32),)
def step(i):
    if i == 2: NET.double()
""")

program(F_, "submodule_swapped_for_identity", """
EXPECT = "record"
NET = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Linear(2, 2))
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET[1] = nn.Identity()
    if i == 3: NET.eval()
def state(): return torch.get_rng_state()
""")

program(F_, "hook_counter_on_child_call_count", """
EXPECT = "dynamic"
CALLS = collections.Counter()
NET = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
for _n, _m in NET.named_children():
    _m.register_forward_hook(lambda m, i, o, n=_n: CALLS.update([n]))
class Wrap(nn.Module):
    def __init__(self):
        super().__init__(); self.net = NET; self.reps = 1
    def forward(self, x):
        for _ in range(self.reps):
            x = self.net(x)
        return x
W = Wrap()
def make(): return W
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: W.reps = 2
def state(): return dict(CALLS)
""")

program(F_, "tensor_hook_registered_in_forward", """
EXPECT = "split"
GRADS = []
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = nn.Linear(2, 2); self.scale = 1.0
    def forward(self, x):
        h = self.lin(x)
        h.register_hook(lambda g: GRADS.append(g.sum().item()) or g * self.scale)
        return h.sum()
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.scale = 5.0
def post(out, i):
    NET.zero_grad()
    out.backward()
    return NET.lin.weight.grad.clone()
def state(): return list(GRADS)
""")

program(F_, "state_dict_pre_hook_and_apply_inside_call", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.a = nn.Linear(2, 2); self.b = nn.Linear(2, 2); self.k = 0.0
    def forward(self, x):
        def init(m):
            if isinstance(m, nn.Linear):
                with torch.no_grad(): m.bias.fill_(self.k)
        self.apply(init)
        return self.b(self.a(x))
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i): NET.k = float(i)
""")

program(F_, "train_eval_toggle_dropout_and_bn", """
EXPECT = "record"
NET = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Dropout(0.3))
def make(): return NET
def inputs(i): return (torch.randn(4, 3),)
def step(i):
    if i % 2 == 1: NET.eval()
    else: NET.train()
def state(): return torch.get_rng_state()
NCALLS = 5
""")

program(F_, "module_training_flag_of_child_only", """
EXPECT = "record"
NET = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
def make(): return NET
def inputs(i): return (torch.ones(2, 3),)
def step(i):
    if i == 2: NET[1].eval()
    if i == 3: NET[1].training = True
def state(): return torch.get_rng_state()
""")
