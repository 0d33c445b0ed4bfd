"""The second program grammar of the differential fuzzer: *dynamic control flow*. Recurrent loops
over a sequence whose length changes between calls, and branches on tensor values whose decisions
change between calls: the machinery that rolls repeating iterations into one loop body and merges
tensor-valued branches into conditional nodes.

A :class:`LoopSpec` is a plain, printable tree of choices:

* the loop's shape (:data:`LOOPS`): ``range(xs.size(0))``, ``range(xs.shape[0])``, ``range(len(
  xs.unbind(0)))``, iterating the tensor or its ``unbind(0)``, ``enumerate``, ``zip`` of two
  unbinds (now and then of unequal lengths), ``reversed`` of a range or of an unbind,
  ``enumerate`` from 1, a slice, ``range`` with a step or from 1 after a first step outside the
  loop, ``range`` counting down or to ``T - 1``, a list of tensors passed in, and ``while`` loops
  on a counter (``t += 1``, ``t = t + 1``, the bound on the left, ``<=``, ``!=``, ``while True``
  with a ``break``, starting from an attribute, counting down, stepping by two);
* the cell its body runs (:data:`CELLS`): an Elman cell over ``torch.cat([inp(x), h], -1)``,
  ``nn.GRUCell``, ``nn.LSTMCell`` with its ``(h, c)`` state unpacked or kept as a tuple, functional
  cells whose weights come from a dict or from attributes;
* how the outputs are accumulated (:data:`ACCS`: ``outs.append(h)``, ``outs += [h]``, ``outs =
  outs + [h]``, ``outs = [h]`` before the loop) and what is returned (:data:`RESULTS`: the last
  state, the stacked or concatenated outputs, the counter, ``len(outs)``, the list itself, an
  item picked by its length, the last item, the outputs stacked in reverse);
* hazards inside the body (:data:`HAZARDS`): an early ``break`` or ``return`` on a tensor value,
  the loop index read by Python (``t == 3``, ``t >= 6``, ``t % 2``, arithmetic), outside writes
  in some iterations only (a list append, an attribute counter, a print, one decided by a tensor
  value), a Python number that changes per iteration, a conditional expression on tensor values,
  the accumulator read back, the state detached now and then (truncated backpropagation);
* a branch before or after the loop (:data:`BRANCHES`): BlockDrop-like per-block gates ``if
  p[j] > 0.5: h = h + blk(h)`` with ``p`` computed from the input or passed as an argument (the
  gates before the loop work on the caller's state argument, which passes through when the first
  blocks are skipped), an early exit, a conditional expression;
* outside state changed between calls (:data:`KNOBS`): a weight module or parameter swapped for
  another, a weight scaled in place, a global step or bound, a config attribute read inside the
  loop, the module put in train/eval (a dropout in the body), ``torch.no_grad()`` or not, the
  early exits' threshold, the batch size of the inputs;
* optionally layers outer x time inner (``nested``), and backward from the outputs after each
  call, into the parameters or also into the state argument (:data:`BACKWARDS`).

Each call draws a sequence length from 2..9, now and then 1 (with repeats, so that the records
made on a miss are hit later), and an input seed; branch decisions change with the inputs and the
gate schedules. Half the programs are drawn *rollable* (:func:`draw_loop_spec`). Inputs and
weights come from seeded generators, so eager runs every program the same way twice.
:func:`render_loops` turns a spec into a soundness program (the format of
``tests/soundness/harness.py``); :func:`loop_candidates` lists its simpler variants for the shrinker.
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

N = 4              # feature width of every cell
LENGTHS = [1] + list(range(2, 10)) * 6   # sequence lengths: 2..9, now and then a single step

# loop shape -> (lines before the loop, the loop header, the step's input, its index name or None,
# lines ending the body)
LOOPS: dict[str, tuple[list[str], str, str, str | None, list[str]]] = {
    "range_size": ([], "for t in range(xs.size(0)):", "xs[t]", "t", []),
    "range_shape": ([], "for t in range(xs.shape[0]):", "xs[t]", "t", []),
    "range_len_unbind": (["inputs = xs.unbind(0)"], "for i in range(len(inputs)):", "inputs[i]", "i", []),
    "range_step2": ([], "for t in range(0, xs.size(0), 2):", "xs[t]", "t", []),
    "iter_tensor": ([], "for x in xs:", "x", None, []),
    "iter_unbind": ([], "for x in xs.unbind(0):", "x", None, []),
    "enumerate": ([], "for t, x in enumerate(xs.unbind(0)):", "x", "t", []),
    "enumerate_tensor": ([], "for t, x in enumerate(xs):", "x", "t", []),
    "zip": ([], "for x, y in zip(xs.unbind(0), ys.unbind(0)):", "x + y", None, []),
    "reversed": ([], "for t in reversed(range(xs.size(0))):", "xs[t]", "t", []),
    "while_lt": (["t = 0"], "while t < xs.size(0):", "xs[t]", "t", ["t += 1"]),
    "while_assign": (["t = 0"], "while t < xs.size(0):", "xs[t]", "t", ["t = t + 1"]),
    "while_gt": (["T = xs.size(0)", "t = 0"], "while T > t:", "xs[t]", "t", ["t += 1"]),
    "while_countdown": (["t = xs.size(0) - 1"], "while t >= 0:", "xs[t]", "t", ["t -= 1"]),
    "while_step2": (["t = 0"], "while t < xs.size(0):", "xs[t]", "t", ["t += 2"]),
    "enumerate_start": ([], "for t, x in enumerate(xs.unbind(0), 1):", "x", "t", []),
    "reversed_unbind": ([], "for x in reversed(xs.unbind(0)):", "x", None, []),
    "iter_slice": ([], "for x in xs[1:]:", "x", None, []),
    "range_from1": ([], "for t in range(1, xs.size(0)):", "xs[t]", "t", []),   # the first step before it
    "iter_list": ([], "for x in xs:", "x", None, []),
    "range_len_list": ([], "for t in range(len(xs)):", "xs[t]", "t", []),
    "range_down": ([], "for t in range(xs.size(0) - 1, -1, -1):", "xs[t]", "t", []),
    "range_minus1": ([], "for t in range(xs.size(0) - 1):", "xs[t + 1]", "t", []),
    "while_le": (["t = 0"], "while t <= xs.size(0) - 1:", "xs[t]", "t", ["t += 1"]),
    "while_ne": (["t = 0"], "while t != xs.size(0):", "xs[t]", "t", ["t += 1"]),
    "while_true": (["t = 0"], "while True:", "xs[t]", "t", ["t += 1"]),       # its test is the body's break
    "while_from_attr": (["t = self.start"], "while t < xs.size(0):", "xs[t]", "t", ["t += 1"]),
}
# lines that open the body of some loops (before anything else)
LOOP_TESTS = {"while_true": ["if t >= xs.size(0):", "    break"]}
# loops over a list of tensors passed in (its length changes between calls) instead of a tensor
LIST_LOOPS = {"iter_list", "range_len_list"}

CELLS = ["elman", "gru", "lstm", "lstm_tuple", "func_dict", "func_attr"]
# per cell, an early exit's threshold on |h|.sum() that about one step in six exceeds (the states'
# scales differ), so that some sequences exit early and others run to their end
LIMITS = {"elman": 3.3, "gru": 2.5, "lstm": 1.5, "lstm_tuple": 1.5, "func_dict": 5.8, "func_attr": 5.8}
ACCS = ["none", "append", "plus_eq", "rebind", "prefix"]
RESULTS = ["last", "stack", "cat", "counter", "len_outs", "list", "middle", "stack_rev", "last_item"]

# hazard -> the body lines after the cell's update; ``{i}`` is the index (the loop's, or a counter
# ``k`` kept by the body of a loop without one), ``{ret}`` the function's return expression. The
# early exits compare |h|.sum() of the state with ``self.limit`` (:data:`LIMITS`)
HAZARDS: dict[str, list[str]] = {
    "break_tensor": ["if h.abs().sum() > self.limit:", "    break"],
    "return_tensor": ["if h.abs().sum() > self.limit:", "    return {ret}"],
    "index_eq": ["if {i} == 3:", "    h = h * 0.5"],
    "index_late": ["if {i} >= 6:", "    h = h * 0.5"],
    "index_mod": ["if {i} % 2 == 1:", "    h = h.flip(-1)"],
    "index_arith": ["h = h + 0.1 * {i}"],
    "outside_append": ["if {i} % 2 == 0:", "    LOG.append({i})"],
    "tensor_append": ["if h.sum() > 0:", "    LOG.append({i})"],
    "attr_counter": ["if {i} % 3 == 0:", "    self.count += 1"],
    "print_index": ["if {i} == 1:", "    print('at', {i}, file=BUF)"],
    "print_value": ["print(f'{{float(h.sum()):.3f}}', file=BUF)"],
    "py_number": ["h = h * scale", "scale = scale * 0.8"],
    "ifexp": ["h = h * 0.5 if h.sum() > 0 else h + 0.1"],
    "acc_read": ["if outs:", "    h = h + 0.1 * outs[-1]"],
    "tbptt": ["if {i} % 3 == 2:", "    h = h.detach()"],
}
# hazards that need an index, and those that rebind h (an LSTM kept as a tuple puts h back)
NEEDS_INDEX = {"index_eq", "index_late", "index_mod", "index_arith", "outside_append", "tensor_append", "attr_counter",
               "print_index", "tbptt"}
REBINDS_H = {"index_eq", "index_late", "index_mod", "index_arith", "py_number", "ifexp", "acc_read", "tbptt"}
# hazards that keep the loop's iterations alike (the loop can still roll), and the other choices
# after which MagPy keeps a loop unrolled (a program drawn rollable has none of them)
ROLLABLE = ["break_tensor", "return_tensor", "index_arith"]
UNROLLED_LOOPS = {"enumerate_tensor", "enumerate_start", "reversed_unbind", "iter_list", "range_len_list", "while_true"}
UNROLLED_ACCS = {"rebind"}
UNROLLED_RESULTS = {"len_outs", "list", "middle", "stack_rev", "last_item"}
UNROLLED_KNOBS = {"global_bound"}
# results made from the accumulator (they need one)
OUTS_RESULTS = {"stack", "cat", "len_outs", "list", "middle", "stack_rev", "last_item"}

# backward after each call (the harness compares what post() returns, and the parameters' and
# arguments' grads): into the parameters, or into the state argument too (it requires grad)
BACKWARDS = ["params", "inputs"]

BRANCHES = ["gates_policy_pre", "gates_arg_pre", "gates_policy_post", "gates_arg_post", "exit_post", "ifexp_post"]

# knob -> the pool its per-call schedule is drawn from
KNOBS: dict[str, list] = {
    "weight_swap": [0, 1],
    "weight_inplace": [False, True],
    "global_step": [0, 1, 2, 3],
    "global_bound": [2, 3, 5, 100],
    "config_gain": [1.0, 0.5, 2.0],
    "config_flag": [False, True],
    "train_eval": [True, False],
    "no_grad": [False, True],
    "limit": [1.0, 0.8, 100.0],     # the early exits' threshold, times the cell's LIMITS (only with one)
    "batch": [2, 3, 1],             # the inputs' batch size
    "start": [0, 1, 2],             # where a while loop's counter starts (only with while_from_attr)
}


@dataclass
class Knob:
    name: str
    schedule: list      # the value before each call


@dataclass
class LoopSpec:
    loop: str = "range_size"
    cell: str = "elman"
    acc: str = "none"
    result: str = "last"
    hazards: list[str] = field(default_factory=list)
    branch: str | None = None
    knobs: list[Knob] = field(default_factory=list)
    nested: bool = False
    nblocks: int = 3
    gates: list | None = None     # the gate vector of each call (branches gates_arg_*)
    ylengths: list | None = None  # zip: the second sequence's length in each call, None: the first's
    backward: str | None = None   # after each call, backward from the outputs (BACKWARDS)
    lengths: list[int] = field(default_factory=lambda: [3, 5, 5, 2, 7])
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])

    @property
    def ncalls(self) -> int:
        return len(self.lengths)

    def signature(self) -> str:
        """A short description of what the program exercises (for grouping finds)."""
        parts = [f"loop:{self.loop}", f"cell:{self.cell}"]
        if self.acc != "none":
            parts.append(f"acc:{self.acc}")
        if self.result != "last":
            parts.append(f"result:{self.result}")
        parts += [f"hazard:{h}" for h in self.hazards]
        if self.branch:
            parts.append(f"branch:{self.branch}")
        parts += [f"knob:{k.name}" for k in self.knobs]
        if self.nested:
            parts.append("nested")
        if self.ylengths and self.loop == "zip":
            parts.append("zip_uneven")
        if self.backward:
            parts.append(f"backward:{self.backward}")
        return " ".join(parts)


# ------------------------------------------------------------------------------------------------
# drawing
# ------------------------------------------------------------------------------------------------


def _repeating(rng: random.Random, pool: list, n: int) -> list:
    """Values for n calls: repeats are likely, so that records made on a miss are hit later."""
    out = [rng.choice(pool)]
    for _ in range(n - 1):
        r = rng.random()
        out.append(out[-1] if r < 0.4 else rng.choice(out) if r < 0.6 else rng.choice(pool))
    return out


def draw_lengths(rng: random.Random, n: int, fixed: bool = False) -> list:
    """A sequence length per call: the first two differ mostly (the second call is where a loop
    rolls), later ones repeat or not; ``fixed``: one length for every call (only the branch
    decisions change: MagPy merges branches into conditionals where the loop around them does not
    roll; at most 6, which keeps merging the branches of an unrolled loop quick)."""
    if fixed:
        return [rng.randint(2, 6)] * n
    out = [rng.choice(LENGTHS)]
    out.append(out[0] if rng.random() < 0.15 else rng.choice([v for v in LENGTHS if v != out[0]]))
    for _ in range(n - 2):
        r = rng.random()
        out.append(out[-1] if r < 0.2 else rng.choice(out) if r < 0.45 else rng.choice(LENGTHS))
    return out


def draw_gates(rng: random.Random, nblocks: int, n: int) -> list:
    """A gate vector per call; every block skipped (the state passes through) is likely."""
    pool = [tuple(0.0 for _ in range(nblocks))] + [tuple(float(rng.random() < 0.5) for _ in range(nblocks))
                                                  for _ in range(3)]
    return _repeating(rng, pool, n)


def draw_loop_spec(rng: random.Random) -> LoopSpec:
    """A program. Half are drawn *rollable*: only the loop shapes, accumulators, results, hazards
    (:data:`ROLLABLE`) and knobs MagPy rolls, so that rolled bodies, and the outside state they
    read, meet the changes between calls; the other half draw from everything, and mostly stay
    unrolled (the index read by Python, outside writes in the loop, a per-iteration number...)."""
    n = rng.randint(5, 8)
    rollable = rng.random() < 0.5
    loops = [lp for lp in LOOPS if not rollable or lp not in UNROLLED_LOOPS]
    spec = LoopSpec(loop=rng.choice(loops), cell=rng.choice(CELLS), nested=rng.random() < 0.15)
    spec.seeds = [rng.randrange(4) if rng.random() < 0.3 else 10 + k for k in range(n)]
    spec.result = rng.choice([r for r in RESULTS if not rollable or r not in UNROLLED_RESULTS])
    accs = [a for a in ACCS[1:] if not rollable or a not in UNROLLED_ACCS]
    spec.acc = rng.choice(accs) if _uses_outs(spec) or rng.random() < 0.3 else "none"
    r = rng.random()
    if r < 0.35:
        spec.hazards = []
    elif rollable:
        spec.hazards = rng.sample(ROLLABLE, rng.choice([1, 1, 2]))
    else:
        pool = [h for h in HAZARDS if h != "print_value" or rng.random() < 0.3]
        spec.hazards = rng.sample(pool, rng.choice([1, 1, 2, 2, 3]))
    if "acc_read" in spec.hazards and spec.acc == "none":
        spec.acc = "append"
    if rng.random() < 0.5:
        spec.branch = rng.choice(BRANCHES)
        spec.nblocks = rng.randint(2, 4)
        if spec.branch.startswith("gates_arg"):
            spec.gates = draw_gates(rng, spec.nblocks, n)
    branchy = spec.branch or {"break_tensor", "return_tensor", "ifexp", "tensor_append"} & set(spec.hazards)
    spec.lengths = draw_lengths(rng, n, fixed=rng.random() < (0.35 if branchy else 0.1))
    if spec.loop == "zip" and rng.random() < 0.4:
        spec.ylengths = [max(1, v + rng.choice([0, 0, 1, -1, 2])) for v in spec.lengths]
    if rng.random() < 0.25:
        spec.backward = rng.choice(BACKWARDS)
    exits = {"break_tensor", "return_tensor"} & set(spec.hazards)
    names = [k for k in KNOBS if (k != "limit" or exits) and (k != "start" or spec.loop == "while_from_attr")
             and not (rollable and k in UNROLLED_KNOBS)]
    spec.knobs = [Knob(k, _repeating(rng, KNOBS[k], n)) for k in rng.sample(names, rng.choice([0, 1, 1, 2, 2, 3]))]
    return spec


# ------------------------------------------------------------------------------------------------
# rendering
# ------------------------------------------------------------------------------------------------


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + ln if ln else ln for ln in lines]


def _cell_init(cell: str) -> list[str]:
    """__init__ lines making the cell's weights on ``self`` (the model, or each nested layer)."""
    return {
        "elman": ["self.inp = nn.Linear(N, N)", "self.rec = nn.Linear(2 * N, N)"],
        "gru": ["self.cell = nn.GRUCell(N, N)"],
        "lstm": ["self.cell = nn.LSTMCell(N, N)"],
        "lstm_tuple": ["self.cell = nn.LSTMCell(N, N)"],
        "func_dict": ["self.W = {'wx': torch.randn(N, N) * 0.5, 'wh': torch.randn(N, N) * 0.5, 'b': torch.zeros(N)}"],
        "func_attr": ["self.wx = nn.Parameter(torch.randn(N, N) * 0.5)", "self.wh = nn.Parameter(torch.randn(N, N) * 0.5)",
                      "self.b = nn.Parameter(torch.zeros(N))"],
    }[cell]


def _cell_step(cell: str, o: str, x: str) -> list[str]:
    """Body lines updating the state from input ``x`` with the cell's weights on ``o``."""
    return {
        "elman": [f"h = torch.tanh({o}.rec(torch.cat([{o}.inp({x}), h], -1)))"],
        "gru": [f"h = {o}.cell({x}, h)"],
        "lstm": [f"h, c = {o}.cell({x}, (h, c))"],
        "lstm_tuple": [f"state = {o}.cell({x}, state)", "h = state[0]"],
        "func_dict": [f"h = torch.tanh({x} @ {o}.W['wx'] + h @ {o}.W['wh'] + {o}.W['b'])"],
        "func_attr": [f"h = torch.tanh(F.linear({x}, {o}.wx) + F.linear(h, {o}.wh, {o}.b))"],
    }[cell]


def _state_init(cell: str) -> list[str]:
    return {"lstm": ["c = torch.zeros_like(h)"], "lstm_tuple": ["state = (h, torch.zeros_like(h))"]}.get(cell, [])


def _swap_target(spec: LoopSpec) -> tuple[str, str, str]:
    """(what a weight swap rebinds, the alternative it puts there, the tensor scaled in place)."""
    o = "m.layers[1]" if spec.nested else "m"
    return {
        "elman": (f"{o}.rec", "nn.Linear(2 * N, N)", f"{o}.rec.weight"),
        "gru": (f"{o}.cell", "nn.GRUCell(N, N)", f"{o}.cell.weight_hh"),
        "lstm": (f"{o}.cell", "nn.LSTMCell(N, N)", f"{o}.cell.weight_hh"),
        "lstm_tuple": (f"{o}.cell", "nn.LSTMCell(N, N)", f"{o}.cell.weight_hh"),
        "func_dict": (f"{o}.W['wh']", "torch.randn(N, N) * 0.5", f"{o}.W['wh']"),
        "func_attr": (f"{o}.wh", "nn.Parameter(torch.randn(N, N) * 0.5)", f"{o}.wh"),
    }[spec.cell]


def _result_expr(spec: LoopSpec, idx: str | None) -> str:
    state = {"lstm": "h, c", "lstm_tuple": "state"}.get(spec.cell, "h")
    main = {
        "last": state,
        "stack": "torch.stack(outs)",
        "cat": "torch.cat(outs, 0)",
        "counter": f"{state}, {idx}",
        "len_outs": "torch.stack(outs), len(outs)",
        "list": "outs",
        "middle": "outs[len(outs) // 2]",
        "stack_rev": "torch.stack(outs[::-1])",
        "last_item": "outs[-1]",
    }[spec.result]
    if spec.result in OUTS_RESULTS and spec.branch and spec.branch.endswith("_post"):
        main += ", h"          # what the branch after the loop computed is returned
    return main


def _gates(spec: LoopSpec, src: str) -> list[str]:
    p = ("gate" if "_arg_" in spec.branch else
         f"torch.sigmoid(self.policy({src}))")
    return [f"p = {p}", "for j, blk in enumerate(self.blocks):", "    if p[j] > 0.5:", "        h = h + blk(h)"]


def _uses_outs(spec: LoopSpec) -> bool:
    return spec.acc != "none" or spec.result in OUTS_RESULTS or spec.nested or "acc_read" in spec.hazards


def render_loops(spec: LoopSpec) -> str:
    """The soundness-program source for ``spec``."""
    pre, header, x_in, idx, tail = LOOPS[spec.loop]
    knobs = {k.name: k.schedule for k in spec.knobs}
    acc = spec.acc if spec.acc != "none" or not _uses_outs(spec) else "append"
    needs_index = any(h in NEEDS_INDEX for h in spec.hazards) or spec.result == "counter" or "global_bound" in knobs
    counter = idx is None and needs_index
    i = idx or "k"
    ret = _result_expr(spec, i)
    o = "layer" if spec.nested else "self"

    # the loop's body
    body = list(LOOP_TESTS.get(spec.loop, []))
    if "global_bound" in knobs:
        body += [f"if {i} >= G_BOUND:", "    break"]
    if spec.loop == "zip":
        body += ["x = x + y"]
        x_in = "x"
    body += _cell_step(spec.cell, o, x_in)
    if "train_eval" in knobs:
        body.append("h = self.drop(h)")
    if "global_step" in knobs:
        body.append("h = h + 0.1 * G_STEP")
    if "config_gain" in knobs:
        body.append("h = h * self.cfg.gain")
    if "config_flag" in knobs:
        body += ["if self.cfg.flip:", "    h = h.flip(-1)"]
    for hz in spec.hazards:
        body += [ln.format(i=i, ret=ret) for ln in HAZARDS[hz]]
    if spec.cell == "lstm_tuple" and (set(spec.hazards) & REBINDS_H or {"train_eval", "global_step", "config_gain",
                                                                          "config_flag"} & set(knobs)):
        body.append("state = (h, state[1])")
    if acc != "none":
        body.append({"append": "outs.append(h)", "plus_eq": "outs += [h]", "rebind": "outs = outs + [h]",
                     "prefix": "outs.append(h)"}[acc])
    if counter:
        body.append("k += 1")
    body += tail

    before = list(pre)
    if counter:
        before.append("k = 0")
    if "py_number" in spec.hazards:
        before.append("scale = 1.0")
    if acc != "none":
        before.append("outs = [h]" if acc == "prefix" else "outs = []")
    before += _state_init(spec.cell)
    if spec.loop == "range_from1":
        before += _cell_step(spec.cell, o, "xs[0]") + (["outs.append(h)"] if acc != "none" else [])
    loop = before + [header] + _indent(body, 4)

    fwd: list[str] = []
    listed = spec.loop in LIST_LOOPS
    if spec.branch and spec.branch.endswith("_pre"):
        fwd += _gates(spec, "torch.stack(xs).mean((0, 1))" if listed else "xs.mean((0, 1))")
    if spec.nested:
        fwd += ["h_init = h", "for layer in self.layers:", "    h = h_init"] + _indent(loop, 4) + \
               ["    xs = outs" if listed else "    xs = torch.stack(outs)"]
    else:
        fwd += loop
    if spec.branch and spec.branch.startswith("gates") and spec.branch.endswith("_post"):
        fwd += _gates(spec, "h.mean(0)")
    elif spec.branch == "exit_post":
        fwd += ["if h.sum() > 0:", f"    return {ret}", "h = h * 2 + 1"]
    elif spec.branch == "ifexp_post":
        fwd += ["h = h * 2 if h.mean() > 0 else h - 1"]
    if spec.cell == "lstm_tuple" and spec.branch and spec.branch.endswith("_post") and spec.result in ("last", "counter"):
        fwd.append("state = (h, state[1])")
    fwd.append(f"return {ret}")

    params = ["self", "xs", "h"] + (["ys"] if spec.loop == "zip" else []) + \
        (["gate"] if spec.branch and "_arg_" in spec.branch else [])
    init: list[str] = []
    if spec.nested:
        init.append("self.layers = nn.ModuleList([Layer() for _ in range(2)])")
    else:
        init += _cell_init(spec.cell)
    if spec.branch and spec.branch.startswith("gates"):
        init.append(f"self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(N, N), nn.ReLU()) for _ in range({spec.nblocks})])")
        if "_policy_" in spec.branch:
            # no bias: the decisions follow the signs of the input, so they change between calls
            init.append(f"self.policy = nn.Linear(N, {spec.nblocks}, bias=False)")
    if "train_eval" in knobs:
        init.append("self.drop = nn.Dropout(0.3)")
    if "attr_counter" in spec.hazards:
        init.append("self.count = 0")
    if spec.loop == "while_from_attr":
        init.append(f"self.start = {knobs.get('start', [0])[0]!r}")
    if {"break_tensor", "return_tensor"} & set(spec.hazards):
        init.append(f"self.limit = {LIMITS[spec.cell] * knobs.get('limit', [1.0])[0]!r}")
    if "config_gain" in knobs or "config_flag" in knobs:
        init.append(f"self.cfg = types.SimpleNamespace(gain={knobs.get('config_gain', [1.0])[0]!r}, "
                    f"flip={knobs.get('config_flag', [False])[0]!r})")

    out = ["import io", "BUF = io.StringIO()", "LOG = []", f"N = {N}", f"LENGTHS = {spec.lengths!r}",
           f"SEEDS = {spec.seeds!r}"]
    if spec.loop == "zip" and spec.ylengths:
        out.append(f"YLENGTHS = {spec.ylengths!r}")
    for name, sched in knobs.items():
        out.append(f"SCHED_{name} = {sched!r}")
    if spec.gates is not None:
        out.append(f"GATES = {spec.gates!r}")
    if "global_step" in knobs:
        out.append(f"G_STEP = {knobs['global_step'][0]!r}")
    if "global_bound" in knobs:
        out.append(f"G_BOUND = {knobs['global_bound'][0]!r}")
    if spec.nested:
        out += ["class Layer(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        out += _indent(_cell_init(spec.cell), 8)
    out += ["class M(nn.Module):", "    def __init__(self):", "        super().__init__()"] + _indent(init, 8)
    out += [f"    def forward({', '.join(params)}):"] + _indent(fwd, 8)
    out += ["m = M()"]

    step: list[str] = []
    if "weight_swap" in knobs:
        target, alt, _ = _swap_target(spec)
        out.append(f"_ALT = [{target}, {alt}]")
        step.append(f"{target} = _ALT[SCHED_weight_swap[i]]")
    if "weight_inplace" in knobs:
        _, _, weight = _swap_target(spec)
        step += ["if SCHED_weight_inplace[i]:", "    with torch.no_grad():", f"        {weight}.mul_(0.9)"]
    if "global_step" in knobs:
        step += ["global G_STEP", "G_STEP = SCHED_global_step[i]"]
    if "global_bound" in knobs:
        step += ["global G_BOUND", "G_BOUND = SCHED_global_bound[i]"]
    if "config_gain" in knobs:
        step.append("m.cfg.gain = SCHED_config_gain[i]")
    if "config_flag" in knobs:
        step.append("m.cfg.flip = SCHED_config_flag[i]")
    if "train_eval" in knobs:
        step.append("m.train(SCHED_train_eval[i])")
    if "limit" in knobs and {"break_tensor", "return_tensor"} & set(spec.hazards):
        step.append(f"m.limit = {LIMITS[spec.cell]!r} * SCHED_limit[i]")
    if "start" in knobs and spec.loop == "while_from_attr":
        step.append("m.start = SCHED_start[i]")

    args = ["list(xs.unbind(0))" if listed else "xs", "h"] + (["ys"] if spec.loop == "zip" else []) + \
        (["torch.tensor(GATES[i])"] if spec.gates is not None and spec.branch and "_arg_" in spec.branch else [])
    out += ["def make():", "    return m",
            "def inputs(i):",
            "    g = torch.Generator().manual_seed(SEEDS[i])",
            f"    B = {'SCHED_batch[i]' if 'batch' in knobs else 2}",
            "    xs = torch.randn(LENGTHS[i], B, N, generator=g)",
            "    h = torch.randn(B, N, generator=g) * 0.5"]
    if spec.backward == "inputs":
        out.append("    h.requires_grad_(True)")
    if spec.loop == "zip":
        ys_len = "YLENGTHS[i]" if spec.ylengths else "LENGTHS[i]"
        out.append(f"    ys = torch.randn({ys_len}, B, N, generator=g)")
    out.append(f"    return ({', '.join(args)},), {{}}")
    if step:
        out += ["def step(i):"] + _indent(step, 4)
    if spec.backward:
        out += ["def _tensors(o):",
                "    if isinstance(o, torch.Tensor):",
                "        return [o]",
                "    return [t for e in o for t in _tensors(e)] if isinstance(o, (tuple, list)) else []",
                "def post(out, i):",
                "    ts = [t for t in _tensors(out) if t.requires_grad]",
                "    if ts:",
                "        sum(t.sum() for t in ts).backward()",
                "    return [p.grad for p in m.parameters()]"]
    if "no_grad" in knobs:
        out += ["def context(i):", "    return torch.no_grad() if SCHED_no_grad[i] else contextlib.nullcontext()"]
    out += ["def state():", "    return BUF.getvalue()", f"NCALLS = {spec.ncalls}"]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# shrinking
# ------------------------------------------------------------------------------------------------


def loop_candidates(spec: LoopSpec):
    """Simpler variants of ``spec``, most structural first."""
    R = dataclasses.replace
    for k in range(len(spec.hazards)):
        yield R(spec, hazards=spec.hazards[:k] + spec.hazards[k + 1:])
    for k in range(len(spec.knobs)):
        yield R(spec, knobs=spec.knobs[:k] + spec.knobs[k + 1:])
    if spec.branch:
        yield R(spec, branch=None, gates=None)
    if spec.nested:
        yield R(spec, nested=False)
    if spec.ylengths:
        yield R(spec, ylengths=None)
    if spec.backward:
        yield R(spec, backward=None)
    if spec.result != "last":
        yield R(spec, result="last")
    if spec.acc != "none":
        yield R(spec, acc="none", result="last" if spec.result in OUTS_RESULTS else spec.result,
                hazards=[h for h in spec.hazards if h != "acc_read"])
    if spec.loop != "range_size":
        yield R(spec, loop="range_size")
    if spec.cell != "elman":
        yield R(spec, cell="elman")
    if spec.branch and spec.branch.startswith("gates") and spec.nblocks > 1:
        yield R(spec, nblocks=spec.nblocks - 1, gates=[g[:-1] for g in spec.gates] if spec.gates else None)
    if spec.ncalls > 2:
        for drop in range(spec.ncalls):       # drop one call, keeping the rest of the sequence
            def cut(xs, d=drop):
                return xs[:d] + xs[d + 1:]
            yield R(spec, lengths=cut(spec.lengths), seeds=cut(spec.seeds),
                    gates=cut(spec.gates) if spec.gates else None,
                    ylengths=cut(spec.ylengths) if spec.ylengths else None,
                    knobs=[Knob(k.name, cut(k.schedule)) for k in spec.knobs])
    for p in range(spec.ncalls):
        if spec.lengths[p] > 1:
            yield R(spec, lengths=spec.lengths[:p] + [spec.lengths[p] - 1] + spec.lengths[p + 1:])
    for k, kn in enumerate(spec.knobs):
        for p in range(1, len(kn.schedule)):
            if kn.schedule[p] != kn.schedule[p - 1]:
                new = Knob(kn.name, kn.schedule[:p] + [kn.schedule[p - 1]] + kn.schedule[p + 1:])
                yield R(spec, knobs=spec.knobs[:k] + [new] + spec.knobs[k + 1:])
