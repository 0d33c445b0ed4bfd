"""FlowShape.handling: which calls run while their frame handles an exception (an ``except``
body, a ``finally`` run for an exception), where a split could not hand the exception on."""
import dis
import sys

import pytest

from magpy.bytecode.flow import flow_of

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception tables: CPython 3.11+")


def _shape(cm, table, g):
    g("before")
    try:
        table["k"]
    except KeyError:
        g("except")
        with cm:
            g("with in except")
        for _ in range(2):
            try:
                g("nested try")
            except ValueError:
                continue
            finally:
                g("finally in except")
    except ValueError as e:
        g("except as", e)
    finally:
        g("finally")
    with cm:
        g("with")
    return g("after")


def _calls():
    """``{label: [handling at each copy of the call]}`` (a ``finally`` body is compiled twice)."""
    fl = flow_of(_shape.__code__)
    out: dict = {}
    label = None
    for ins in dis.get_instructions(_shape):
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, str):
            label = ins.argval
        elif ins.opname == "CALL" and label is not None:
            out.setdefault(label, []).append(fl.handling(ins.offset))
            label = None
    return out


def test_calls_in_except_bodies_are_handling():
    calls = _calls()
    for label in ("except", "with in except", "nested try", "finally in except", "except as"):
        assert calls[label] and all(calls[label]), (label, calls[label])


def test_calls_outside_handlers_are_not():
    calls = _calls()
    for label in ("before", "with", "after"):
        assert calls[label] == [False], (label, calls[label])
    # `finally`: its normal copy is not handling, its copy run for an exception is
    assert sorted(calls["finally"]) == [False, True]
