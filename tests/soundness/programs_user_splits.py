"""Written the ways users write such code, changing outside state between calls: splits at unannotated natives with objects of C types and closures live across them."""
from harness import program

F_ = "user_splits"

program(F_, "json_loads_config_string_attribute", """
EXPECT = "dynamic"
import json
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = nn.Linear(2, 2); self.cfg = '{"scale": 2.0}'
    def forward(self, x):
        c = json.loads(self.cfg)
        return self.lin(x) * c["scale"]
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 3: NET.cfg = '{"scale": 5.0}'
NCALLS = 5
""")

program(F_, "regex_match_object_live_across_split", """
EXPECT = "dynamic"
import json, re
_SCAN = json.decoder.JSONDecoder().scan_once
NAME = ["layer12"]
def f(x):
    m = re.match(r"layer(\\d+)", NAME[0])
    k, _ = _SCAN("3", 0)
    return x * int(m.group(1)) + k
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: NAME[0] = "layer7"
NCALLS = 5
""")

program(F_, "closure_over_list_across_split", """
EXPECT = "dynamic"
import json
_SCAN = json.decoder.JSONDecoder().scan_once
L = []
def f(x):
    acc = []
    def push(v): acc.append(v)
    push(x * 2)
    k, _ = _SCAN(str(len(L) + 1), 0)
    push(x * k)
    L.append(len(acc))
    return torch.stack(acc).sum(0)
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "custom_with_around_split_logs_enter_exit", """
EXPECT = "split"
import json
_SCAN = json.decoder.JSONDecoder().scan_once
LOG = []
class CM:
    def __enter__(s): LOG.append("in"); return s
    def __exit__(s, *a): LOG.append("out"); return False
def f(x):
    with CM():
        k, _ = _SCAN("2", 0)
        y = x * k
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "inplace_before_and_after_split", """
EXPECT = "split"
import json
_SCAN = json.decoder.JSONDecoder().scan_once
W = torch.zeros(2)
def f(x):
    W.add_(x)
    k, _ = _SCAN("2", 0)
    W.mul_(k)
    return W.clone()
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
NCALLS = 5
""")

program(F_, "split_inside_loop_trip_count_from_argument", """
EXPECT = "split"
import json
_SCAN = json.decoder.JSONDecoder().scan_once
def f(x, n):
    out = x
    for i in range(n):
        k, _ = _SCAN(str(i), 0)
        out = out + k
    return out
def make(): return f
def inputs(i): return (torch.ones(2), [1, 3, 2, 4, 0, 2][i])
NCALLS = 6
""")

program(F_, "float_subclass_attribute_read_after_split", """
EXPECT = "split"
import json
_SCAN = json.decoder.JSONDecoder().scan_once
_SH = sys.modules.get("user_programs_shared_float2")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_float2")
    _SH.Gain = type("Gain", (float,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_float2"] = _SH
Gain = _SH.Gain
CFG = {"g": Gain(2.0)}
def f(x):
    k, _ = _SCAN("1", 0)
    return x * CFG["g"] + k
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: CFG["g"] = Gain(7.0)
NCALLS = 5
""")
