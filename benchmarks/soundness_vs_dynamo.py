"""Soundness of MagPy vs torch.compile(fullgraph=True, backend="eager") on the programs of
tests/soundness: each program runs eagerly and compiled side by side (state changed between calls
the way users change it), and is counted correct / wrong / raised per family.

    .venv/bin/python benchmarks/soundness_vs_dynamo.py [--family F] [--verbose]

"raised" means the compiler raised where eager did not (for Dynamo with fullgraph=True that is a
graph break, not a wrong result); "wrong" means a silently different output, state or gradient.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "soundness"))
import harness  # noqa: E402

from experiments.markdown import markdown_table  # noqa: E402  (the artifact's one way to print a table)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default=None)
    ap.add_argument("--verbose", action="store_true", help="print every non-correct program")
    ap.add_argument("--compilers", default="magpy,dynamo")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import logging
    logging.getLogger("magpy").setLevel(logging.ERROR)
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)

    progs = [p for p in harness.load_all() if args.family in (None, p.family)]
    modes = args.compilers.split(",")
    table: dict = collections.defaultdict(lambda: collections.Counter())
    details = []
    times = {}
    for mode in modes:
        t0 = time.perf_counter()
        for p in progs:
            r = harness.run_program(p, mode)
            table[(p.family, mode)][r.verdict] += 1
            table[("TOTAL", mode)][r.verdict] += 1
            if r.compiled_hits:
                table[(p.family, mode)]["hit"] += 1
                table[("TOTAL", mode)]["hit"] += 1
            if r.verdict != "correct":
                details.append((mode, p.id, r.verdict, r.detail))
        times[mode] = time.perf_counter() - t0

    fams = sorted({p.family for p in progs}) + ["TOTAL"]
    counts = collections.Counter(p.family for p in progs)
    counts["TOTAL"] = len(progs)
    rows = [[f, counts[f], *(f"{table[(f, m)]['correct']} / {table[(f, m)]['wrong']} / {table[(f, m)]['raised']}"
                              for m in modes)] for f in fams]
    print(markdown_table(rows, ["family", "programs", *(f"{m}: correct / wrong / raised" for m in modes)],
                         "lr" + "r" * len(modes)))
    print("time: " + ", ".join(f"{m} {t:.1f}s" for m, t in times.items()))
    if "magpy" in modes:
        c = table[("TOTAL", "magpy")]
        print(f"MagPy answered at least one call from a record (guard + mock + graph) in {c['hit']} of "
              f"{counts['TOTAL']} programs; the others ran eagerly after a break (correct, not compiled).")
    if args.verbose:
        for mode, pid, verdict, detail in details:
            print(f"[{mode}] {verdict:6s} {pid}: {detail[:240]}")


if __name__ == "__main__":
    main()
