"""Self-check of the capture backend: run a known function and compare the stacks seen."""
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
        pass


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
    ops = {i.offset: i for i in dis.get_instructions(_probe_fn)}
    seen_binop = False
    for ev in rec.events:
        if ev[0] == "return":
            if ev[1] != 23:
                return f"return value seen as {ev[1]!r}"
            continue
        offset, stack, _ = ev
        ins = ops.get(offset)
        if ins is None:
            continue
        if ins.opname in ("BINARY_MULTIPLY", "BINARY_OP") and ins.argrepr in ("*", ""):
            if [v for v in stack if v is not NULL][-2:] == [3, 7]:
                seen_binop = True
    if not rec.events:
        return "no instruction events were delivered"
    if not seen_binop:
        return f"the stack before a * b did not hold (3, 7): {rec.events[-6:]!r}"
    return None


if __name__ == "__main__":
    print(run_probe() or f"capture ok on {sys.version.split()[0]}")
