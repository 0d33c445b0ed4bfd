"""Which of the soundness classes of issue #25 a (shrunk) find belongs to, to measure whether the
fuzzer rediscovers them on a commit before their fixes:

    python tests/fuzz/classes.py --programs 300 --seed 1

1 an argument read only in a comprehension / genexpr / lambda / inner def; 2 split and resume;
3 objects rebuilt by the mock; 4 container items and attribute precedence; 5 value guards that
compare with == (-0.0); 6 id() as a key; 7 BatchNorm with momentum=None.

    python tests/fuzz/classes.py --grammar state --programs 300 --seed 1

groups the finds of the ``state`` family by the grammar's classes of program instead (the class of the
shrunk program's pieces: closure, registry, native, mode).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz import Find, fuzz_pass, is_failure, run_spec  # noqa: E402

NAMES = {1: "argument read in a nested code object", 2: "split and resume", 3: "rebuilt objects",
         4: "container items / attribute precedence", 5: "== value guards (-0.0)", 6: "id() as a key",
         7: "BatchNorm momentum=None", 0: "other"}


def _positive_zero(v):
    return 0.0 if isinstance(v, float) and v == 0.0 and math.copysign(1.0, v) < 0 else v


def classify(find: Find, mode: str = "magpy") -> int:
    s = find.shrunk
    if any(isinstance(v, float) and v == 0.0 and math.copysign(1.0, v) < 0 for sl in s.slots for v in sl.schedule):
        flat = dataclasses.replace(s, slots=[dataclasses.replace(sl, schedule=[_positive_zero(v) for v in sl.schedule])
                                             for sl in s.slots])
        if not is_failure(run_spec(flat, mode)):
            return 5
    if s.memo == "id_x":
        return 6
    if s.layer == "bn_cma":
        return 7
    if s.made:
        return 3
    if any(sl.loc in ("deque", "array", "bytearray") or sl.precedence_at >= 0 for sl in s.slots):
        return 4
    if any(sl.reader in ("aftersplit", "splitinner", "splitcapture", "dictloop") for sl in s.slots):
        return 2
    if any(sl.reader in ("listcomp", "genexpr", "lambda", "innerdef") for sl in s.slots):
        return 1
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--grammar", choices=["values", "state"], default="values")
    ap.add_argument("--shrink-budget", type=float, default=30.0)
    a = ap.parse_args(argv)
    res = fuzz_pass(a.programs, a.seed, "magpy", shrink_budget_s=a.shrink_budget, max_finds=10**6,
                    family=a.grammar, log=lambda m: print(m, flush=True))
    print(res.summary())
    if a.grammar == "state":
        return _state_classes(res, a.out)
    first: dict[int, int] = {}
    count: dict[int, int] = {}
    for f in res.finds:
        c = classify(f)
        count[c] = count.get(c, 0) + 1
        first.setdefault(c, f.index + 1)
        print(f"  program {f.index}: class {c} ({NAMES[c]}): {f.shrunk.signature()}")
    print("[classes] rediscovered (class: finds, first found after N programs):")
    for c in sorted(count):
        print(f"  {c} {NAMES[c]:42s} {count[c]:4d} finds, first after {first[c]} programs")
    if a.out:
        with open(a.out, "w") as fh:
            for f in res.finds:
                fh.write(f.report() + "\n\n")
    return 0


def _state_classes(res, out) -> int:
    from grammar_state import piece_class

    first: dict[str, int] = {}
    count: dict[str, int] = {}
    example: dict[str, Find] = {}
    for f in res.finds:
        c = piece_class(f.shrunk)
        count[c] = count.get(c, 0) + 1
        first.setdefault(c, f.index + 1)
        example.setdefault(c, f)
        print(f"  program {f.index}: {c}: {f.shrunk.signature()}")
    print("[classes] found (class of the shrunk program: finds, first found after N programs):")
    for c in sorted(count):
        print(f"  {c:20s} {count[c]:4d} finds, first after {first[c]} programs")
    for c in sorted(example):
        print(f"\n# one shrunk find of class {c}\n{example[c].report()}")
    if out:
        with open(out, "w") as fh:
            for f in res.finds:
                fh.write(f.report() + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
