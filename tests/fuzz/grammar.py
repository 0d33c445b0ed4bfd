"""The program grammar of the differential fuzzer: *where a value lives* x *how the program reads it*
x *how it changes between calls*, plus objects made in the call, memo tables keyed by the value or
by ``id()``, the layer the model wraps and how the inputs are passed.

A :class:`Spec` is a plain, printable tree of choices. :func:`draw_spec` draws one from a
``random.Random``; :func:`render` turns it into a soundness program (the format of
``tests/soundness/harness.py``), so a find can be pasted into the soundness suite as it is. The
shrinker (``shrink.py``) works on the Spec, not on the text.

Every rendered program is a ``nn.Module`` whose ``forward`` reads one or more *slots*. A slot is a
value with a location (argument, keyword default, global, closure cell, instance/class attribute,
property, nested config object, an object or class whose own ``__getattribute__`` (or metaclass's)
remaps the name read, list/dict/deque/array/bytearray item, tensor buffer), a reader (the
top frame, a helper frame, a comprehension, a generator expression, a lambda, an inner ``def``, a
``with`` or ``try`` block, after a dynamic operation that splits the call, inside a function made
in the call that splits) and a use (arithmetic, a branch on it or on a tensor compared with it,
formatting into an outside log, ``math.copysign``, a shape, ``getattr`` by name, identity/membership
tests, a value kept outside and found again by identity). Between calls the slot's value follows
a schedule (rebinding or mutating in place, including ``0.0``/``-0.0``, NaN and type changes), and
its attribute precedence can change (a property put over an instance attribute, an instance
attribute over a class attribute or a buffer).
"""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field

# ------------------------------------------------------------------------------------------------
# value kinds and their pools
# ------------------------------------------------------------------------------------------------

NAN = float("nan")
INF = float("inf")

POOLS: dict[str, list] = {
    "int": [1, 2, 0, 3, -1],
    "float": [1.5, 0.0, -0.0, -2.0, NAN, INF, 2.0],
    "mixed": [1, 1.0, True, 0, 0.0, -0.0, False],
    "str": ["relu", "tanh", "sigmoid"],
    "optional": [None, 2, 3],
    "byte": [1, 2, 0, 255],
}

# uses per value kind: each is a template over the tensor ``t`` and the value ``v``
USES: dict[str, list[str]] = {
    "num": ["mul", "add", "branch", "fmt", "repr", "copysign", "shape", "member", "isinstance", "raise", "loop",
            "tbranch", "tbranch_log", "stash", "keyed", "tslice"],
    "str": ["eq", "getattr", "fmt", "table", "len"],
    "optional": ["isnone", "fmt", "truthy"],
}


def use_kind(kind: str) -> str:
    return {"str": "str", "optional": "optional"}.get(kind, "num")


def render_use(use: str, t: str, v: str) -> str:
    """An expression that uses value ``v`` on tensor ``t`` and returns a tensor."""
    return {
        "mul": f"{t} * {v}",
        "add": f"{t} + {v}",
        "branch": f"({t} + 1 if {v} > 0 else {t} - 1)",
        "fmt": f"_log({t}, '{{}}'.format({v}))",
        "repr": f"_log({t}, repr({v}))",
        "copysign": f"{t} * math.copysign(1.0, {v})",
        "shape": f"{t}.repeat(1, int(abs({v})) % 3 + 1)",
        "member": f"({t} * 2 if {v} in (0, 2) else {t})",
        "eq": f"({t} + 1 if {v} == 'relu' else {t} - 1)",
        "getattr": f"getattr(torch, {v})({t})",
        "table": f"{t} * {{'relu': 1, 'tanh': 2}}.get({v}, 3)",
        "len": f"{t} * len({v})",
        "isnone": f"({t} if {v} is None else {t} * {v})",
        "truthy": f"({t} + 1 if {v} else {t})",
        "isinstance": f"({t} + 1 if isinstance({v}, float) else {t} - 1)",
        "raise": f"_positive({t}, {v})",
        "loop": f"_repeat({t}, {v})",
        # branches on a tensor value (conditional nodes, the other-side run: magpy.dynamic), one
        # whose side replays an effect (an other-side run must stop before it)
        "tbranch": f"({t} * 2 if {t}.sum() > {v} else {t} - 1)",
        "tbranch_log": f"(_log({t} * 2, 'big') if {t}.sum() > {v} else {t} - 1)",
        # kept outside, then found again by identity first (`in`, list.index, a dict key): a NaN
        # is found only as the very object
        "stash": f"_stash({t}, {v})",
        "keyed": f"_keyed({t}, {v})",
        # a slice bounded by a one-element tensor made from the value, then changed in place from
        # tensor values and used again (a number of the record only while nothing moves it)
        "tslice": f"_tslice({t}, {v})",
    }[use]


# where a value lives; which kinds each location can hold
LOCATIONS: dict[str, tuple[str, ...]] = {
    "arg": ("int", "float", "mixed", "str", "optional"),
    "kwarg": ("int", "float", "str", "optional"),
    "kwdefault": ("int", "float", "str"),
    "default": ("int", "float", "str"),
    "global": ("int", "float", "mixed", "str", "optional"),
    "cell": ("int", "float", "str"),
    "attr": ("int", "float", "mixed", "str", "optional"),
    "classattr": ("int", "float", "str"),
    "property": ("int", "float", "str"),
    "nested": ("int", "float", "str"),
    "hooked": ("int", "float", "str"),
    "metaattr": ("int", "float", "str"),
    "list": ("int", "float", "str"),
    "dict": ("int", "float", "str"),
    "deque": ("int", "float", "str"),
    "array": ("float",),
    "bytearray": ("byte",),
    "buffer": ("float",),
    "param": ("float",),
}

READERS = ["top", "helper", "listcomp", "genexpr", "lambda", "innerdef", "with", "try",
           "aftersplit", "splitinner", "splitcapture", "dictloop"]

# attribute-precedence changes that a location admits (applied by step() at one call)
PRECEDENCE = {
    "attr": "property_over_instance",       # M.s = property(...) wins over m.__dict__['s']
    "classattr": "instance_over_class",     # m.s = v shadows M.s
    "buffer": "instance_over_buffer",       # object.__setattr__(m, 's', t) wins over _buffers['s']
    "dict": "reorder",                      # the entry read moves to the end (iteration order changes)
}

# outside state the forward writes after its reads, from the first slot's value and the result
WRITES = ["attr", "global", "append", "counter", "inplace_arg", "dict_item", "cell"]
MADE = ["set", "set_discard", "defaultdict", "deque_maxlen", "ordereddict", "counter", "list_sub"]
MEMO_KEYS = ["id_x", "value", "hash", "fmt"]
LAYERS = ["linear", "bn_cma", "bn", "layernorm", "identity", "dropout"]
INPUTS = ["fresh", "pool", "same"]


@dataclass
class Slot:
    loc: str
    kind: str
    reader: str
    use: str
    schedule: list          # the value before each call
    precedence_at: int = -1  # call index at which the precedence change happens (-1: never)


@dataclass
class Spec:
    slots: list[Slot] = field(default_factory=list)
    made: str | None = None
    write: str | None = None             # an outside write after the reads (WRITES)
    memo: str | None = None
    layer: str = "linear"
    train_schedule: list | None = None   # module.train(b) before each call, None: stays in train mode
    inputs: str = "fresh"
    ncalls: int = 5

    def signature(self) -> str:
        """A short description of what the program exercises (for grouping finds)."""
        parts = [f"{s.loc}/{s.kind}/{s.reader}/{s.use}" + ("/prec" if s.precedence_at >= 0 else "")
                 for s in self.slots]
        if self.write:
            parts.append(f"write:{self.write}")
        if self.made:
            parts.append(f"made:{self.made}")
        if self.memo:
            parts.append(f"memo:{self.memo}")
        if self.layer != "linear":
            parts.append(f"layer:{self.layer}")
        if self.inputs != "fresh":
            parts.append(f"inputs:{self.inputs}")
        return " ".join(parts) or "empty"


# ------------------------------------------------------------------------------------------------
# drawing
# ------------------------------------------------------------------------------------------------


def draw_schedule(rng: random.Random, pool: list, n: int) -> list:
    """Values for n calls: repeats are likely, so that records made on a miss are hit later."""
    out = [rng.choice(pool)]
    for _ in range(n - 1):
        r = rng.random()
        out.append(out[-1] if r < 0.6 else rng.choice(out) if r < 0.8 else rng.choice(pool))
    return out


def draw_slot(rng: random.Random, ncalls: int) -> Slot:
    loc = rng.choice(list(LOCATIONS))
    kind = rng.choice(LOCATIONS[loc])
    reader = rng.choice(READERS)
    use = rng.choice(USES[use_kind(kind)])
    if kind == "byte" and use in ("shape",):
        use = "mul"
    sched = draw_schedule(rng, POOLS[kind], ncalls)
    prec = rng.randrange(1, ncalls) if loc in PRECEDENCE and rng.random() < 0.3 else -1
    return Slot(loc, kind, reader, use, sched, prec)


def draw_spec(rng: random.Random) -> Spec:
    ncalls = rng.randint(4, 7)
    spec = Spec(ncalls=ncalls)
    spec.slots = [draw_slot(rng, ncalls) for _ in range(rng.choice([1, 1, 2, 2, 3]))]
    if rng.random() < 0.25:
        spec.made = rng.choice(MADE)
    if rng.random() < 0.2:
        spec.memo = rng.choice(MEMO_KEYS)
    if rng.random() < 0.3:
        spec.write = rng.choice(WRITES)
    if rng.random() < 0.3:
        spec.layer = rng.choice(LAYERS)
    if spec.layer.startswith("bn") and rng.random() < 0.5:
        spec.train_schedule = draw_schedule(rng, [True, False], ncalls)
    spec.inputs = rng.choice(INPUTS) if rng.random() < 0.4 else "fresh"
    if spec.memo == "id_x" and spec.inputs == "fresh":
        spec.inputs = "pool"
    return spec


# ------------------------------------------------------------------------------------------------
# rendering
# ------------------------------------------------------------------------------------------------


def lit(v) -> str:
    """Python source for a pool value (NaN/inf/-0.0 included)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        if v == 0.0 and math.copysign(1.0, v) < 0:
            return "-0.0"
    return repr(v)


def _indent(lines: list[str], n: int = 8) -> list[str]:
    return [" " * n + ln if ln else ln for ln in lines]


def _read_expr(s: Slot, name: str) -> str:
    return {
        "arg": name,
        "kwarg": name,
        "kwdefault": name,
        "default": name,
        "global": f"G_{name}",
        "cell": f"_get_{name}()",
        "attr": f"self.{name}",
        "classattr": f"self.{name}",
        "property": f"self.{name}",
        "nested": f"self.cfg.{name}",
        "hooked": f"self.hc_{name}.{name}",
        "metaattr": f"Meta_{name}.{name}",
        "list": f"self.L_{name}[1]",
        "dict": f"self.D_{name}['k']",
        "deque": f"self.Q_{name}[1]",
        "array": f"self.A_{name}[1]",
        "bytearray": f"self.B_{name}[1]",
        "buffer": f"float(self.{name})",
        "param": f"self.{name}.item()",
    }[s.loc]


def _reader_lines(s: Slot, name: str, j: int) -> list[str]:
    """Lines of forward that read slot ``s`` and update ``h``."""
    e = _read_expr(s, name)
    u = lambda t, v=e: render_use(s.use, t, v)  # noqa: E731
    split = "BUF.write(f'{float(h.sum()):.3f}\\n')"
    r = s.reader
    if r == "top":
        return [f"h = {u('h')}"]
    if r == "helper":
        return [f"h = _use_{name}(h, {e})"]
    if r == "listcomp":
        return [f"h = torch.stack([{u('r')} for r in h.unbind(0)])"]
    if r == "genexpr":
        return [f"h = h + sum({u('r')} for r in h.unbind(0))"]
    if r == "lambda":
        return [f"fn{j} = lambda t: {u('t')}", f"h = fn{j}(h)"]
    if r == "innerdef":
        return [f"def inner{j}(t):", f"    return {u('t')}", f"h = inner{j}(h)"]
    if r == "with":
        return ["with contextlib.nullcontext():", f"    h = {u('h')}"]
    if r == "try":
        return ["try:", f"    h = {u('h')}", "except (ValueError, ZeroDivisionError):", "    h = h - 1"]
    if r == "aftersplit":
        return [split, f"h = {u('h')}"]
    if r == "splitinner":
        return [f"def inner{j}(t):", "    BUF.write(f'{float(t.sum()):.3f}\\n')", f"    return {u('t')}",
                f"h = inner{j}(h)"]
    if r == "splitcapture":
        return [f"w{j} = {e}", f"fn{j} = lambda t: {render_use(s.use, 't', f'w{j}')}", split, f"h = fn{j}(h)"]
    if r == "dictloop":
        # a dict loop with a split in its body; the value of a later key is updated before it is reached
        d = f"self.D_{name}" if s.loc == "dict" else f"{{'k': {e}, 'z': 0}}"
        return [f"d{j} = {d}", f"for key{j}, val{j} in d{j}.items():", f"    {split}", f"    if key{j} == 'k':",
                f"        d{j}['z'] = 5", f"        h = {render_use(s.use, 'h', f'val{j}')}", "    else:",
                f"        h = h + val{j}"]
    raise ValueError(r)


def _layer(spec: Spec) -> str:
    return {
        "linear": "nn.Linear(4, 4)",
        "bn_cma": "nn.BatchNorm1d(4, momentum=None)",
        "bn": "nn.BatchNorm1d(4)",
        "layernorm": "nn.LayerNorm(4)",
        "identity": "nn.Identity()",
        "dropout": "nn.Dropout(0.5)",
    }[spec.layer]


def _made_lines(made: str, src: str) -> list[str]:
    """Lines making an object in the call (from ``h`` and a value expression), stored on self."""
    if made == "set":
        return ["S = set()", "for k in (16, 8, 0, 3, 24):", "    S.add(k + int(h.shape[0]))", "self.made = S"]
    if made == "set_discard":
        return ["S = {f'k{i}' for i in range(9)}", "for i in range(0, 9, 2):", "    S.discard(f'k{i}')",
                "S.add('z')", "self.made = S"]
    if made == "defaultdict":
        return ["D = collections.defaultdict(list)", "D['a'].append(float(h.sum() > 0))", "self.made = D"]
    if made == "deque_maxlen":
        return ["Q = collections.deque(maxlen=2)", "for k in range(3):", "    Q.append(k)", "self.made = Q"]
    if made == "ordereddict":
        return ["O = collections.OrderedDict(a=1, b=2, c=3)", "O.move_to_end('a')", "self.made = O"]
    if made == "counter":
        return ["C = collections.Counter('abcab')", "self.made = C"]
    if made == "list_sub":
        return ["T = Tagged([1, 2])", "T.tag = 'x'", "self.made = T"]
    raise ValueError(made)


def _memo_lines(memo: str, e: str | None) -> list[str]:
    key = {"id_x": "id(x)", "value": e or "0", "hash": f"hash({e or 0})", "fmt": f"'{{}}'.format({e or 0})"}[memo]
    return [f"k_ = {key}", "if k_ not in _MEMO:", "    _MEMO[k_] = h * 2 + len(_MEMO)", "h = h + _MEMO[k_]"]


def render(spec: Spec) -> str:
    """The soundness-program source for ``spec``."""
    n = spec.ncalls
    head: list[str] = ["import array, io", "BUF = io.StringIO()", "LOG = []", "_MEMO = {}",
                       "def _log(t, s):", "    LOG.append(s)", "    return t",
                       "def _positive(t, v):", "    if v < 0:", "        raise ValueError('negative')", "    return t * v",
                       "def _repeat(t, v):", "    for _ in range(int(abs(v)) % 3):", "        t = t + 1", "    return t",
                       "STASH = []", "def _stash(t, v):", "    STASH.append(v)",
                       "    return t + STASH.index(v) + (1 if v in STASH else 0)",
                       "KEYED = {}", "def _keyed(t, v):", "    KEYED.setdefault(v, len(KEYED))", "    return t * (KEYED[v] + 1)",
                       "def _tslice(t, v):",
                       "    n = int(v) % 3 + 1 if isinstance(v, (int, float)) and v == v and abs(v) != float('inf') else 1",
                       "    k = torch.tensor(n)", "    flat = t.flatten()", "    a = flat[:k].sum()",
                       "    k[...] = k + (flat[0] > 0).long()", "    return t + a + flat[k - 1:k].sum()",
                       "class Tagged(list):", "    pass"]
    cls: list[str] = []           # class body lines (4-space indent)
    init: list[str] = []          # __init__ body lines after super().__init__()
    params: list[str] = ["self", "x"]
    defaults: list[tuple[str, str]] = []     # (parameter with its default, the schedule's value now)
    kwonly: list[str] = []
    fwd: list[str] = ["h = self.lin(x)"]
    step: list[str] = []
    argvals: list[str] = []
    kwvals: list[str] = []
    names = []
    for j, s in enumerate(spec.slots):
        name = f"s{j}"
        names.append(name)
        v0 = lit(s.schedule[0])
        sched = f"SCHED_{name} = [{', '.join(lit(v) for v in s.schedule)}]"
        head.append(sched)
        cur = f"SCHED_{name}[i]"
        if s.loc == "arg":
            params.append(name)
            argvals.append(cur)
        elif s.loc == "kwarg":
            kwonly.append(f"{name}={v0}")
            kwvals.append(f"'{name}': {cur}")
        elif s.loc == "default":
            defaults.append((f"{name}={v0}", cur))
        elif s.loc == "kwdefault":
            kwonly.append(f"{name}={v0}")
            step.append(f"M.forward.__kwdefaults__['{name}'] = {cur}")
        elif s.loc == "global":
            head.append(f"G_{name} = {v0}")
            step.append(f"global G_{name}")
            step.append(f"G_{name} = {cur}")
        elif s.loc == "cell":
            head += [f"def _mkcell_{name}():", f"    val = {v0}", "    def get():", "        return val",
                     "    def put(n):", "        nonlocal val", "        val = n", "    return get, put",
                     f"_get_{name}, _put_{name} = _mkcell_{name}()"]
            step.append(f"_put_{name}({cur})")
        elif s.loc == "attr":
            init.append(f"self.{name} = {v0}")
            step.append(f"m.__dict__['{name}'] = {cur}" if s.precedence_at >= 0 else f"m.{name} = {cur}")
        elif s.loc == "classattr":
            cls.append(f"{name} = {v0}")
            step.append(f"M.{name} = {cur}")
        elif s.loc == "property":
            cls += ["@property", f"def {name}(self):", f"    return self._p_{name}"]
            init.append(f"self._p_{name} = {v0}")
            step.append(f"m._p_{name} = {cur}")
        elif s.loc == "nested":
            init.append("self.cfg = getattr(self, 'cfg', None) or types.SimpleNamespace()")
            init.append(f"self.cfg.{name} = {v0}")
            step.append(f"m.cfg.{name} = {cur}")
        elif s.loc == "hooked":
            # a transformers-style config: its own `__getattribute__` remaps the name read
            head += [f"class Hooked_{name}:", f"    attribute_map = {{'{name}': 'real_{name}'}}",
                     "    def __getattribute__(self, key):",
                     "        if key != 'attribute_map' and key in super().__getattribute__('attribute_map'):",
                     "            key = super().__getattribute__('attribute_map')[key]",
                     "        return super().__getattribute__(key)"]
            init += [f"self.hc_{name} = Hooked_{name}()", f"self.hc_{name}.real_{name} = {v0}"]
            step.append(f"m.hc_{name}.real_{name} = {cur}")
        elif s.loc == "metaattr":
            # a class attribute of a class whose metaclass remaps names in its own `__getattribute__`
            head += [f"class Remap_{name}(type):", "    def __getattribute__(cls, key):",
                     f"        return super().__getattribute__('value' if key == '{name}' else key)",
                     f"class Meta_{name}(metaclass=Remap_{name}):", f"    value = {v0}"]
            step.append(f"Meta_{name}.value = {cur}")
        elif s.loc == "list":
            init.append(f"self.L_{name} = [0, {v0}, 0]")
            step.append(f"m.L_{name}[1] = {cur}")
        elif s.loc == "dict":
            init.append(f"self.D_{name} = {{'k': {v0}, 'z': 0}}")
            step.append(f"m.D_{name}['k'] = {cur}")
        elif s.loc == "deque":
            init.append(f"self.Q_{name} = collections.deque([0, {v0}, 0])")
            step.append(f"m.Q_{name}[1] = {cur}")
        elif s.loc == "array":
            init.append(f"self.A_{name} = array.array('d', [0.0, {v0}, 0.0])")
            step.append(f"m.A_{name}[1] = {cur}")
        elif s.loc == "bytearray":
            init.append(f"self.B_{name} = bytearray([0, {v0}, 0])")
            step.append(f"m.B_{name}[1] = {cur}")
        elif s.loc == "buffer":
            init.append(f"self.register_buffer('{name}', torch.tensor({v0}))")
            step.append(f"m.{name}.fill_({cur})")
        elif s.loc == "param":
            init.append(f"self.{name} = nn.Parameter(torch.tensor({v0}))")
            step += ["with torch.no_grad():", f"    m.{name}.fill_({cur})"]
        if s.reader == "helper":
            head += [f"def _use_{name}(t, v):", f"    return {render_use(s.use, 't', 'v')}"]
        if s.precedence_at >= 0:
            k = s.precedence_at
            if PRECEDENCE.get(s.loc) == "property_over_instance":
                step += [f"if i == {k}:", f"    M.{name} = property(lambda self: {lit(POOLS[s.kind][-1])})"]
            elif PRECEDENCE.get(s.loc) == "instance_over_class":
                step = [ln for ln in step if ln != f"M.{name} = {cur}"]
                step += [f"if i < {k}:", f"    M.{name} = {cur}", "else:", f"    m.{name} = {cur}"]
            elif PRECEDENCE.get(s.loc) == "reorder":
                step += [f"if i == {k}:", f"    m.D_{name}['k'] = m.D_{name}.pop('k')"]
            elif PRECEDENCE.get(s.loc) == "instance_over_buffer":
                step += [f"if i == {k}:", f"    object.__setattr__(m, '{name}', torch.tensor({lit(s.schedule[k])}))"]
        fwd += _reader_lines(s, name, j)
    if spec.write:
        e = _read_expr(spec.slots[0], "s0") if spec.slots else "1"
        head += ["G_last = None", "HIST = []", "_TABLE = {}",
                 "def _mkcounter():", "    n = 0", "    def bump(k):", "        nonlocal n", "        n += k",
                 "        return n", "    return bump", "_bump = _mkcounter()"]
        init += ["self.count = 0"]
        fwd += {
            "attr": [f"self.last = {e}"],
            "global": ["global G_last", f"G_last = {e}"],
            "append": [f"HIST.append(({e}, float(h.sum())))"],
            "counter": ["self.count += 1", "h = h + self.count"],
            "inplace_arg": ["x.add_(1)"],
            "dict_item": [f"_TABLE[str({e})] = _TABLE.get(str({e}), 0) + 1", "h = h * len(_TABLE)"],
            "cell": ["h = h + _bump(1)"],
        }[spec.write]
    if spec.made:
        fwd += _made_lines(spec.made, "h")
    if spec.memo:
        e = _read_expr(spec.slots[0], "s0") if spec.slots else None
        memo = spec.memo
        if memo in ("value", "hash") and spec.slots and spec.slots[0].kind == "float":
            # a NaN key (or its hash) goes by the object's address, which eager reuses at will:
            # such a program has no one right answer, so floats are keyed by their text
            memo = "fmt"
        fwd += _memo_lines(memo, e)
    fwd.append("return h")
    if spec.train_schedule is not None:
        head.append(f"SCHED_train = {spec.train_schedule!r}")
        step.append("m.train(SCHED_train[i])")

    if defaults:
        step.append(f"M.forward.__defaults__ = ({', '.join(c for _, c in defaults)},)")
    sig = ", ".join(params + [d for d, _ in defaults] + (["*"] + kwonly if kwonly else []))
    out = head + ["class M(nn.Module):"] + _indent(cls, 4) + [
        "    def __init__(self):", "        super().__init__()", f"        self.lin = {_layer(spec)}"]
    out += _indent(init, 8)
    out += [f"    def forward({sig}):"] + _indent(fwd, 8)
    out += ["m = M()", "def make():", "    return m"]
    if spec.inputs == "fresh":
        xs = "torch.randn(3, 4, generator=torch.Generator().manual_seed(i % 2))"
    elif spec.inputs == "pool":
        out.append("XS = [torch.randn(3, 4) for _ in range(2)]")
        xs = "XS[i % 2]"
    else:
        out.append("X0 = torch.randn(3, 4)")
        xs = "X0"
    out += ["def inputs(i):", f"    return ({', '.join([xs] + argvals)},), {{{', '.join(kwvals)}}}"]
    if step:
        out += ["def step(i):"] + _indent(step, 4)
    observe = "[list(o) if isinstance(o, (set, frozenset, dict, list, collections.deque)) else o for o in [getattr(m, 'made', None)]]"
    out += ["def state():",
            "    o = getattr(m, 'made', None)",
            "    return (LOG, BUF.getvalue(), len(_MEMO), " + observe + ", type(o).__name__,",
            "            getattr(o, 'default_factory', None) is list, getattr(o, 'maxlen', None),",
            "            getattr(o, 'tag', None), dict(globals().get('_TABLE', {})),",
            "            globals()['_bump'](0) if '_bump' in globals() else None)",
            f"NCALLS = {n}"]
    return "\n".join(out) + "\n"


def replace(spec: Spec, **kw) -> Spec:
    return dataclasses.replace(spec, **kw)
