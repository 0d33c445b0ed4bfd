"""Branches on tensor values whose one side passes an *argument* through (``if gate: x = x +
blk(x)`` on the first block, where ``x`` is still what the caller passed): the caller holds the
tensor too, and so may something else the program reaches after the branch (an attribute, a list
made before it), or the result (the argument itself, when every block is skipped)."""
from harness import program

F_ = "branch_arguments"

_GATES = """
def context(i):
    return torch.no_grad()
GATES = [(1, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 0), (0, 0, 0), (1, 1, 1), (0, 1, 1), (0, 0, 0)]
NCALLS = len(GATES)
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(2, 4, generator=g), torch.tensor(GATES[i], dtype=torch.float32)
"""

program(F_, "skipped_blocks_pass_the_argument_through", _GATES + """
EXPECT = "record"
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        for i, blk in enumerate(self.blocks):
            if gate[i] > 0.5:
                x = x + blk(x)
        return x
m = Drop()
def make(): return m
def invoke(f, i):
    x, gate = inputs(i)
    out = f(x, gate)
    return out, out is x
""")

program(F_, "argument_also_held_by_an_attribute_read_after_the_branch", _GATES + """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.last = None
    def forward(self, x, gate):
        if gate[0] > 0.5:
            x = x + self.blocks[0](x)
        same = self.last is x
        return x * 2 + (1.0 if same else 0.0)
m = Drop()
def make(): return m
def invoke(f, i):
    x, gate = inputs(i)
    m.last = x if i % 2 == 0 else None
    return f(x, gate)
""")

program(F_, "argument_kept_in_a_list_before_the_branch", _GATES + """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        kept = [x]
        if gate[0] > 0.5:
            x = x + self.blocks[0](x)
        return x - kept[0], x is kept[0]
m = Drop()
def make(): return m
""")

program(F_, "argument_changed_in_place_after_a_skipped_block", _GATES + """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        if gate[0] > 0.5:
            x = x + self.blocks[0](x)
        x.mul_(2)
        return x
m = Drop()
def make(): return m
def invoke(f, i):
    x, gate = inputs(i)
    out = f(x, gate)
    return out, x.clone()
""")

program(F_, "argument_identity_tested_after_the_branch", _GATES + """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        inp = x
        if gate[0] > 0.5:
            x = x + self.blocks[0](x)
        if x is inp:
            return x * 0
        return x
m = Drop()
def make(): return m
""")

program(F_, "argument_from_a_module_global", _GATES + """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    def forward(self, x, gate):
        for i, blk in enumerate(self.blocks):
            if gate[i] > 0.5:
                x = x + blk(x)
        return x
m = Drop()
HELD = []
def make(): return m
def invoke(f, i):
    x, gate = inputs(i)
    HELD[:] = [x]
    out = f(x, gate)
    return out, out is HELD[0]
""")

program(F_, "every_block_skipped_returns_the_argument_then_blocks_run", """
EXPECT = "record"
def context(i):
    return torch.no_grad()
GATES = [(1, 1), (0, 0), (1, 0), (0, 1), (0, 0), (1, 1)]
NCALLS = len(GATES)
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(2, 4, generator=g), torch.tensor(GATES[i], dtype=torch.float32)
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
    def forward(self, x, gate):
        for i, blk in enumerate(self.blocks):
            if gate[i] > 0.5:
                x = torch.relu(blk(x)) + x
        return x
m = Drop()
def make(): return m
def invoke(f, i):
    x, gate = inputs(i)
    out = f(x, gate)
    return out, out is x
""")
