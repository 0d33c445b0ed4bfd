"""Legacy constructors and attributes on tensors, as user models write them: legacy constructors
on list data that hold numpy numbers or tensors, attributes written on tensors made in the call
(a framework-port habit: ``out.stop_gradient = True``), and numbers drawn and printed with no
tensor operation at all, with outside state changing between calls."""
from harness import program

F_ = "legacy_constructors_and_tensor_attributes"

program(F_, "legacy_floattensor_of_numpy_scales", """
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.scales = [np.float32(0.5), np.float32(2.0)]
    def forward(self, x):
        return self.lin(x) * torch.FloatTensor(self.scales)
m = Scaled()
def make(): return m
def inputs(i): return torch.randn(4, 3)
def step(i):
    m.scales[1] = np.float32(2.0 + (i // 2))
EXPECT = "record"
""")

program(F_, "legacy_tensor_of_tensor_stats", """
class Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        y = self.lin(x)
        summary = torch.Tensor([y.mean(), y.std(), 1.0])
        return y - summary[0], summary
m = Stats()
def make(): return m
def inputs(i): return torch.randn(3, 4) * (i + 1)
EXPECT = "record"
""")

program(F_, "legacy_longtensor_of_index_tensors", """
table = torch.arange(12.0).reshape(4, 3)
def f(idx, off):
    pairs = torch.LongTensor([[idx[0], off], [idx[1], 1]])
    return table[pairs[:, 0]] + pairs[:, 1:].float()
def make(): return f
def inputs(i): return (torch.tensor([i % 4, (i + 1) % 4]), i % 2)
EXPECT = "record"
""")

program(F_, "attribute_on_returned_tensor", """
class Port(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)
        self.freeze = False
    def forward(self, x):
        out = self.lin(x)
        out.stop_gradient = self.freeze
        if out.stop_gradient:
            out = out * 0.5
        return out
m = Port()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    m.freeze = i % 2 == 1
def state(): return None
def post(out, i): return dict(out.__dict__)
EXPECT = "record"
""")

program(F_, "tagged_tensor_kept_outside", """
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.kept = []
        self.tag = "a"
    def forward(self, x):
        h = torch.relu(self.lin(x))
        h.my_tag = self.tag
        h.step = x.shape[0]
        self.kept.append(h)
        return h.sum()
m = Tagger()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    m.tag = "ab"[i % 2]
def post(out, i): return [dict(t.__dict__) for t in m.kept]
EXPECT = "record"
""")

program(F_, "incremental_decoder_logs_a_drawn_number", """
import io
import random
SINK = io.StringIO()
rng = random.Random(0)
class Decoder(nn.Module):
    # incremental state: None on the first call, a cache later; each step logs a sampled
    # temperature (a number drawn, printed: no tensor operation at all)
    def __init__(self):
        super().__init__()
        self.cache = None
    def forward(self, x):
        if self.cache is None:
            self.cache = {"steps": 0}
        self.cache["steps"] += 1
        print("temperature", rng.random(), file=SINK)
        return x
m = Decoder()
def make(): return m
def inputs(i): return torch.ones(2)
def state(): return SINK.getvalue(), rng.getstate()
NCALLS = 5
EXPECT = "record"
""")

program(F_, "draw_printed_without_tensor_ops", """
import io
import random
SINK = io.StringIO()
def f(x):
    r = random.random()
    print("r", r, file=SINK)
    return x
def make(): return f
def inputs(i): return torch.ones(2)
def step(i): random.seed(i // 2)
def state(): return SINK.getvalue(), random.getstate()
EXPECT = "record"
""")
