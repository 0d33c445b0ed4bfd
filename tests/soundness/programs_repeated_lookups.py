"""What a monitor run looks up once and reuses: the MRO lookup of a class attribute read by many
modules of one class, the dunders of a class entered from C many times, the memory of the graph's
inputs asked at every in-place operation. Outside state changes between calls, and during a call."""
from harness import program

F_ = "repeated_lookups"

program(F_, "class_attr_read_by_every_block", """
class Block(nn.Module):
    scale = 2.0
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x) * self.scale
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(4))
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x
m = Net()
def make(): return m
def inputs(i): return torch.ones(2, 4)
def step(i):
    if i == 2: Block.scale = 0.5
    if i == 3: m.blocks[2].scale = 3.0
""")

program(F_, "class_attr_changed_inside_the_call", """
class Block(nn.Module):
    scale = 2.0
    def forward(self, x):
        a = x * self.scale
        type(self).scale = self.scale + 1.0
        return a + x * self.scale
m = Block()
def make(): return m
def inputs(i): return torch.ones(3)
def state(): return Block.scale
EXPECT = "dynamic"
""")

program(F_, "method_replaced_on_the_class_between_calls", """
class Act(nn.Module):
    def act(self, x):
        return x.relu()
    def forward(self, x):
        return self.act(x) + self.act(-x)
m = nn.Sequential(Act(), Act())
def make(): return m
def inputs(i): return torch.randn(5)
def step(i):
    if i == 2: Act.act = lambda self, x: x.tanh()
""")

program(F_, "shared_dunder_replaced_under_one_name", """
def smaller(a, b):
    return a.key < b.key
class Item:
    __lt__ = smaller
    __gt__ = lambda a, b: a.key > b.key
    def __init__(self, key, t):
        self.key, self.t = key, t
items = [Item(k, torch.full((2,), float(k))) for k in (3, 1, 2)]
def f(x):
    return sum(it.t for it in sorted(items)[:2]) * x
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Item.__lt__ = lambda a, b: a.key > b.key
""")

program(F_, "inplace_on_an_argument_after_many_parameters", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(6))
    def forward(self, x):
        h = x
        for lin in self.layers:
            h = F.relu_(lin(h))
        x.mul_(0.5)
        return h + x
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
""")

program(F_, "inplace_on_a_view_of_a_buffer_after_its_storage_moved", """
class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4))
    def forward(self, x):
        old = self.buf.view(-1)
        self.buf.set_(torch.zeros(4) + x.sum())
        old.add_(1.0)
        return self.buf * 2 + old
m = Acc()
def make(): return m
def inputs(i): return torch.ones(4) * i
def state(): return m.buf.clone()
""")
