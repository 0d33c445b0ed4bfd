import sys, os, importlib, time
sys.path.insert(0, "/work/main/tests/soundness")
sys.path.insert(0, "/work/main")
import harness
from harness import program, REGISTRY
mod = sys.argv[1]
only = sys.argv[2:] if len(sys.argv) > 2 else None
dyn = os.environ.get("DYN")
importlib.import_module(mod)
for p in REGISTRY:
    if only and p.name not in only: continue
    t = time.time()
    r = harness.run_program(p, "magpy")
    flag = "" if r.verdict == "correct" and r.outcome == p.expect else "  <<<<<"
    print(f"{p.name}: {r.verdict} outcome={r.outcome} expect={p.expect} hits={r.compiled_hits}/{r.calls} {r.detail} ({time.time()-t:.1f}s){flag}", flush=True)
    if dyn:
        r2 = harness.run_program(p, "dynamo_partial")
        print(f"   dynamo: {r2.verdict} {r2.detail}", flush=True)
