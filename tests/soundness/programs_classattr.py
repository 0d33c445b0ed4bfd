"""Objects reached through a call: type(self).SCALE, cls.MAX_LEN in a classmethod, self.__class__.X,
class attributes changed between calls, inheritance, properties."""
from harness import program

F_ = "classattr"

program(F_, "type_self_scale", """
class Block(nn.Module):
    SCALE = 2.0
    def forward(self, x):
        return x * type(self).SCALE
m = Block()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Block.SCALE = 3.0
""")

program(F_, "classmethod_max_len", """
class Tok(nn.Module):
    MAX_LEN = 4
    @classmethod
    def clip(cls, x):
        return x[:, :cls.MAX_LEN]
    def forward(self, x):
        return self.clip(x) * 2
m = Tok()
def make(): return m
def inputs(i): return torch.randn(2, 6)
def step(i):
    if i == 2: Tok.MAX_LEN = 2
""")

program(F_, "dunder_class_attr", """
class Head(nn.Module):
    TEMP = 1.0
    def forward(self, x):
        return (x / self.__class__.TEMP).softmax(-1)
m = Head()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: Head.TEMP = 0.1
""")

program(F_, "class_attr_via_self", """
class Block(nn.Module):
    eps = 1e-5
    def forward(self, x):
        return x / (x.abs().sum() + self.eps)
m = Block()
def make(): return m
def inputs(i): return torch.zeros(3) + 1e-3
def step(i):
    if i == 2: Block.eps = 1.0
""")

program(F_, "class_attr_shadowed_by_instance", """
class Block(nn.Module):
    scale = 2.0
    def forward(self, x):
        return x * self.scale
m = Block()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.scale = 5.0
    if i == 3: del m.scale
""")

program(F_, "inherited_class_attr", """
class Base(nn.Module):
    SCALE = 1.0
class Child(Base):
    def forward(self, x):
        return x * self.SCALE
m = Child()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Base.SCALE = 4.0
    if i == 3: Child.SCALE = -1.0
""")

program(F_, "class_level_dict_config", """
class Norm(nn.Module):
    CFG = {"eps": 1e-5, "affine": True}
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3) * 2)
    def forward(self, x):
        y = x / (x.std() + self.CFG["eps"])
        if self.CFG["affine"]:
            y = y * self.w
        return y
m = Norm()
def make(): return m
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: Norm.CFG["affine"] = False
""")

program(F_, "property_backed_attr", """
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self._s = 1.0
    @property
    def scale(self):
        return self._s * 2
    def forward(self, x):
        return x * self.scale
m = Scaled()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 1: m._s = 3.0
    if i == 2: Scaled.scale = property(lambda self: -self._s)
""")

program(F_, "staticmethod_on_class_replaced", """
class Block(nn.Module):
    @staticmethod
    def act(x):
        return torch.relu(x)
    def forward(self, x):
        return self.act(x) + type(self).act(x)
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: Block.act = staticmethod(torch.tanh)
""")

program(F_, "super_call_base_method_replaced", """
class Base(nn.Module):
    def transform(self, x):
        return x * 2
class Child(Base):
    def transform(self, x):
        return super().transform(x) + 1
    def forward(self, x):
        return self.transform(x)
m = Child()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Base.transform = lambda self, x: x * 10
""")

program(F_, "instance_class_swapped", """
class A(nn.Module):
    def forward(self, x):
        return self.act(x)
    def act(self, x):
        return x + 1
class B(A):
    def act(self, x):
        return x - 1
m = A()
def make(): return m
def inputs(i): return torch.zeros(2)
def step(i):
    if i == 2: m.__class__ = B
""")

program(F_, "bases_reassigned_between_calls", """
class Small:
    def scale(self): return 2.0
class Large:
    def scale(self): return 3.0
class Head(Small):
    pass
head = Head()
def f(x):
    return x * head.scale()
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Head.__bases__ = (Large,)
""")

program(F_, "class_namespace_read_through_dunder_dict", """
class Base:
    scale = 2.0
class Head(Base):
    pass
head = Head()
def f(x):
    own = type(head).__dict__["scale"] if "scale" in type(head).__dict__ else 3.0
    return x * own * vars(Base)["scale"]
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Head.scale = 5.0
    if i == 3: Base.scale = 7.0
""")

program(F_, "class_namespace_view_over_the_mro", """
# `"mode" in klass.__dict__`, `klass.__dict__["mode"]`, `vars(type(self))` and `len(...)` of a
# class's namespace view, over the MRO; the subclass gains, changes and loses the attribute,
# the base class changes it, a method is added between calls.
class Base(nn.Module):
    mode = "a"
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x):
        own = sorted(n for n in vars(type(self)) if not n.startswith("_"))
        for klass in type(self).__mro__[:2]:
            if "mode" in klass.__dict__:
                k = 2.0 if klass.__dict__["mode"] == "a" else 3.0
                return self.fc(x) * k, klass.__name__, own, len(Base.__dict__) > 3
        return x, None, own, None
class Sub(Base):
    pass
m = Sub()
def make(): return m
def inputs(i): return torch.randn(2, 3, generator=torch.Generator().manual_seed(i))
def step(i):
    if i == 1: Sub.mode = "b"
    if i == 2: Sub.mode = "a"
    if i == 3: del Sub.mode
    if i == 4: Base.mode = "c"
    if i == 5: Sub.helper = lambda self: 0
CLEANUP.append(lambda: [delattr(Sub, n) for n in ("mode", "helper") if n in Sub.__dict__])
CLEANUP.append(lambda: setattr(Base, "mode", "a"))
NCALLS = 6
""")
