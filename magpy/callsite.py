"""One call the monitor is deciding (paper Figure 12): the record :mod:`magpy.monitor.calls` hands to the
handler of the callee's kind, wherever that handler lives (:mod:`magpy.monitor.calls`,
:mod:`magpy.monitor.natives`, :mod:`magpy.monitor.annotated`). A module of its own so that the handlers' modules
import it, not each other.
"""
from __future__ import annotations


class CallSite:
    """One call being decided: the callee and its arguments (which the restating kinds change:
    ``lst.append(x)`` becomes ``list.append(lst, x)``), and what a check found on the way for the
    handler of its kind (the text form, the draw, the legacy factory, the ``autograd.Function``,
    the tensor method name, the script method, the annotation, what runs when an object dies)."""

    __slots__ = ("fn", "args", "kwargs", "text", "draw", "legacy", "fn_cls", "mname", "script", "ann", "writes",
                 "attribute_reader", "finalizer")

    def __init__(self, fn, args: list, kwargs: dict) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
