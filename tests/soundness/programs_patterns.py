"""``match`` statements: sequence, mapping and class patterns on state from outside
that changes between calls (a config dict a mapping pattern reads, a list of layer specs, the
module a class pattern tests)."""
from harness import program

F_ = "patterns"

program(F_, "mapping_pattern_reads_a_config_dict_that_changes", """
EXPECT = "record"
CONFIG = {"act": "relu", "scale": 2.0}
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.config = CONFIG
    def forward(self, x):
        h = self.lin(x)
        match self.config:
            case {"act": "relu", "scale": s}:
                return torch.relu(h) * s
            case {"act": "tanh", **rest}:
                return torch.tanh(h) + len(rest)
            case _:
                return h
m = Head()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i % 2)),)
def step(i):
    if i == 2:
        CONFIG["scale"] = 3.0
    if i == 4:
        CONFIG["act"] = "tanh"
    if i == 6:
        CONFIG["extra"] = 1
NCALLS = 8
""")

program(F_, "sequence_and_class_patterns_over_layer_specs", """
EXPECT = "record"
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.specs = [("lin", 4), nn.ReLU(), ("scale", 0.5)]
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        for spec in self.specs:
            match spec:
                case ("lin", n) if n == x.shape[-1]:
                    x = self.lin(x)
                case ("scale", s):
                    x = x * s
                case nn.Module():
                    x = spec(x)
                case [*_]:
                    x = x + 1
        return x
m = Stack()
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        m.specs[1] = nn.Tanh()
    if i == 4:
        m.specs.append(("scale", 2.0))
    if i == 5:
        m.specs[0] = ("lin", 5)
NCALLS = 7
""")
