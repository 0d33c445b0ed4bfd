"""What a speculative graph leaves behind when its check fails. A record whose path branched on a
tensor value runs its graph first and checks the branch after; when the check fails the call is
a miss "as if the graph had not run". Values written in place must be put back, and so must the
version counters autograd checks for tensors an earlier call saved for backward, the autograd
history of a tensor that requires grad, and the calls of the user's saved-tensor pack hooks.
Eager never runs the other path, so none of these may show. Also: torch.func transforms
inside the call."""
from harness import program

F_ = "failed_speculation_leaves_no_trace"

program(F_, "undo_puts_back_the_version_counter", """
EXPECT = "record"
NCALLS = 6
class Net(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.ones(2)); s.register_buffer("scale", torch.ones(2))
    def forward(s, x):
        if x.abs().max() > 3:          # shrink the scale on outlier batches
            s.scale.mul_(0.5)
        return x * s.w * s.scale       # scale saved for backward
NET = Net()
def make(): return NET
O, N = torch.ones(2) * 5, torch.ones(2)
PAIRS = [(O, N), (N, N), (O, N), (O, N), (N, N), (O, N)]
def inputs(i): return (PAIRS[i][0],)
def invoke(f, i):
    a, b = PAIRS[i]
    return f(a).sum() + f(b).sum()    # two forwards, then one backward over both (post)
def post(out, i):
    try:
        out.backward()
    except RuntimeError as e:
        return ("raised", str(e)[:60])
    g = NET.w.grad.clone(); NET.w.grad = None
    return g
def state(): return NET.scale._version
""")

program(F_, "no_speculation_over_an_in_place_change_of_a_tensor_with_history", """
EXPECT = "record"    # (the negative inputs' path; the positive one changes a tensor with autograd
                     # history in place, which a failed check could not undo: those calls run eagerly)
NCALLS = 6
class Mem(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.full((2,), 2.0)); s.mem = None
    def forward(s, x):
        if x.sum() > 0:
            s.mem.mul_(0.5)        # decay the memory on positive inputs
        return x + s.mem
NET = Mem()
def make(): return NET
VALS = [1., -1., 1., -1., -2., 2.]
def step(i): NET.mem = NET.w * 3   # a memory with autograd history, set before each call
def inputs(i): return (torch.ones(2) * VALS[i],)
def post(out, i):
    g, = torch.autograd.grad(out.sum(), NET.w)
    return g
""")

program(F_, "speculation_declined_under_saved_tensor_hooks", """
EXPECT = "record"    # (call 1 is a record hit; under the hooks calls run eagerly)
NCALLS = 6
import contextlib
PACKS = []
class Net(nn.Module):
    def __init__(s): super().__init__(); s.w = nn.Parameter(torch.ones(2))
    def forward(s, x):
        h = torch.tanh(x * s.w)
        if h.sum() > 0:
            return (h * s.w).exp()
        return h.sin() * s.w
NET = Net()
def make(): return NET
VALS = [1., 1., -1., 1., -1., 2.]
def inputs(i): return (torch.ones(2) * VALS[i],)
def pack(t):
    PACKS.append(tuple(t.shape)); return t
def context(i):
    # activation offloading from the third call on: the record of the first call speculates
    return torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t) if i >= 2 else contextlib.nullcontext()
def post(out, i):
    out.sum().backward()
    g = NET.w.grad.clone(); NET.w.grad = None
    return g
def state(): return list(PACKS)
""")


# torch.func transforms inside the call: the first call worked, every call a
# record answered raised AttributeError (the record named the transform's inner functions as
# attributes of torch._functorch.apis). Operators inside a transform see wrapper tensors; the call
# splits at the transform, which runs every call.
program(F_, "vmap_of_a_closure_inside_the_call", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "dynamic"}
from torch.func import vmap
W = torch.ones(2)
def f(x):
    y = x * 2
    per = vmap(lambda r: (r * W).sum())(y)
    return per + 1
def make(): return f
def step(i): W.mul_(1.5)   # the closure reads outside state that changes
def inputs(i): return (torch.ones(3, 2) * (i + 1),)
""")

program(F_, "grad_of_a_function_inside_the_call", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "dynamic"}
from torch.func import grad
def f(x):
    g = grad(lambda y: (y ** 3).sum())(x * 2)
    return g - x
def make(): return f
def inputs(i): return (torch.arange(3.) + i,)
""")
