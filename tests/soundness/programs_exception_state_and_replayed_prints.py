"""Exception state around splits, and replayed prints among writes.

* A call that splits at a dynamic operation on its monitored run: the rest of the program must
  not run while MagPy's own SplitHere is being handled (``sys.exc_info()``, a log record with
  ``exc_info=True``, the ``__context__`` of an exception raised after the split).
* A dynamic operation inside an ``except`` body: a continuation would run without this call's
  exception being handled (``sys.exc_info()`` is empty, ``traceback.format_exc()`` says
  ``NoneType: None``); the call is not split there, it runs eagerly.
* A print replayed among writes to outside objects (to a closed file, a redirected stdout, a
  collector the call reads): the writes before it happen, and what it changes is what eager
  changes."""
from harness import program

F_ = "exception_state_and_replayed_prints"

program(F_, "exc_info_after_a_split_is_the_callers", """
EXPECT = "split"
import heapq, sys
HEAP = []
def f(x):
    heapq.heappush(HEAP, x.sum().item())     # dynamic: the call splits here
    seen = sys.exc_info()[0]
    return x * len(HEAP), None if seen is None else seen.__name__
def make(): return f
def inputs(i): return (torch.ones(2) * (i + 1),)
def state(): return list(HEAP)
""")

program(F_, "error_raised_after_a_split_has_no_context", """
EXPECT = "split"
import heapq, io, logging
HEAP = []
BUF = io.StringIO()
LOG = logging.Logger("exc_state")      # (not registered: each world has its own)
LOG.addHandler(logging.StreamHandler(BUF))
def f(x):
    heapq.heappush(HEAP, x.sum().item())
    LOG.warning("pushed %d", len(HEAP), exc_info=True)
    if x.sum() > 100:
        raise ValueError("loss exploded")
    return x * len(HEAP)
def make(): return f
def inputs(i): return (torch.ones(2) * (200.0 if i in (0, 3) else float(i)),)
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e), repr(e.__context__))
def state(): return list(HEAP), BUF.getvalue()
NCALLS = 5
""")

program(F_, "dynamic_operation_inside_except_sees_the_handled_exception", """
EXPECT = "dynamic"
import heapq, sys, traceback
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = {"a": 1.0}
        self.misses = []
    def forward(self, x, key):
        try:
            k = self.table[key]
        except KeyError:
            heapq.heappush(self.misses, (x.sum().item(), key))   # dynamic, inside the handler
            last = traceback.format_exc().strip().splitlines()[-1]
            return x * -1.0, last, sys.exc_info()[0].__name__
        return x * k, None, None
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * (i + 1), "b")
def state(): return list(m.misses)
""")

program(F_, "helper_with_a_dynamic_operation_called_from_an_except_body", """
EXPECT = "dynamic"
import io, sys
BUF = io.StringIO()
def note(x):
    BUF.write(f"{x.sum().item():.1f}\\n")       # dynamic: a write to a file
    return repr(sys.exc_info()[1])
def f(x, cfg):
    try:
        scale = cfg["scale"]
    except KeyError:
        seen = note(x)
        return x * 2, seen
    return x * scale, None
def make(): return f
def inputs(i): return (torch.ones(2) * i, {})
def state(): return BUF.getvalue()
""")

program(F_, "dynamic_operation_after_a_handled_exception_still_splits", """
EXPECT = "split"
import heapq, sys
HEAP = []
def f(x, cfg):
    try:
        scale = cfg["scale"]
    except KeyError:
        scale = 3.0
    heapq.heappush(HEAP, x.sum().item())        # the handler is over: split here
    return x * scale, repr(sys.exc_info()[1])
def make(): return f
def inputs(i): return (torch.ones(2) * i, {})
def state(): return list(HEAP)
""")

# -- replayed prints among the writes -----------------------------------------------------------------

program(F_, "print_to_a_closed_file_after_counter_updates", """
EXPECT = "record"
import io
LOGF = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.hist = []
    def forward(self, x):
        self.n += 1
        self.hist.append(self.n)
        print("step", self.n, x.sum().item(), file=LOGF)
        return x * self.n
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * (i + 1),)
def step(i):
    if i == 3: LOGF.close()             # the log file is closed: print raises from now on
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e))
def state(): return m.n, list(m.hist), LOGF.closed
NCALLS = 5
""")

program(F_, "print_to_a_closed_file_between_writes_to_different_objects", """
EXPECT = "record"
import io
LOGF = io.StringIO()
TOTALS = {}
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
    def forward(self, x):
        self.n += 1
        print("step", self.n, file=LOGF)
        TOTALS["calls"] = self.n          # after the print: not made where it raises
        return x + self.n
m = M()
def make(): return m
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: LOGF.close()
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e))
def state(): return m.n, dict(TOTALS)
NCALLS = 5
""")

program(F_, "print_to_a_closed_file_between_two_writes_of_one_attribute", """
EXPECT = "dynamic"
import io
LOGF = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
    def forward(self, x):
        self.n += 1
        print("half", self.n, file=LOGF)
        self.n += 1
        return x * self.n
m = M()
def make(): return m
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: LOGF.close()
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e))
def state(): return m.n
NCALLS = 5
""")

# -- where a replayed print writes, and what it changes -------------------------------------------------

program(F_, "print_inside_redirect_stdout_to_an_outside_buffer", """
EXPECT = "dynamic"
import contextlib, io
BUF = io.StringIO()
def f(x):
    with contextlib.redirect_stdout(BUF):      # sys.stdout is BUF only around the print
        print("sum", x.sum().item())
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return BUF.getvalue()
""")

program(F_, "print_to_a_python_collector_the_call_then_reads", """
EXPECT = "split"
LINES = []
class Collector:
    def write(self, t): LINES.append(t)
    def flush(self): pass
W = Collector()
def f(x):
    print("loss", x.sum().item(), file=W)      # W.write is Python code: it appends to LINES
    return x * len(LINES)
def make(): return f
def inputs(i): return (torch.ones(2) * (i + 1),)
def state(): return list(LINES)
""")

program(F_, "print_to_a_closed_file_before_a_buffer_changes_in_place", """
EXPECT = "dynamic"
import io
LOGF = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(2))
    def forward(self, x):
        y = x * 2
        print("sum", y.sum().item(), file=LOGF)
        self.seen.add_(y)                       # the graph changes it; eager does not reach it if print raises
        return y + self.seen
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * (i + 1),)
def step(i):
    if i == 3: LOGF.close()
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e))
def state(): return m.seen.clone()
NCALLS = 5
""")

program(F_, "control_print_to_stdout_before_a_buffer_changes_in_place", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(2))
    def forward(self, x):
        y = x * 2
        print("sum", y.sum().item())
        self.seen.add_(y)
        return y + self.seen
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * (i + 1),)
def state(): return m.seen.clone()
""")

program(F_, "print_to_a_closed_file_before_a_view_of_a_buffer_changes_in_place", """
EXPECT = "dynamic"
import io
LOGF = io.StringIO()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(4))
    def forward(self, x):
        y = x * 2
        print("sum", y.sum().item(), file=LOGF)
        head = self.seen[:2]                    # a view made in the call
        head.add_(y)                            # changes the buffer's memory
        return y + head
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * (i + 1),)
def step(i):
    if i == 3: LOGF.close()
def invoke(f, i):
    try:
        return f(*inputs(i))
    except ValueError as e:
        return ("ValueError", str(e))
def state(): return m.seen.clone()
NCALLS = 5
""")
