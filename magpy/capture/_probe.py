"""Self-check of the capture backend: run a known function and compare the stacks seen.

The probe function is small but touches what every backend must get exactly right:
a call through a NULL slot (``len``), a binary op whose inputs sit above an earlier
result, and the return value. Every stack is compared whole, NULL slots included,
so a layout or depth error of one slot is caught at ``magpy.compile`` time.
"""
from __future__ import annotations

import dis
import sys

from . import NULL


def _probe_fn(a, b):
    c = [a, b]
    return len(c) + a * b


class _Recorder:
    def __init__(self):
        self.events = []

    def enter_frame(self, frame):
        return frame.f_code is _probe_fn.__code__

    def instruction(self, frame, offset, stack):
        from . import read_stack

        self.events.append((offset, list(stack), read_stack(frame)))

    def leave_frame(self, frame, value):
        self.events.append(("return", value))

    def exception(self, frame, exc):
        self.events.append(("exception", exc))


def _expected_call_stack(c) -> list:
    """The stack before the instruction that calls ``len(c)``, per CPython version."""
    if sys.version_info >= (3, 13):
        return [len, NULL, c]          # callable, self_or_null, args
    if sys.version_info >= (3, 11):
        return [NULL, len, c]          # NULL from LOAD_GLOBAL, callable, args
    return [len, c]


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y or (type(x) is type(y) and x == y) for x, y in zip(a, b))


def run_probe() -> str | None:
    """Return None when stack capture works, else a description of what went wrong."""
    from . import start, stop

    rec = _Recorder()
    start(rec)
    try:
        result = _probe_fn(3, 7)
    finally:
        stop()
    if result != 23:
        return "probe returned a wrong result"
    if not rec.events:
        return "no instruction events were delivered"
    ops = {i.offset: i for i in dis.get_instructions(_probe_fn)}
    expect = {"*": [2, 3, 7], "+": [2, 21]}
    seen = set()
    for ev in rec.events:
        if ev[0] == "exception":
            return f"the probe raised {ev[1]!r} under capture"
        if ev[0] == "return":
            if ev[1] != 23:
                return f"return value seen as {ev[1]!r}"
            seen.add("return")
            continue
        offset, stack, again = ev
        if not _same(stack, again):
            return f"read_stack disagrees with the hooked stack at offset {offset}: {again!r} vs {stack!r}"
        ins = ops.get(offset)
        if ins is None:
            return f"an event at offset {offset}, which is not an instruction of the probe"
        name = ins.opname
        if name in ("BINARY_OP", "BINARY_MULTIPLY", "BINARY_ADD"):
            sym = "*" if name == "BINARY_MULTIPLY" else "+" if name == "BINARY_ADD" else ins.argrepr
            want = expect.get(sym)
            if want is not None:
                if not _same(stack, want):
                    return f"the stack before {sym} was {stack!r}, expected {want!r}"
                seen.add(sym)
        elif name in ("CALL", "CALL_FUNCTION"):
            want = _expected_call_stack(stack[-1] if stack else None)
            if not _same(stack, want) or stack[-1] != [3, 7]:
                return f"the stack before len(c) was {stack!r}, expected {want!r}"
            seen.add("call")
        elif name == "RETURN_VALUE":
            if not _same(stack, [23]):
                return f"the stack before return was {stack!r}, expected [23]"
    missing = {"*", "+", "call", "return"} - seen
    if missing:
        return f"no event seen for {sorted(missing)} in the probe: {rec.events!r}"
    return None


if __name__ == "__main__":
    print(run_probe() or f"capture ok on {sys.version.split()[0]}")
