"""Exception objects passed in from outside (found by a helper's split work): their text is made
by native code from attributes no instruction reads (``args``; an ``OSError``'s ``errno``,
``strerror``, ``filename``). ``str(e)``, ``repr(e)`` and ``f"{e}"`` of such an exception read
those attributes, guarded; ``raise e`` writes the object (its ``__traceback__``), which a record's
replay cannot do: the call is dynamic."""
from harness import program

F_ = "exceptiontext"

program(F_, "str_of_an_exception_argument", """
EXPECT = "record"
def f(x, err):
    return x * len(str(err))
MSGS = ["ab", "abcd", "abcd", "abcdef", "ab", "ab"]
def make(): return f
def inputs(i): return (torch.ones(2), ValueError(MSGS[i]))
NCALLS = 6
""")

program(F_, "fstring_of_an_exception_in_a_module", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.last_error = KeyError("a")
    def forward(self, x):
        note = f"{self.last_error}"
        return self.lin(x) * len(note)
m = M()
KEYS = ["a", "abc", "abc", "a", "abcde", "abcde"]
def make(): return m
def inputs(i):
    m.last_error = KeyError(KEYS[i])
    return (torch.ones(2, 3),)
NCALLS = 6
""")

program(F_, "repr_of_an_oserror_whose_filename_changes", """
EXPECT = "record"
ERR = OSError(2, "No such file")
def f(x):
    return x + len(repr(ERR))
NAMES = [None, "a.txt", "a.txt", "longer_name.txt", None, None]
def make(): return f
def inputs(i):
    ERR.filename = NAMES[i]
    return (torch.ones(2),)
NCALLS = 6
""")

program(F_, "an_exception_from_outside_raised_and_caught", """
EXPECT = "dynamic"
def f(x, err):
    try:
        raise err
    except ValueError as e:
        return x * len(str(e)), e.__traceback__ is not None
MSGS = ["ab", "abcd", "abcd", "abcdef"]
def make(): return f
def inputs(i): return (torch.ones(2), ValueError(MSGS[i]))
NCALLS = 4
""")
