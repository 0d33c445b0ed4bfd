"""Outside effects the mock replays (print to a file, logging, sleep) and text formatted from
tensor values (f-strings, ``%``, ``str.format``): the file, the logger, its level and handlers,
torch's print options change between calls; text is returned, stored, used as a key, branched on."""
from harness import program

F_ = "effects"

program(F_, "print_values_read_to_a_file_object", """
import io
buf = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        y = self.fc(x)
        print("step", y.sum(), f"{y.mean().item():.4f}", file=buf)
        return y.relu()
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def state(): return buf.getvalue()
""")

program(F_, "file_object_replaced_between_calls", """
import io
buf = io.StringIO()
written = []
def f(x):
    y = x * 2
    print("max", round(y.max().item(), 3), file=buf)
    return y
def make(): return f
def inputs(i): return (torch.randn(5, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global buf
    if i in (2, 3):
        written.append(buf.getvalue())
        buf = io.StringIO()
def state(): return written, buf.getvalue()
NCALLS = 5
""")

program(F_, "logger_in_a_submodule_level_and_handler_changed", """
import logging
records = []
class Keep(logging.Handler):
    def emit(self, r):
        records.append((r.levelname, r.getMessage(), r.funcName, r.lineno, r.filename.startswith("<soundness")))
log = logging.Logger("sound.effects.sub")   # (unregistered: each world has its own)
log.setLevel(logging.INFO)
h = Keep()
log.addHandler(h)
CLEANUP.append(lambda: log.removeHandler(h))
class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        y = self.fc(x)
        log.info("mean %.4f of %d rows", y.mean().item(), y.shape[0])
        log.debug(f"max {y.max().item():.3f}")
        return torch.tanh(y)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.sub(x))
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        log.setLevel(logging.WARNING)
    if i == 3:
        log.setLevel(logging.DEBUG)
    if i == 4:
        log.removeHandler(h)
def state(): return records
NCALLS = 6
""")

program(F_, "logger_object_replaced_between_calls", """
import logging
seen = []
class Keep(logging.Handler):
    def __init__(self, tag):
        super().__init__()
        self.tag = tag
    def emit(self, r):
        seen.append((self.tag, r.getMessage()))
def make_logger(name):
    lg = logging.Logger(name)
    lg.setLevel(logging.INFO)
    k = Keep(name)
    lg.addHandler(k)
    CLEANUP.append(lambda: lg.removeHandler(k))
    return lg
log = make_logger("sound.effects.a")
def f(x):
    y = x.exp()
    log.warning("sum=%s", "%.3f" % y.sum().item())
    return y
def make(): return f
def inputs(i): return (torch.randn(4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    global log
    if i == 2:
        log = make_logger("sound.effects.b")
def state(): return seen
NCALLS = 4
""")

program(F_, "text_returned_stored_and_its_type", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.msg = ""
        self.history = []
    def forward(self, x):
        y = self.fc(x)
        s = y.std().item()
        self.msg = "std {:.2f} / mean %s".format(s) % str(y.mean().item())
        self.history.append(f"{s!r:>12}")
        return y, repr(s), ", ".join([f"{v:.1f}" for v in (s, y.max().item())])
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def state(): return type(m.msg).__name__, [type(h).__name__ for h in m.history]
""")

program(F_, "text_as_a_key_and_in_a_branch", """
EXPECT = "dynamic"
counts = {}
def f(x):
    y = x.round()
    key = f"{y.sum().item():.0f}"
    counts[key] = counts.get(key, 0) + 1
    label = "%.1f" % y.max().item()
    if label.startswith("-"):
        return y - 1, label
    return y + 1, label
def make(): return f
def inputs(i): return (torch.tensor([float(i % 3) - 1.0, 0.4]),)
def state(): return dict(counts)
NCALLS = 6
""")

program(F_, "tensor_text_under_changed_print_options", """
import io
buf = io.StringIO()
def f(x):
    y = x / 3
    print(f"y={y}", file=buf)
    return y, str(y[:2])
def make(): return f
def inputs(i): return (torch.arange(4.0) + i,)
def step(i):
    torch.set_printoptions(precision=2 + i)
CLEANUP.append(lambda: torch.set_printoptions(profile="default"))
def state(): return buf.getvalue()
""")

program(F_, "logging_with_stacklevel_runs_eagerly", """
EXPECT = "dynamic"
import logging
got = []
class Keep(logging.Handler):
    def emit(self, r):
        got.append((r.getMessage(), r.funcName))
log = logging.Logger("sound.effects.stack")
log.setLevel(logging.INFO)
k = Keep()
log.addHandler(k)
CLEANUP.append(lambda: log.removeHandler(k))
def report(v):
    log.info("v=%.2f", v, stacklevel=2)
def f(x):
    y = x * 3
    report(y.sum().item())
    return y
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def state(): return got
""")

program(F_, "sleep_between_clock_readings", """
EXPECT = "dynamic"
import time
class Timed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.slow = []
    def forward(self, x):
        t0 = time.perf_counter()
        y = self.fc(x)
        time.sleep(0.002)
        self.slow.append(time.perf_counter() - t0 >= 0.002)
        return y
m = Timed()
def make(): return m
def inputs(i): return (torch.randn(1, 2, generator=torch.Generator().manual_seed(i)),)
""")

program(F_, "get_logger_inside_the_call_made_on_first_use", """
import logging
got = []
class Keep(logging.Handler):
    def emit(self, r):
        got.append((r.levelname, r.getMessage(), r.funcName))
def f(x):
    y = x.sigmoid()
    logging.getLogger(__name__ + ".sub").info("mean=%.3f", y.mean().item())
    return y
def make(): return f
def inputs(i): return (torch.randn(4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    lg = logging.getLogger(__name__ + ".sub")
    if i == 1:
        k = Keep()
        lg.addHandler(k)
        lg.propagate = False
        lg.setLevel(logging.INFO)
        CLEANUP.append(lambda: lg.removeHandler(k))
    if i == 3:
        lg.setLevel(logging.ERROR)
def state(): return got
NCALLS = 5
""")

program(F_, "type_class_and_pickle_of_text_and_lifted_sizes", """
EXPECT = "split"
import pickle
def f(x):
    s = f"{x.sum().item():.2f}"
    n = x.shape[0]
    kinds = (type(s) is str, s.__class__.__name__, type(n).__name__, n.__class__ is int)
    return x + 1, kinds, pickle.loads(pickle.dumps((s, n))), type(s).__name__
def make(): return f
def inputs(i): return (torch.randn(2 + i % 3, 3, generator=torch.Generator().manual_seed(i % 3)),)
NCALLS = 6
""")
