"""Calls split at a subscript that cannot be part of a record: a Python list indexed with
a tensor (``rows[t.argmax()]``), whose item depends on tensor values (magpy.splits: the
subscript runs as ``operator.getitem`` with its real operands, the frame resumes after it with
the item). The list is changed between calls (an item replaced, one appended), the item is a
tensor, a Python number or a module; the subscript is in a helper called from forward."""
from harness import program

F_ = "subscriptsplits"

program(F_, "list_of_tensors_indexed_by_argmax_changed_between_calls", """
EXPECT = "split"
TABLE = [torch.ones(3) * k for k in range(4)]
def f(x, score):
    y = x.relu()
    row = TABLE[score.argmax()]
    return y * 2 + row
def make(): return f
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return (torch.randn(3, generator=g), torch.randn(4, generator=g))
def step(i):
    if i == 3: TABLE[1] = torch.full((3,), -5.0)
    if i == 5: TABLE.append(torch.zeros(3))
NCALLS = 7
""")

program(F_, "list_of_numbers_indexed_by_a_zero_dim_tensor", """
EXPECT = "split"
SCALES = [0.5, 2.0, 3.0]
def f(x, k):
    h = x.sin()
    s = SCALES[k]
    return h * s + s
def make(): return f
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)), torch.tensor(i % 3))
def step(i):
    if i == 4: SCALES[2] = -1.0
NCALLS = 7
""")

program(F_, "module_picked_by_a_tensor_in_a_helper", """
EXPECT = "split"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = [nn.Linear(4, 2), nn.Linear(4, 2)]
        self.gate = nn.Linear(4, 2)
    def pick(self, h):
        choice = self.gate(h).sum(0).argmax()
        return self.heads[choice]
    def forward(self, x):
        h = torch.tanh(x)
        head = self.pick(h)
        return head(h) + 1
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        with torch.no_grad(): m.heads[0].weight.mul_(-1)
NCALLS = 6
""")
