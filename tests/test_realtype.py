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


class Sub(torch.Tensor):
    pass


VALUES = [1, 1.5, "s", None, (), [], {}, Counting(), Proxy(), DictProperty(), NoneDictChild(), Slotted(), Child(),
          torch.zeros(2), torch.nn.Parameter(torch.zeros(2)), torch.zeros(2).as_subclass(Sub), torch.nn.Linear(2, 2),
          types, len, Child, functools.partial(len), collections.OrderedDict(), ByMeta()]
CLASSES = [int, object, dict, Counting, Proxy, torch.Tensor, torch.nn.Parameter, Sub, torch.nn.Module, Virtual, ByMeta,
           (int, str), (torch.Tensor, dict), type, types.ModuleType, Base]
NAMES = ["x", "y", "none_attr", "__call__", "__dict__", "__getattr__", "__getattribute__", "forward", "missing",
         "__class__", "__init__"]


@pytest.mark.parametrize("v", VALUES, ids=lambda v: type(v).__name__)
def test_the_c_type_tests_and_dict_reads_agree_with_python(v):
    if realtype.PYTHON.is_instance is realtype.is_instance:
        pytest.fail("magpy/_realtype.c is not built")
    before = (Counting.hits, Proxy.hits)
    for cls in CLASSES:
        assert realtype.is_instance(v, cls) == realtype.PYTHON.is_instance(v, cls), cls
    assert realtype.instance_dict(v) is realtype.PYTHON.instance_dict(v)
    for name in NAMES:
        assert realtype.class_lookup(type(v), name, "d") is realtype.PYTHON.class_lookup(type(v), name, "d"), name
        assert realtype.class_owner(type(v), name) is realtype.PYTHON.class_owner(type(v), name), name
    assert (Counting.hits, Proxy.hits) == before   # (no hook of the object ran)


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
