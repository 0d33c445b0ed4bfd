"""Branches on tensor values (magpy.branches turns a branch whose two sides earlier runs have seen
into one conditional node): state that only one side reads, changed between calls after both
sides have run; tensors passed through by one side that something else still holds; sides that
leave other Python values; modes and dtypes that change between calls."""
from harness import program

F_ = "branches"

# calls 0 and 1 take the two sides; later calls change what only one side reads (under no_grad,
# as inference runs: with gradients a side with parameters and one without leave tensors that
# differ in requires_grad, and are not merged)
_SIGNS = """
def context(i):
    return torch.no_grad()
def inputs(i):
    g = torch.Generator().manual_seed(i)
    s = 1.0 if i % 2 == 0 else -1.0
    return (torch.rand(2, 4, generator=g) + 0.1) * s,
"""

program(F_, "gated_blocks_block_swapped_after_both_sides", """
class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
    def forward(self, x, gate):
        x = self.stem(x)
        for b in range(2):
            residual = x
            if gate[b].sum() == 0:
                x = residual
                continue
            x = torch.relu(self.blocks[b](x)) + residual
        return x
m = Gated()
spare = nn.Linear(4, 4)
def make(): return m
def context(i):
    return torch.no_grad()
def inputs(i):
    gates = [[1, 1], [0, 0], [1, 0], [0, 1], [1, 1], [0, 1]]
    return torch.ones(2, 4) * (i + 1), torch.tensor(gates[i])
def step(i):
    if i == 4:
        m.blocks[0] = spare
NCALLS = 6
""")

program(F_, "side_reads_a_global_config_changed_between_calls", """
CFG = {"gain": 2.0}
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
    def forward(self, x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = self.a(h) * CFG["gain"]
        else:
            h = h - 1
        return h
m = M()
def make(): return m
""" + _SIGNS + """
def step(i):
    if i == 4:
        CFG["gain"] = 5.0
NCALLS = 6
""")

program(F_, "side_reads_a_closure_cell_changed_between_calls", """
def factory():
    k = 2.0
    lin = nn.Linear(4, 4)
    def f(x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = lin(h) * k
        else:
            h = h * 0.5
        return h
    def set_k(v):
        nonlocal k
        k = v
    return f, set_k
f, set_k = factory()
def make(): return f
""" + _SIGNS + """
def step(i):
    if i == 3:
        set_k(-3.0)
NCALLS = 6
""")

program(F_, "side_calls_a_method_whose_class_attribute_changes", """
class Block(nn.Module):
    scale = 1.0
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x) * self.scale
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
    def forward(self, x):
        h = torch.tanh(x)
        if h.mean() > 0:
            h = self.block(h)
        return h + 1
m = M()
def make(): return m
""" + _SIGNS + """
def step(i):
    if i == 4:
        Block.scale = 4.0
NCALLS = 6
""")

program(F_, "side_with_dropout_under_train_eval_switch", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.0)
    def forward(self, x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = self.drop(self.lin(h))
            if self.training:
                h = h * 3
        else:
            h = -h
        return h
m = M()
def make(): return m
""" + _SIGNS + """
def step(i):
    if i == 2:
        m.eval()
    if i == 4:
        m.train()
NCALLS = 6
""")

program(F_, "pass_through_held_by_the_caller_identity_returned", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
    def step(self, x):
        if x.sum() > 0:
            x = self.a(x)
        return x
    def forward(self, inp):
        h = torch.tanh(inp)
        out = self.step(h)
        return out * 1, out is h, h + 1
m = M()
def make(): return m
""" + _SIGNS + """
NCALLS = 6
""")

program(F_, "pass_through_kept_in_a_list_of_the_frame", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
    def forward(self, inp):
        x = torch.tanh(inp)
        trail = [x]
        if x.sum() > 0:
            x = self.a(x)
        trail.append(x)
        return torch.stack(trail), trail[0] is trail[1]
m = M()
def make(): return m
""" + _SIGNS + """
NCALLS = 6
""")

program(F_, "sides_leave_different_python_values", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
    def forward(self, x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = self.a(h)
            tag = "pos"
        else:
            tag = "neg"
        return h * (2 if tag == "pos" else 3), tag
m = M()
def make(): return m
""" + _SIGNS + """
NCALLS = 6
""")

program(F_, "grad_mode_switched_between_calls", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
    def forward(self, x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = self.a(h)
        else:
            h = h * 2
        return h
m = M()
def make(): return m
""" + _SIGNS.replace("return torch.no_grad()", "return torch.no_grad() if i in (2, 3, 4, 5) else contextlib.nullcontext()") + """
NCALLS = 6
""")

program(F_, "dtype_of_the_input_changes_between_calls", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
    def forward(self, x):
        h = torch.tanh(x)
        if h.sum() > 0:
            h = h @ self.w.to(h.dtype)
        else:
            h = h.double() * 2
        return h
m = M()
def make(): return m
def context(i):
    return torch.no_grad()
def inputs(i):
    s = 1.0 if i % 2 == 0 else -1.0
    dt = torch.float32 if i < 2 else torch.float64
    return (torch.ones(2, 4, dtype=dt) * s * (i + 1),)
NCALLS = 6
""")

program(F_, "side_reads_a_default_argument_changed_between_calls", """
lin = nn.Linear(4, 4)
def helper(h, k=2.0):
    if h.sum() > 0:
        h = lin(h) * k
    return h
def f(x):
    return helper(torch.tanh(x)) + 1
def make(): return f
""" + _SIGNS + """
def step(i):
    if i == 4:
        helper.__defaults__ = (7.0,)
NCALLS = 6
""")

program(F_, "branch_inside_a_loop_with_a_counter_in_the_frame", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        used = 0
        for i, lin in enumerate(self.lins):
            if gate[i] > 0:
                x = torch.tanh(lin(x))
                used += 1
        return x, used
m = M()
def make(): return m
def context(i):
    return torch.no_grad()
def inputs(i):
    gates = [[1, 1, 1], [0, 0, 0], [1, 0, 1], [0, 1, 0], [1, 1, 0]]
    return torch.ones(2, 4) * (i + 1), torch.tensor(gates[i % 5])
NCALLS = 8
""")

_SKIPBLOCK = """
class SkipBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Linear(4, 4)
    def forward(self, x, gate):
        if gate.sum() == 0:
            return x
        return x + torch.tanh(self.f(x))
def context(i):
    return torch.no_grad()
def inputs(i):
    gates = [[1, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 1]]
    return torch.ones(2, 4) * (i + 1), torch.tensor(gates[i])
NCALLS = 6
"""

program(F_, "skipped_block_returns_its_input_caller_moves_on", _SKIPBLOCK + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([SkipBlock(), SkipBlock()])
    def forward(self, x, gates):
        x = self.stem(x)
        for i, b in enumerate(self.blocks):
            x = b(x, gates[i])
        return x
m = Net()
def make(): return m
""")

program(F_, "skipped_block_returns_its_input_caller_keeps_it", _SKIPBLOCK + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([SkipBlock(), SkipBlock()])
    def forward(self, x, gates):
        x = self.stem(x)
        seen = [x]
        same = []
        for i, b in enumerate(self.blocks):
            y = b(x, gates[i])
            same.append(y is x)
            seen.append(y)
            x = y
        return torch.stack(seen), same, seen[0] is seen[-1]
m = Net()
def make(): return m
""")

program(F_, "skipped_block_input_also_on_the_callers_stack", _SKIPBLOCK + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.b = SkipBlock()
    def forward(self, x, gates):
        h = self.stem(x)
        return torch.add(h, self.b(h, gates[0])), (h, self.b(h, gates[1]))
m = Net()
def make(): return m
""")
