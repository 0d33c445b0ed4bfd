"""Context managers that swallow an operator's error. ``with
contextlib.suppress(LinAlgError): L = torch.linalg.cholesky(A)``, a user's manager whose
``__exit__`` counts failures and returns True, a ``@contextmanager`` generator with ``except``
around its ``yield``: eager keeps the fallback when the operator raises on some values; a record
whose graph raised would pass the error on. Such blocks are treated like ``try``/``except``: the
operator is speculative (a call on which the graph raises is a miss and runs as eager does).
Managers whose ``__exit__`` can only return None/False (``torch.no_grad``) and generators with
only ``finally`` change nothing (controls: recorded)."""
from harness import program

F_ = "managers_that_swallow_errors"

_INPUTS = """
PD = torch.eye(2) * 4
NPD = torch.tensor([[1., 2.], [2., 1.]])
SEQ = [PD, PD, NPD, PD, NPD, PD]
NCALLS = 6
def inputs(i): return (SEQ[i] * (1 + i / 10),)
"""

program(F_, "suppress_around_an_operator_that_raises_on_values", """
EXPECT = "record"
import contextlib
def f(A):
    L = torch.eye(2)
    with contextlib.suppress(torch.linalg.LinAlgError):
        L = torch.linalg.cholesky(A)
    return L * 2
def make(): return f
""" + _INPUTS)

program(F_, "user_manager_that_counts_and_swallows", """
EXPECT = "record"
class Swallow:
    def __init__(s): s.failures = 0
    def __enter__(s): return s
    def __exit__(s, et, ev, tb):
        if et is not None:
            s.failures += 1
        return True
GUARD = Swallow()
def f(A):
    M = torch.zeros(2, 2)
    with GUARD:
        M = torch.linalg.cholesky(A + 0.5)
    return M, GUARD.failures
def make(): return f
""" + _INPUTS)

program(F_, "contextmanager_generator_with_except_around_yield", """
EXPECT = "record"
import contextlib
LOG = []
@contextlib.contextmanager
def tolerant(tag):
    try:
        yield
    except RuntimeError as e:
        LOG.append((tag, type(e).__name__))
def f(A):
    M = torch.zeros(2, 2)
    with tolerant("chol"):
        M = torch.linalg.cholesky(A)
    return M + 1
def make(): return f
def state(): return list(LOG)
""" + _INPUTS)

program(F_, "no_grad_and_a_finally_generator_do_not_swallow", """
EXPECT = "record"
import contextlib
LOG = []
@contextlib.contextmanager
def scope(tag):
    LOG.append(("in", tag))
    try:
        yield
    finally:
        LOG.append(("out", tag))
def f(A):
    with torch.no_grad():
        with scope("chol"):
            L = torch.linalg.cholesky(A)
    return L * 2
def make(): return f
def inputs(i): return (torch.eye(2) * (4 + i),)
def state(): return list(LOG)
""")
