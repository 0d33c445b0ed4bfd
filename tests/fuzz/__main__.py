"""Command line of the differential fuzzer (see fuzz.py): ``python tests/fuzz --help``."""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz import FAMILIES, fuzz_pass  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python tests/fuzz", description=__doc__)
    ap.add_argument("--programs", type=int, default=500, help="how many programs to draw (default 500)")
    ap.add_argument("--grammar", choices=list(FAMILIES), default="values",
                    help="the grammar family programs are drawn from: values (where a value lives, how it is "
                         "read and changed between calls; the default), loops (recurrent loops over changing "
                         "lengths, branches on tensor values) or state (closures that outlive a split, "
                         "identity-keyed registries, natives that read attributes, modes entered in the call)")
    ap.add_argument("--seed", type=int, default=0, help="the stream of programs (default 0)")
    ap.add_argument("--start", type=int, default=0, help="first program index of the stream")
    ap.add_argument("--against", choices=["magpy", "dynamo", "dynamo-fullgraph"], default="magpy",
                    help="the compiler under test: MagPy, torch.compile(fullgraph=False) or fullgraph=True "
                         "(both with backend='eager')")
    ap.add_argument("--time-budget", type=float, default=None, help="stop drawing after this many seconds")
    ap.add_argument("--no-shrink", action="store_true", help="report finds as drawn")
    ap.add_argument("--shrink-budget", type=float, default=60.0, help="seconds of shrinking per find")
    ap.add_argument("--max-finds", type=int, default=50, help="shrink and print at most this many finds")
    ap.add_argument("--out", default=None, help="write the shrunk finds (soundness-program source) here")
    args = ap.parse_args(argv)
    if args.programs < 1:
        ap.error("--programs must be at least 1")
    mode = {"magpy": "magpy", "dynamo": "dynamo_partial", "dynamo-fullgraph": "dynamo"}[args.against]
    res = fuzz_pass(args.programs, args.seed, mode, do_shrink=not args.no_shrink,
                    time_budget_s=args.time_budget, shrink_budget_s=args.shrink_budget,
                    max_finds=args.max_finds, start=args.start, family=args.grammar, log=lambda s: print(s, flush=True))
    print(res.summary())
    for sig, n in sorted(res.signatures().items(), key=lambda kv: -kv[1]):
        print(f"  {n:4d}  {sig}")
    if args.out:
        with open(args.out, "w") as f:
            for find in res.finds:
                f.write(find.report() + "\n\n")
        print(f"[fuzz] shrunk finds written to {args.out}")
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
