"""Process-wide modes a program enters inside the call, which natives read in C: numpy's error
state under ``np.errstate`` (a context variable), the warning filters under
``warnings.catch_warnings``; numpy on values read from tensors inside them, and an ``except``
that the mode decides. The values change between calls (a zero sum, a negative one)."""
from harness import program

F_ = "modes_in_call"

_VALUES = """
def inputs(i):
    return (torch.tensor([[1.0, 1.0], [1.0, -1.0], [2.0, 2.0], [0.5, -0.5], [3.0, 1.0]][i], dtype=torch.float64),)
NCALLS = 5
"""

program(F_, "numpy_division_under_errstate_raise", _VALUES + """
EXPECT = "dynamic"
import numpy as np
def f(x):
    a = x.numpy()
    try:
        with np.errstate(divide="raise"):
            r = np.float64(1.0) / a.sum()
        return x * float(r)
    except FloatingPointError:
        return x - 1
def make(): return f
""")

program(F_, "numpy_warning_turned_into_an_error_by_catch_warnings", _VALUES + """
EXPECT = "dynamic"
import numpy as np
import warnings
def f(x):
    a = x.numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            r = float(np.log(a.sum()))
        except RuntimeWarning:
            r = -1.0
    return x * r
def make(): return f
""")

program(F_, "numpy_after_errstate_is_left_stays_in_the_record", _VALUES + """
EXPECT = "record"
import numpy as np
def f(x):
    with np.errstate(all="ignore"):
        pass
    return x * 2
def make(): return f
""")
