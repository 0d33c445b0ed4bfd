"""magpy.realtype: the C definitions (magpy/_realtype.c) agree with the Python ones on objects
that make type tests and class lookups hard, and neither runs a lookup hook of the object."""
from __future__ import annotations

import abc
import collections
import functools
import types

import pytest
import torch

from magpy import realtype


class Counting:
    """Counts every attribute lookup on its instances (a program's own hook)."""

    hits = 0

    def __getattribute__(self, name):
        type(self).hits += 1
        return super().__getattribute__(name)


class Proxy:
    """Claims to be an int through a ``__class__`` property."""

    @property
    def __class__(self):
        Proxy.hits += 1
        return int

    hits = 0


class DictProperty:
    @property
    def __dict__(self):
        raise AssertionError("the property must not run")


class NoneDict:
    __dict__ = None   # passed over: the slot of the base class below it is read


class NoneDictChild(NoneDict):
    pass


class Slotted:
    __slots__ = ("a",)


class Meta(type):
    def __subclasscheck__(cls, sub):
        return sub is int or type.__subclasscheck__(cls, sub)


class ByMeta(metaclass=Meta):
    pass


class CountingMeta(type):
    """Counts every attribute lookup on its classes (a registry's or a lazy class's metaclass)."""

    hits = 0

    def __getattribute__(cls, name):
        CountingMeta.hits += 1
        return super().__getattribute__(name)



class Virtual(abc.ABC):
    """An ABC that ``dict`` is registered with (a virtual subclass)."""

    @abc.abstractmethod
    def run(self): ...


Virtual.register(dict)


class Base:
    x = 1
    none_attr = None

    def __call__(self):
        return 1


class Child(Base):
    y = 2


class ByCountingMeta(Base, metaclass=CountingMeta):
    z = 3


class Sub(torch.Tensor):
    pass


VALUES = [1, 1.5, "s", None, (), [], {}, Counting(), Proxy(), DictProperty(), NoneDictChild(), Slotted(), Child(),
          torch.zeros(2), torch.nn.Parameter(torch.zeros(2)), torch.zeros(2).as_subclass(Sub), torch.nn.Linear(2, 2),
          types, len, Child, functools.partial(len), collections.OrderedDict(), ByMeta(), ByCountingMeta()]
CLASSES = [int, object, dict, Counting, Proxy, torch.Tensor, torch.nn.Parameter, Sub, torch.nn.Module, Virtual, ByMeta,
           (int, str), (torch.Tensor, dict), type, types.ModuleType, Base]
NAMES = ["x", "y", "none_attr", "__call__", "__dict__", "__getattr__", "__getattribute__", "forward", "missing",
         "__class__", "__init__"]


@pytest.mark.parametrize("v", VALUES, ids=lambda v: type(v).__name__)
def test_the_c_type_tests_and_dict_reads_agree_with_python(v):
    if realtype.PYTHON.is_instance is realtype.is_instance:
        pytest.fail("magpy/_realtype.c is not built")
    before = (Counting.hits, Proxy.hits, type.__getattribute__(CountingMeta, "hits"))
    for cls in CLASSES:
        assert realtype.is_instance(v, cls) == realtype.PYTHON.is_instance(v, cls), cls
    assert realtype.instance_dict(v) is realtype.PYTHON.instance_dict(v)
    for name in NAMES:
        assert realtype.class_lookup(type(v), name, "d") is realtype.PYTHON.class_lookup(type(v), name, "d"), name
        assert realtype.class_owner(type(v), name) is realtype.PYTHON.class_owner(type(v), name), name
    assert (Counting.hits, Proxy.hits, type.__getattribute__(CountingMeta, "hits")) == before   # (no hook ran)


def test_what_the_lookups_answer():
    """The answers themselves, for the cases the monitor relies on."""
    assert realtype.is_instance(Proxy(), int) is False and realtype.is_instance(ByMeta(), int) is False
    assert realtype.is_instance(7, ByMeta) is True   # (the metaclass's __subclasscheck__ is asked)
    assert realtype.is_instance({}, Virtual) is True
    assert realtype.is_instance(torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter) is True
    assert realtype.instance_dict(Slotted()) is None and realtype.instance_dict(1) is None
    n = NoneDictChild()
    n.k = 1
    assert realtype.instance_dict(n) is None   # (no class on its MRO holds the slot's descriptor)
    assert realtype.class_lookup(Child, "x") == 1 and realtype.class_owner(Child, "x") is Base
    assert realtype.class_lookup(Child, "none_attr", "d") is None   # (a None value is a value)
    assert realtype.class_lookup(Child, "missing", "d") == "d" and realtype.class_owner(Child, "missing") is None
    assert realtype.class_owner(int, "__add__") is int and realtype.class_owner(bool, "__init__") is object
    with pytest.raises(TypeError):
        realtype.class_lookup("not a class", "x", None)


def test_a_class_is_read_without_its_metaclass_lookup_hook():
    """A class whose metaclass counts every lookup: its MRO, namespace and flags, the class
    lookups of both definitions and ``is_mutable_class`` give the plain answers and run no hook."""
    from magpy.objmodel import is_mutable_class

    before = type.__getattribute__(CountingMeta, "hits")
    assert realtype.class_mro(ByCountingMeta) == (ByCountingMeta, Base, object)
    assert realtype.class_namespace(ByCountingMeta)["z"] == 3
    assert realtype.class_flags(ByCountingMeta) == type.__dict__["__flags__"].__get__(Base)
    for lookup in (realtype.class_lookup, realtype.PYTHON.class_lookup):
        assert lookup(ByCountingMeta, "x") == 1 and lookup(ByCountingMeta, "z") == 3
    for owner in (realtype.class_owner, realtype.PYTHON.class_owner):
        assert owner(ByCountingMeta, "x") is Base and owner(ByCountingMeta, "missing") is None
    assert is_mutable_class(ByCountingMeta) and not is_mutable_class(int)
    assert type.__getattribute__(CountingMeta, "hits") == before


class WithGetattr:
    """Computes missing attributes in Python (program code the probe must not run)."""

    hits = 0
    plain = 3

    def __getattr__(self, name):
        WithGetattr.hits += 1
        return name


class MetaGetattribute(type):
    def __getattribute__(cls, name):
        MetaGetattribute.hits += 1
        return type.__getattribute__(cls, name)

    hits = 0


class ByMetaGetattribute(metaclass=MetaGetattribute):
    def __getattr__(self, name):
        return name


class Raising:
    @property
    def __self__(self):
        raise ValueError("not an AttributeError: it reaches the caller")


class Net(torch.nn.Module):
    """A module with an entry of each table, an instance attribute, and a class attribute."""

    shared = "class"

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.register_buffer("buf", torch.zeros(1))
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.note = "instance"


class HookedNet(torch.nn.Module):
    """A module class with its own Python __getattr__ (asked by the normal lookup only)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def __getattr__(self, name):
        raise AssertionError("the probe must not run the module class's own __getattr__")


PROBED = [*VALUES, WithGetattr(), ByMetaGetattribute(), Net(), HookedNet(), lambda: 0, len, [].append, "".format,
          torch.zeros(1).add, torch.Tensor.add, object.__init__, (1).__add__, super, functools.lru_cache(len)]
PROBE_NAMES = ["__self__", "__name__", "__objclass__", "__func__", "__wrapped__", "plain", "missing", "lin", "buf",
               "scale", "note", "shared", "weight", "forward", "__code__"]


@pytest.mark.parametrize("v", PROBED, ids=lambda v: type(v).__name__)
def test_the_c_callable_attr_agrees_with_python(v):
    if realtype.PYTHON.callable_attr is realtype.callable_attr:
        pytest.fail("magpy/_realtype.c is not built")
    before = (Counting.hits, Proxy.hits, WithGetattr.hits, MetaGetattribute.hits)
    for name in PROBE_NAMES:
        c, py = realtype.callable_attr(v, name, "d"), realtype.PYTHON.callable_attr(v, name, "d")
        assert c is py or (type(c) is type(py) and c == py and not isinstance(c, torch.Tensor)), name
    assert (Counting.hits, Proxy.hits, WithGetattr.hits, MetaGetattribute.hits) == before   # (no hook ran)


def test_what_callable_attr_answers():
    net = Net()
    assert realtype.callable_attr(net, "lin") is net._modules["lin"]
    assert realtype.callable_attr(net, "buf") is net._buffers["buf"]
    assert realtype.callable_attr(net, "scale") is net._parameters["scale"]
    assert realtype.callable_attr(net, "note") == "instance" and realtype.callable_attr(net, "shared") == "class"
    assert realtype.callable_attr(net, "__self__") is None and realtype.callable_attr(net, "missing", 7) == 7
    assert realtype.callable_attr(HookedNet(), "missing") is None   # (its __getattr__ did not run)
    assert realtype.callable_attr(WithGetattr(), "missing", 7) == 7 and WithGetattr.hits == 0
    assert realtype.callable_attr(WithGetattr(), "plain") == 3
    assert realtype.callable_attr([].append, "__name__") == "append"
    assert realtype.callable_attr(len, "__self__") is __import__("builtins")
    for probe in (realtype.callable_attr, realtype.PYTHON.callable_attr):
        with pytest.raises(ValueError):
            probe(Raising(), "__self__")


def test_which_reads_run_a_lookup_hook_of_the_objects_class():
    """``runs_lookup_hook``: an instance whose class (or a base) has a Python ``__getattribute__``;
    never a class (its metaclass's hook is another matter) or an instance of a plain class."""
    assert realtype.runs_lookup_hook(Counting()) and realtype.runs_lookup_hook(Proxy()) is False
    assert not realtype.runs_lookup_hook(Counting) and not realtype.runs_lookup_hook(ByCountingMeta)
    assert not realtype.runs_lookup_hook(Child()) and not realtype.runs_lookup_hook(torch.zeros(1))
    assert not realtype.runs_lookup_hook(torch.nn.Linear(1, 1))
