"""The third program grammar of the differential fuzzer: *state the call holds or enters*. Six
classes of programs whose outside state changes between calls:

* ``closure``: closures made in the call over a local the frame rebinds after a split (a dynamic
  operation the call is split at: a write of text made from a tensor value, ``heapq.heappush``,
  ``next()`` of an iterator from outside), the closure held in a local, on ``self``, in a list
  made in the call or in one from outside, or a ``def`` called only after the split; a
  ``nonlocal`` counter bumped around a split inside a loop (its reader kept on ``self`` or not),
  a ``nonlocal`` accumulator written before and after the split. The value the local is rebound
  to comes from an argument, a global or an attribute and changes between calls;
* ``registry``: dicts from outside keyed by identity (a class, a pair of classes, a function, a
  pair built in the call, a class passed as an argument, the classes of an object's MRO), read by
  ``get`` (with and without a default), ``setdefault``, ``pop``, ``in``, ``[]`` under ``try`` and
  ``[]`` after ``in``; their values are numbers or functions, and the entry read is added,
  changed or deleted between calls;
* ``native``: natives that read attributes in C: ``sorted``/``min``/``max`` with ``key=
  operator.attrgetter(...)`` (one or two names), ``sum(map(attrgetter('w'), items))``,
  ``sum(map(methodcaller(...)))``, ``"{0.k}".format(cfg)`` and ``"{c.k}".format(c=cfg)``,
  ``functools.reduce(getattr, path, obj)``, a dotted ``attrgetter``; the attribute is changed
  between calls in place or by swapping the object that holds it, or the objects are made in the
  call from an outside list that changes;
* ``mode``: modes entered inside the call: ``np.errstate(divide=/invalid='raise')`` around numpy
  on values read from a tensor argument with ``except FloatingPointError``, ``np.errstate(all=
  'ignore')``, ``warnings.catch_warnings()`` + ``simplefilter('error')`` with ``except
  RuntimeWarning``, ``torch.autograd.set_detect_anomaly(flag)`` read back by
  ``torch.is_anomaly_enabled()``, ``torch.set_printoptions(precision=p)`` around a tensor
  formatted as text, ``torch.set_grad_enabled(flag)``, ``torch.no_grad()`` with
  ``torch.is_grad_enabled()`` read inside, and ``torch.enable_grad()`` inside calls that the
  caller makes under ``torch.no_grad()`` or not. The tensor values (a zero sum, a negative one)
  and the flags change between calls.

* ``cache``: caches and custom autograd: an ``lru_cache`` helper (unbounded, or bounded to one or
  two entries) called on a path the tensor argument's sum chooses, its cache cleared or primed
  with another key between calls; a ``functools.cached_property`` whose instance-dict value is
  deleted or set by hand between calls while the global its getter reads changes; a custom
  ``autograd.Function`` called with gradients whose backward reads a global, or whose forward
  keeps a changing scale on ``ctx``; ``copy.deepcopy`` of a config holding a set that gains or
  swaps values; a check message formatted from a tensor on every call, asked ``callable``.
* ``value``: values from outside whose value C code reads without an attribute read: instances of
  subclasses of ``int`` (a scale, a loop count, an index), ``float`` (a divisor) and ``str`` (a key
  that selects an activation, compared, formatted), a ``decimal.Decimal`` turned into a float, a
  ``datetime.timedelta`` floor-divided; a ``set`` subclass changed in place or swapped and read by
  ``sorted``; numpy arrays of text (an item used as a dict key), of Python floats (summed) and of
  records (a field read) changed in place or swapped. The value lives in an argument, a global or
  an attribute where it can.

Any piece but a closure's may sit after a split of its own. A :class:`StateSpec` is a plain,
printable list of :class:`Piece` (one to three, of any classes); :func:`render_state` turns it into
a soundness program (the format of ``tests/soundness/harness.py``, with a ``post`` that runs
backward into the layer when the output requires grad), :func:`state_candidates` lists its
simpler variants for the shrinker, :func:`piece_class` names the class a (shrunk) find belongs to.
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

CLASSES = ["closure", "registry", "native", "mode", "cache", "value"]

# dynamic operations the call is split at (statements over the running value ``h``)
SPLITS: dict[str, str] = {
    "write": "BUF.write(f'{float(h.sum()):.3f}\\n')",
    "write_item": "BUF.write(f'{h.sum().item():.3f}\\n')",
    "heappush": "heapq.heappush(HEAP, round(float(h.sum()), 3))",
    "next": "TICK.append(next(TICKS))",
}

# class -> form -> variants (the first is the simplest)
FORMS: dict[str, dict[str, list[str]]] = {
    "closure": {form: list(SPLITS) for form in
                ["local", "self", "list", "outer_list", "def_after", "nonlocal_loop", "nonlocal_add", "nonlocal_self"]},
    "registry": {form: ["class", "pair", "func", "made_pair", "arg_class", "mro"] for form in
                 ["get", "get_default", "setdefault", "pop", "in", "getitem", "in_getitem"]},
    "native": {
        "sorted": ["attr", "swap", "made"], "min": ["attr", "swap", "made"], "max": ["attr", "swap", "made"],
        "sorted_two": ["attr", "swap"], "sum_map": ["attr", "swap", "made"], "methodcaller": ["attr", "swap"],
        "format": ["attr", "swap"], "format_kw": ["attr", "swap"], "reduce": ["attr", "swap"],
        "dotted": ["attr", "swap"], "remapped": ["attr", "swap"], "star_forward": ["attr", "swap"],
    },
    "mode": {
        "errstate_divide": ["plain"], "errstate_invalid": ["plain"], "errstate_ignore": ["plain"],
        "warnings_log": ["plain"], "warnings_divide": ["plain"], "anomaly": ["plain"], "printoptions": ["plain"],
        "set_grad": ["plain"], "no_grad_read": ["plain"], "enable_grad": ["plain"],
    },
    "cache": {
        "lru_branch": ["unbounded", "bounded1", "bounded2"], "cached_property": ["plain", "twice"],
        "autograd": ["global_backward", "ctx_scale"], "deepcopy_set": ["plain", "frozen"],
        "text_check": ["plain"],
    },
    "value": {
        "int_sub": ["scale", "count", "index"], "float_sub": ["div"], "str_sub": ["select", "compare", "format"],
        "decimal": ["float"], "timedelta": ["floordiv"], "set_sub": ["inplace", "swap"],
        "np_text": ["inplace", "swap"], "np_object": ["inplace"], "np_record": ["inplace"],
    },
}
# readers of a registry that write to it: a key built in the call must not be stored outside
# (a tuple the call builds and keeps outside is a known limit: one object across matched calls)
REGISTRY_WRITERS = {"setdefault"}
# mode forms that compute with numpy on the tensor argument ``z`` (its values follow ZS)
NUMPY_MODES = {"errstate_divide", "errstate_invalid", "errstate_ignore", "warnings_log", "warnings_divide"}
# where a changing value lives (pieces that read one): an argument, a global, an attribute
SOURCES = ["arg", "global", "attr"]

# the pool each piece's schedule is drawn from
POOL_VALUE = [1.0, 2.0, 0.5, 3.0]                   # a closure's value
POOL_ENTRY = [None, 0, 1]                           # a registry entry: absent, the first or the second value
POOL_PRIO = [1, 4, -2]                              # the priority of the middle item
POOL_WEIGHT = [2.0, 10.0, -1.0]                     # the weight of the middle item
POOL_TAG = ["add", "mul", "sub"]                    # a config's text
POOL_SCALE = [2.0, 5.0, 0.5]                        # a nested attribute
POOL_FLAG = [False, True]
POOL_PRECISION = [2, 4, 6]
POOL_LRU = ["keep", "clear", "prime"]                # between calls: an lru_cache left, cleared, primed
POOL_CPROP = [1.0, 2.0, "del", "set"]               # the getter's global, or the kept value deleted/set
POOL_SET = ["keep", "add", "swap"]                  # a config's set of names
POOL_VALUES = {"int_sub": [1, 2, 3], "float_sub": [1.0, 2.0, 0.5], "str_sub": ["relu", "tanh", "sigmoid"],
               "decimal": ["1.5", "2.5", "0.5"], "timedelta": [1, 2, 5], "set_sub": [("a", "b"), ("a", "c"), ("b", "c", "d")],
               "np_text": ["dog", "cow", "cat"], "np_object": [2.0, 10.0, -1.0], "np_record": [2.0, 5.0, 0.5]}
# the tensor argument's rows (sums zero, negative and positive): numpy modes decide on them
Z_ROWS = [[1.0, 1.0], [1.0, -1.0], [2.0, 2.0], [0.5, -0.5], [3.0, 1.0], [-1.0, -2.0]]


@dataclass
class Piece:
    cls: str
    form: str
    variant: str
    schedule: list                 # the changing value before each call
    src: str = "global"            # where a closure's value or a mode's flag lives (SOURCES)
    after_split: bool = False      # a split right before the piece (pieces that have none of their own)


@dataclass
class StateSpec:
    pieces: list[Piece] = field(default_factory=list)
    zs: list[int] = field(default_factory=lambda: [0, 1, 2, 1, 0])   # Z_ROWS index of each call

    @property
    def ncalls(self) -> int:
        return len(self.zs)

    def signature(self) -> str:
        """A short description of what the program exercises (for grouping finds)."""
        return " ".join(f"{p.cls}:{p.form}/{p.variant}" + (f"/{p.src}" if _reads_value(p) else "")
                        + ("/after_split" if p.after_split else "") for p in self.pieces) or "empty"


def piece_class(spec: StateSpec) -> str:
    """The class of a shrunk find: its pieces' class (several: joined by '+')."""
    return "+".join(sorted({p.cls for p in spec.pieces})) or "none"


def _reads_value(p: Piece) -> bool:
    return p.cls == "closure" or p.form in ("anomaly", "printoptions", "set_grad") \
        or (p.cls == "value" and p.form in _WRAPPED) \
        or (p.form == "autograd" and p.variant == "ctx_scale")


def _pool(p: Piece) -> list:
    if p.cls == "closure":
        return POOL_VALUE
    if p.cls == "registry":
        return POOL_ENTRY
    if p.cls == "native":
        return {"sorted": POOL_PRIO, "min": POOL_PRIO, "max": POOL_PRIO, "sorted_two": POOL_PRIO,
                "sum_map": POOL_WEIGHT, "methodcaller": POOL_WEIGHT, "format": POOL_TAG, "format_kw": POOL_TAG,
                "reduce": POOL_SCALE, "dotted": POOL_SCALE, "remapped": POOL_SCALE,
                "star_forward": POOL_WEIGHT}[p.form]
    if p.cls == "value":
        return POOL_VALUES[p.form]
    if p.cls == "cache":
        return {"lru_branch": POOL_LRU, "cached_property": POOL_CPROP, "autograd": POOL_SCALE,
                "deepcopy_set": POOL_SET, "text_check": [0]}[p.form]
    return {"anomaly": POOL_FLAG, "printoptions": POOL_PRECISION, "set_grad": POOL_FLAG,
            "no_grad_read": POOL_FLAG, "enable_grad": POOL_FLAG}.get(p.form, [0])


# ------------------------------------------------------------------------------------------------
# drawing
# ------------------------------------------------------------------------------------------------


def _repeating(rng: random.Random, pool: list, n: int) -> list:
    """Values for n calls: repeats are likely, so that records made on a miss are hit later."""
    out = [rng.choice(pool)]
    for _ in range(n - 1):
        r = rng.random()
        out.append(out[-1] if r < 0.45 else rng.choice(out) if r < 0.65 else rng.choice(pool))
    return out


def draw_piece(rng: random.Random, n: int, cls: str | None = None) -> Piece:
    cls = cls or rng.choice(CLASSES)
    form = rng.choice(list(FORMS[cls]))
    variants = FORMS[cls][form]
    if cls == "registry" and form in REGISTRY_WRITERS:
        variants = [v for v in variants if v != "made_pair"]
    p = Piece(cls, form, rng.choice(variants), [], rng.choice(SOURCES))
    p.schedule = _repeating(rng, _pool(p), n)
    p.after_split = cls != "closure" and rng.random() < 0.3
    return p


def draw_state_spec(rng: random.Random) -> StateSpec:
    """A program: one to three pieces of any classes; at most one piece that the caller's grad
    mode decides (``context``)."""
    n = rng.randint(4, 7)
    spec = StateSpec(zs=_repeating(rng, list(range(len(Z_ROWS))), n))
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        p = draw_piece(rng, n)
        if p.form in ("enable_grad", "no_grad_read") and any(q.form in ("enable_grad", "no_grad_read")
                                                           for q in spec.pieces):
            continue
        spec.pieces.append(p)
    return spec


# ------------------------------------------------------------------------------------------------
# rendering
# ------------------------------------------------------------------------------------------------


def _lit(v) -> str:
    return repr(v)


class _Out:
    """The parts of a program pieces add lines to."""

    def __init__(self):
        self.head: list[str] = []
        self.init: list[str] = []
        self.fwd: list[str] = []
        self.step: list[str] = []
        self.state: list[str] = []
        self.params: list[str] = []
        self.argvals: list[str] = []
        self.context: str | None = None


def _value(o: _Out, p: Piece, j: int) -> str:
    """Where a piece's changing value lives; an expression forward reads it by."""
    cur = f"SCHED{j}[i]"
    if p.src == "arg":
        o.params.append(f"v{j}")
        o.argvals.append(cur)
        return f"v{j}"
    if p.src == "global":
        o.head.append(f"G{j} = SCHED{j}[0]")
        o.step += [f"global G{j}", f"G{j} = {cur}"]
        return f"G{j}"
    o.init.append(f"self.v{j} = SCHED{j}[0]")
    o.step.append(f"m.v{j} = {cur}")
    return f"self.v{j}"


def _closure(o: _Out, p: Piece, j: int) -> None:
    split = SPLITS[p.variant]
    v = _value(o, p, j)
    k = f"k{j}"
    f = p.form
    if f == "local":
        o.fwd += [f"{k} = 1.0", f"g{j} = lambda: {k}", split, f"{k} = {v}", f"h = h * g{j}()"]
    elif f == "self":
        o.fwd += [f"{k} = 1.0", f"self.get{j} = lambda: {k}", split, f"{k} = {v}", f"h = h * self.get{j}()"]
        o.state.append(f"m.get{j}() if hasattr(m, 'get{j}') else None")
    elif f == "list":
        o.fwd += [f"{k} = 0.5", f"fs{j} = [lambda: {k} * 2]", split, f"{k} = {v}", f"h = h + fs{j}[0]()"]
    elif f == "outer_list":
        o.head.append(f"HELD{j} = []")
        o.fwd += [f"{k} = 0.5", f"HELD{j}[:] = [lambda: {k} + 1]", split, f"{k} = {v}", f"h = h * HELD{j}[0]()"]
        o.state.append(f"[g() for g in HELD{j}]")
    elif f == "def_after":
        o.fwd += [f"{k} = 1.0", f"def g{j}():", f"    return {k} * 2", split, f"{k} = {v}", f"h = h + g{j}()"]
    elif f in ("nonlocal_loop", "nonlocal_self"):
        o.fwd += [f"n{j} = 0", f"def bump{j}():", f"    nonlocal n{j}", f"    n{j} += 1"]
        if f == "nonlocal_self":
            o.fwd.append(f"self.count{j} = lambda: n{j}")
            o.state.append(f"m.count{j}() if hasattr(m, 'count{j}') else None")
        o.fwd += [f"for _ in range({3 if f == 'nonlocal_loop' else 2}):", f"    bump{j}()", f"    {split}",
                  f"    bump{j}()"]
        o.fwd.append(f"h = h * self.count{j}() + {v}" if f == "nonlocal_self" else f"h = h * n{j} + {v}")
    elif f == "nonlocal_add":
        o.fwd += [f"acc{j} = 0.0", f"def add{j}(u):", f"    nonlocal acc{j}", f"    acc{j} += u",
                  f"add{j}({v})", split, f"add{j}(1.0)", f"h = h * acc{j}"]
    else:
        raise ValueError(f)


def _registry(o: _Out, p: Piece, j: int) -> None:
    funcs = p.variant in ("func", "arg_class", "mro") or j % 2 == 1     # values: functions or numbers
    o.head += [f"class Base{j}:", "    pass", f"class Child{j}(Base{j}):", "    pass", f"class Other{j}:", "    pass",
               f"def plus{j}(t):", "    return t + 1", f"def times{j}(t):", "    return t * 3",
               f"def neg{j}(t):", "    return -t"]
    vals = f"[plus{j}, times{j}]" if funcs else "[2.0, 3.0]"
    default = f"neg{j}" if funcs else "0.5"
    o.head += [f"VALS{j} = {vals}", f"REG{j} = {{Other{j}: VALS{j}[0]}}"]
    use = (lambda r: f"{r}(h)") if funcs else (lambda r: f"h * {r}")
    key = {"class": f"Base{j}", "pair": f"(Base{j}, Other{j})", "func": f"plus{j}",
           "made_pair": f"(Base{j}, h.dim())", "arg_class": f"kind{j}", "mro": f"c{j}"}[p.variant]
    stepkey = {"made_pair": f"(Base{j}, 2)", "arg_class": f"Child{j}", "mro": f"Child{j}"}.get(p.variant, key)
    if p.variant == "arg_class":
        o.params.append(f"kind{j}")
        o.argvals.append(f"Child{j}")
        o.head.append(f"REG{j}[Base{j}] = VALS{j}[1]")
    lines: list[str] = []
    if p.variant == "mro":
        # the first class of the object's MRO with an entry (the registry always has Base)
        o.head += [f"REG{j}[Base{j}] = VALS{j}[1]", f"OBJ{j} = Child{j}()"]
        lines += [f"r{j} = None", f"for c{j} in type(OBJ{j}).__mro__:"]
        inner = {
            "get": [f"r{j} = REG{j}.get(c{j})", f"if r{j} is not None:", "    break"],
            "get_default": [f"r{j} = REG{j}.get(c{j}, None)", f"if r{j} is not None:", "    break"],
            "setdefault": [f"if c{j} is Base{j}:", f"    r{j} = REG{j}.setdefault(c{j}, {default})", "    break",
                           f"if c{j} in REG{j}:", f"    r{j} = REG{j}[c{j}]", "    break"],
            "pop": [f"r{j} = REG{j}.pop(c{j}, None)", f"if r{j} is not None:", f"    REG{j}[c{j}] = r{j}", "    break"],
            "in": [f"if c{j} in REG{j}:", f"    r{j} = REG{j}[c{j}]", "    break"],
            "getitem": ["try:", f"    r{j} = REG{j}[c{j}]", "    break", "except KeyError:", "    pass"],
            "in_getitem": [f"if c{j} in REG{j}:", f"    r{j} = REG{j}[c{j}]", "    break"],
        }[p.form]
        lines += ["    " + ln for ln in inner]
        lines += [f"h = h - 1 if r{j} is None else {use(f'r{j}')}"]
    else:
        lines += {
            "get": [f"r{j} = REG{j}.get({key})", f"h = h - 1 if r{j} is None else {use(f'r{j}')}"],
            "get_default": [f"r{j} = REG{j}.get({key}, {default})", f"h = {use(f'r{j}')}"],
            "setdefault": [f"r{j} = REG{j}.setdefault({key}, {default})", f"h = {use(f'r{j}')}"],
            "pop": [f"r{j} = REG{j}.pop({key}, None)", f"h = h - 1 if r{j} is None else {use(f'r{j}')}"],
            "in": [f"h = h + 1 if {key} in REG{j} else h - 1"],
            "getitem": ["try:", f"    r{j} = REG{j}[{key}]", "except KeyError:", f"    r{j} = {default}",
                        f"h = {use(f'r{j}')}"],
            "in_getitem": [f"if {key} in REG{j}:", f"    h = {use(f'REG{j}[{key}]')}"],
        }[p.form]
    o.fwd += lines
    o.step += [f"if SCHED{j}[i] is None:", f"    REG{j}.pop({stepkey}, None)", "else:",
               f"    REG{j}[{stepkey}] = VALS{j}[SCHED{j}[i]]"]
    o.state.append(f"[(_nm(k), _nm(v)) for k, v in REG{j}.items()]")


def _native(o: _Out, p: Piece, j: int) -> None:
    f, var, cur = p.form, p.variant, f"SCHED{j}[i]"
    if f in ("sorted", "min", "max", "sorted_two", "sum_map", "methodcaller"):
        o.head += [f"class Item{j}:", "    def __init__(self, prio, w):", "        self.prio, self.w = prio, w",
                   "    def weight(self):", "        return self.w"]
        field_ = "prio" if f not in ("sum_map", "methodcaller") else "w"
        if var == "made":
            # the items are made in the call from an outside list of (prio, w) pairs
            o.head.append(f"PAIRS{j} = [(2, 1.0), (1, 2.0), (3, 3.0)]")
            o.fwd.append(f"items{j} = [Item{j}(a, b) for a, b in PAIRS{j}]")
            items = f"items{j}"
            new = f"(SCHED{j}[i], 2.0)" if field_ == "prio" else f"(1, SCHED{j}[i])"
            o.step.append(f"PAIRS{j}[1] = {new}")
        else:
            o.head.append(f"ITEMS{j} = [Item{j}(2, 1.0), Item{j}(1, 2.0), Item{j}(3, 3.0)]")
            items = f"ITEMS{j}"
            if var == "attr":
                o.step.append(f"ITEMS{j}[1].{field_} = {cur}")
            else:
                new = f"Item{j}({cur}, 2.0)" if field_ == "prio" else f"Item{j}(1, {cur})"
                o.step.append(f"ITEMS{j}[1] = {new}")
            o.state.append(f"[(it.prio, it.w) for it in ITEMS{j}]")
        o.fwd.append({
            "sorted": f"h = h * sorted({items}, key=operator.attrgetter('prio'))[0].w",
            "min": f"h = h * min({items}, key=operator.attrgetter('prio')).w",
            "max": f"h = h * max({items}, key=operator.attrgetter('prio')).w",
            "sorted_two": f"h = h * sorted({items}, key=operator.attrgetter('prio', 'w'))[-1].w",
            "sum_map": f"h = h * sum(map(operator.attrgetter('w'), {items}))",
            "methodcaller": f"h = h * sum(map(operator.methodcaller('weight'), {items}))",
        }[f])
    elif f in ("format", "format_kw"):
        o.head += [f"class Cfg{j}:", "    def __init__(self, k):", "        self.k = k",
                   f"CFG{j} = Cfg{j}(SCHED{j}[0])"]
        o.step += [f"CFG{j}.k = {cur}"] if var == "attr" else [f"global CFG{j}", f"CFG{j} = Cfg{j}({cur})"]
        fmt = f"'{{0.k}}'.format(CFG{j})" if f == "format" else f"'{{c.k}}'.format(c=CFG{j})"
        o.fwd += [f"tag{j} = {fmt}", f"h = h + 1 if tag{j} == 'add' else (h * 3 if tag{j} == 'mul' else h - 2)"]
    elif f in ("reduce", "dotted"):
        o.head += [f"class Node{j}:", "    pass", f"ROOT{j} = Node{j}()", f"ROOT{j}.child = Node{j}()",
                   f"ROOT{j}.child.scale = SCHED{j}[0]"]
        if var == "attr":
            o.step.append(f"ROOT{j}.child.scale = {cur}")
        else:
            o.step += [f"ROOT{j}.child = Node{j}()", f"ROOT{j}.child.scale = {cur}"]
        read = (f"functools.reduce(getattr, ['child', 'scale'], ROOT{j})" if f == "reduce"
                else f"operator.attrgetter('child.scale')(ROOT{j})")
        o.fwd.append(f"h = h * {read}")
        o.state.append(f"ROOT{j}.child.scale")
    elif f == "remapped":
        # a transformers-style config: its own __getattribute__ maps names through a class table
        o.head += [f"class Conf{j}:", "    attribute_map = {'factor': 'scale'}",
                   "    def __init__(self, v):", "        self.scale = v",
                   "    def __getattribute__(self, key):",
                   "        if key != 'attribute_map' and key in super().__getattribute__('attribute_map'):",
                   "            key = super().__getattribute__('attribute_map')[key]",
                   "        return super().__getattribute__(key)",
                   f"CONF{j} = Conf{j}(SCHED{j}[0])"]
        o.step += [f"CONF{j}.scale = {cur}"] if var == "attr" else [f"global CONF{j}", f"CONF{j} = Conf{j}({cur})"]
        o.fwd.append(f"h = h * CONF{j}.factor + isinstance(CONF{j}, Conf{j})")
        o.state.append(f"CONF{j}.scale")
    elif f == "star_forward":
        # a wrapper forwarding `(self, *args)` (a list built and dropped per call) in a loop
        o.head += [f"W{j} = [1.0, SCHED{j}[0], 3.0]", f"def inner{j}(t, k, *rest):", f"    return t * W{j}[k] + len(rest)",
                   f"def outer{j}(t, *args):", f"    return inner{j}(t, *args)"]
        o.step += [f"W{j}[1] = {cur}"] if var == "attr" else [f"global W{j}", f"W{j} = [1.0, {cur}, 3.0]"]
        o.fwd += [f"for k{j} in range(3):", f"    h = outer{j}(h, k{j} % 2, 0.5) * 0.5"]
        o.state.append(f"list(W{j})")
    else:
        raise ValueError(f)


def _mode(o: _Out, p: Piece, j: int) -> None:
    f = p.form
    a = f"a{j} = z.detach().numpy()"
    if f == "errstate_divide":
        o.fwd += [a, "try:", "    with np.errstate(divide='raise'):", f"        r{j} = np.float64(1.0) / a{j}.sum()",
                  f"    h = h * float(r{j})", "except FloatingPointError:", "    h = h - 1"]
    elif f == "errstate_invalid":
        o.fwd += [a, "try:", "    with np.errstate(invalid='raise'):", f"        r{j} = np.sqrt(a{j}.sum())",
                  f"    h = h * float(r{j})", "except FloatingPointError:", "    h = h - 2"]
    elif f == "errstate_ignore":
        o.fwd += [a, "with np.errstate(all='ignore'):", f"    r{j} = np.float64(1.0) / a{j}.sum()",
                  f"h = h * float(np.nan_to_num(r{j}, posinf=7.0, neginf=-7.0))"]
    elif f == "warnings_log":
        o.fwd += [a, "with warnings.catch_warnings():", "    warnings.simplefilter('error')", "    try:",
                  f"        r{j} = float(np.log(a{j}.sum()))", "    except RuntimeWarning:", f"        r{j} = -1.0",
                  f"h = h * r{j}"]
    elif f == "warnings_divide":
        o.fwd += [a, "with warnings.catch_warnings():", "    warnings.simplefilter('error')", "    try:",
                  f"        r{j} = float(np.float64(1.0) / a{j}.sum())", "    except RuntimeWarning:",
                  f"        r{j} = 0.25", f"h = h * r{j}"]
    elif f == "anomaly":
        v = _value(o, p, j)
        o.fwd += [f"with torch.autograd.set_detect_anomaly({v}):",
                  "    h = h * 2 + (1.0 if torch.is_anomaly_enabled() else 0.0)",
                  "h = h + (1.0 if torch.is_anomaly_enabled() else 0.0)"]
    elif f == "printoptions":
        v = _value(o, p, j)
        o.fwd += [f"torch.set_printoptions(precision={v})", f"s{j} = repr(z * 1.123456789)",
                  "torch.set_printoptions(profile='default')", f"LOG.append(s{j})", f"h = h + len(s{j})"]
    elif f == "set_grad":
        v = _value(o, p, j)
        o.fwd += [f"with torch.set_grad_enabled({v}):", "    h = h * 2"]
    elif f == "no_grad_read":
        o.context = f"SCHED{j}"
        o.fwd += ["g_ = torch.is_grad_enabled()", "with torch.no_grad():",
                  "    h = h + (1.0 if torch.is_grad_enabled() else 2.0)", "h = h * (3.0 if g_ else 0.5)"]
    elif f == "enable_grad":
        o.context = f"SCHED{j}"
        o.fwd += ["with torch.enable_grad():", "    h = h * 2 + (1.0 if torch.is_grad_enabled() else 0.0)"]
    else:
        raise ValueError(f)


def _cache(o: _Out, p: Piece, j: int) -> None:
    f, cur = p.form, f"SCHED{j}[i]"
    if f == "lru_branch":
        size = {"unbounded": "None", "bounded1": "1", "bounded2": "2"}[p.variant]
        o.head += [f"BODY{j} = []", f"@functools.lru_cache(maxsize={size})", f"def coef{j}(k):",
                   f"    BODY{j}.append(k)", "    return k * 0.5 + 1.0"]
        o.fwd += ["if z.sum() > 0:", f"    h = h * coef{j}(1)", "else:", f"    h = h + coef{j}(2)"]
        o.step += [f"if {cur} == 'clear':", f"    coef{j}.cache_clear()", f"elif {cur} == 'prime':",
                   f"    coef{j}(3)"]
        o.state += [f"tuple(coef{j}.cache_info())", f"list(BODY{j})"]
    elif f == "cached_property":
        o.head += [f"PV{j} = 1.0", f"GETS{j} = []", f"class Held{j}:", "    @functools.cached_property",
                   "    def k(self):", f"        GETS{j}.append(PV{j})", f"        return PV{j} * 2",
                   f"HELD{j} = Held{j}()"]
        o.fwd.append(f"h = h * HELD{j}.k")
        if p.variant == "twice":
            o.fwd.append(f"h = h + HELD{j}.k")
        o.step += [f"if {cur} == 'del':", f"    HELD{j}.__dict__.pop('k', None)", f"elif {cur} == 'set':",
                   f"    HELD{j}.k = 0.25", "else:", f"    global PV{j}", f"    PV{j} = {cur}"]
        o.state += [f"list(GETS{j})", f"HELD{j}.__dict__.get('k')"]
    elif f == "autograd":
        o.head += [f"SB{j} = 1.0", f"class Fn{j}(torch.autograd.Function):", "    @staticmethod",
                   "    def forward(ctx, t, s):", "        ctx.s = s", "        return t * 2",
                   "    @staticmethod", "    def backward(ctx, g):",
                   f"        return g * ctx.s * SB{j}, None"]
        if p.variant == "global_backward":
            o.fwd.append(f"h = Fn{j}.apply(h, 1.5)")
            o.step += [f"global SB{j}", f"SB{j} = {cur}"]
        else:
            v = _value(o, p, j)
            o.fwd.append(f"h = Fn{j}.apply(h, {v})")
    elif f == "deepcopy_set":
        make = "frozenset" if p.variant == "frozen" else "set"
        o.head += [f"class Cfg{j}:", "    def __init__(self):", f"        self.names = {make}({{'a', 'bb'}})",
                   f"CFG{j} = Cfg{j}()"]
        o.fwd += [f"c{j} = copy.deepcopy(CFG{j})", f"h = h * len(c{j}.names) + len(min(c{j}.names))"]
        o.step += [f"if {cur} == 'add':", f"    CFG{j}.names = {make}(CFG{j}.names | {{'c' * (i + 1)}})",
                   f"elif {cur} == 'swap':", f"    CFG{j}.names = {make}({{'x', 'yyy'}})"]
        o.state.append(f"sorted(CFG{j}.names)")
    elif f == "text_check":
        o.head += [f"def check{j}(cond, msg):", "    if not callable(msg):", "        def msg_fn():",
                   "            return msg", "    else:", "        msg_fn = msg", "    if not cond:",
                   "        raise ValueError(msg_fn())"]
        o.fwd += [f"check{j}(bool((h.abs() >= 0).all()), f'bad values {{h}}')", "h = h + 1"]
    else:
        raise ValueError(f)


# value forms whose value is wrapped in its type and lives where ``_value`` puts it
_WRAPPED = {"int_sub": "Num(v)", "float_sub": "Real(v)", "str_sub": "Name(v)",
            "decimal": "decimal.Decimal(v)", "timedelta": "datetime.timedelta(hours=v)"}
# the subclasses, made once per process: the harness compares the eager world's values with the
# compiled world's, and classes made in each world would never compare equal
_SHARED_TYPES = [
    "_VT = sys.modules.get('fuzz_value_types')",
    "if _VT is None:",
    "    _VT = sys.modules['fuzz_value_types'] = types.ModuleType('fuzz_value_types')",
    "    for _n, _b in (('Num', int), ('Real', float), ('Name', str), ('Names', set)):",
    "        setattr(_VT, _n, type(_n, (_b,), {'__module__': 'fuzz_value_types'}))",
    "Num, Real, Name, Names = _VT.Num, _VT.Real, _VT.Name, _VT.Names",
]


def _value_piece(o: _Out, p: Piece, j: int) -> None:
    f, var, cur = p.form, p.variant, f"SCHED{j}[i]"
    if f in _WRAPPED:
        o.head += _SHARED_TYPES + [f"SCHED{j} = [{_WRAPPED[f]} for v in SCHED{j}]"]
        v = _value(o, p, j)
        o.fwd.append({
            ("int_sub", "scale"): f"h = h * {v}",
            ("int_sub", "count"): f"for _ in range({v}):\n            h = h * 1.5",
            ("int_sub", "index"): f"h = h * torch.arange(1.0, 5.0)[{v}]",
            ("float_sub", "div"): f"h = h / {v}",
            ("str_sub", "select"): f"h = {{'relu': torch.relu, 'tanh': torch.tanh, 'sigmoid': torch.sigmoid}}[{v}](h)",
            ("str_sub", "compare"): f"h = h * 2 if {v} == 'tanh' else h - 1",
            ("str_sub", "format"): f"h = h * len(f'<{{{v}}}>')",
            ("decimal", "float"): f"h = h * float({v})",
            ("timedelta", "floordiv"): f"h = h * ({v} // datetime.timedelta(hours=1))",
        }[f, var])
        return
    if f == "set_sub":
        o.head += _SHARED_TYPES + [f"EN{j} = Names(SCHED{j}[0])"]
        o.step += ([f"EN{j}.clear()", f"EN{j}.update({cur})"] if var == "inplace"
                   else [f"global EN{j}", f"EN{j} = Names({cur})"])
        o.fwd.append(f"h = h * len(sorted(EN{j})) + (1.0 if sorted(EN{j})[-1] == 'd' else 0.0)")
        o.state.append(f"sorted(EN{j})")
        return
    if f == "np_text":
        o.head += [f"LAB{j} = np.array(['cat', SCHED{j}[0]])", f"W{j} = {{'cat': 1.0, 'dog': 2.0, 'cow': 5.0}}"]
        o.step += ([f"LAB{j}[1] = {cur}"] if var == "inplace"
                   else [f"global LAB{j}", f"LAB{j} = np.array(['cat', {cur}])"])
        o.fwd.append(f"h = h * W{j}[LAB{j}[1]]")
        o.state.append(f"LAB{j}.tolist()")
    elif f == "np_object":
        o.head.append(f"COEF{j} = np.array([1.0, SCHED{j}[0]], dtype=object)")
        o.step.append(f"COEF{j}[1] = {cur}")
        o.fwd.append(f"h = h + COEF{j}.sum()")
        o.state.append(f"COEF{j}.tolist()")
    elif f == "np_record":
        o.head += [f"TAB{j} = np.zeros(2, dtype=[('scale', 'f4'), ('k', 'i4')])", f"TAB{j}['scale'] = [SCHED{j}[0], 1.0]"]
        o.step.append(f"TAB{j}['scale'][0] = {cur}")
        o.fwd.append(f"h = h * float(TAB{j}['scale'][0])")
        o.state.append(f"TAB{j}['scale'].tolist()")
    else:
        raise ValueError(f)


def render_state(spec: StateSpec) -> str:
    """The soundness-program source for ``spec``."""
    o = _Out()
    for j, p in enumerate(spec.pieces):
        o.head.append(f"SCHED{j} = {p.schedule!r}")
        if p.after_split and p.cls != "closure":
            o.fwd.append(SPLITS["write"])
        {"closure": _closure, "registry": _registry, "native": _native, "mode": _mode,
         "cache": _cache, "value": _value_piece}[p.cls](o, p, j)
    out = ["import copy, datetime, decimal, functools, heapq, io, itertools, warnings", "BUF = io.StringIO()", "LOG = []", "HEAP = []", "TICK = []",
           "TICKS = itertools.count()",
           "def _nm(k):", "    return tuple(_nm(c) for c in k) if isinstance(k, tuple) else getattr(k, '__name__', k)", f"Z_ROWS = {Z_ROWS!r}", f"ZS = {spec.zs!r}"] + o.head
    out += ["class M(nn.Module):", "    def __init__(self):", "        super().__init__()",
            "        self.lin = nn.Linear(2, 2)"]
    out += ["        " + ln for ln in o.init]
    out += [f"    def forward({', '.join(['self', 'x', 'z'] + o.params)}):", "        h = self.lin(x)"]
    out += ["        " + ln for ln in o.fwd] + ["        return h"]
    out += ["m = M()", "def make():", "    return m", "def inputs(i):",
            "    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(i % 2))",
            "    z = torch.tensor(Z_ROWS[ZS[i]], dtype=torch.float64)",
            f"    return ({', '.join(['x', 'z'] + o.argvals)},), {{}}"]
    if o.step:
        out += ["def step(i):"] + ["    " + ln for ln in o.step]
    if o.context:
        out += ["def context(i):", f"    return torch.no_grad() if {o.context}[i] else contextlib.nullcontext()"]
    out += ["def post(out, i):", "    if isinstance(out, torch.Tensor) and out.requires_grad:",
            "        out.sum().backward()", "    return [p.grad for p in m.parameters()]"]
    out += ["def state():", f"    return (LOG, BUF.getvalue(), list(HEAP), list(TICK), [{', '.join(o.state)}])",
            f"NCALLS = {spec.ncalls}"]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# shrinking
# ------------------------------------------------------------------------------------------------


def state_candidates(spec: StateSpec):
    """Simpler variants of ``spec``, most structural first."""
    R = dataclasses.replace
    for k in range(len(spec.pieces)):
        if len(spec.pieces) > 1:
            yield R(spec, pieces=spec.pieces[:k] + spec.pieces[k + 1:])

    def with_piece(k, new):
        return R(spec, pieces=spec.pieces[:k] + [new] + spec.pieces[k + 1:])

    for k, p in enumerate(spec.pieces):
        if p.after_split:
            yield with_piece(k, R(p, after_split=False))
        first = FORMS[p.cls][p.form][0]
        if p.variant != first:
            yield with_piece(k, R(p, variant=first))
        if _reads_value(p) and p.src != "arg":
            yield with_piece(k, R(p, src="arg"))
    if spec.ncalls > 2:
        for d in range(spec.ncalls):          # drop one call, keeping the rest of the sequence
            def cut(xs, d=d):
                return xs[:d] + xs[d + 1:]
            yield R(spec, zs=cut(spec.zs), pieces=[R(p, schedule=cut(p.schedule)) for p in spec.pieces])
    for p_ in range(1, spec.ncalls):
        if spec.zs[p_] != spec.zs[p_ - 1]:
            yield R(spec, zs=spec.zs[:p_] + [spec.zs[p_ - 1]] + spec.zs[p_ + 1:])
    for k, p in enumerate(spec.pieces):
        for q in range(1, len(p.schedule)):
            if p.schedule[q] != p.schedule[q - 1]:
                yield with_piece(k, R(p, schedule=p.schedule[:q] + [p.schedule[q - 1]] + p.schedule[q + 1:]))
