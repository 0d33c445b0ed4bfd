"""``./reproduce.sh demo``: compile a small model, show what MagPy captured, check it matches eager.

    python -m magpy.demo [--backend inductor|eager|torchscript] [--calls N] [--all-guards] [--profile]
"""
from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn

import magpy


class DemoNet(nn.Module):
    """A small conv net with the Python features the paper is about: builtins, OOP, side effects."""

    def __init__(self, widths=(8, 16, 32)):
        super().__init__()
        chans = [3, *widths]
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU()) for a, b in zip(chans, chans[1:]))
        self.head = nn.Linear(widths[-1], 10)
        self.last_batch = None

    def forward(self, x):
        feats = []
        for i, stage in enumerate(self.stages, 1):
            x = stage(x)
            feats.append(x.mean(dim=(2, 3)))
            if i < len(self.stages):
                x = nn.functional.max_pool2d(x, 2)
        self.last_batch = x.shape[0]         # a side effect the mock reproduces
        return {"logits": self.head(feats[-1]), "pooled": feats}


#: Guard lines the demo prints unless ``--all-guards``.
GUARDS_SHOWN = 12


def summarized(explanation, every_guard: bool = False) -> str:
    """``str(explanation)`` with its guard list cut to :data:`GUARDS_SHOWN` lines and a count."""
    text = str(explanation)
    guards = explanation.guards.splitlines()
    if every_guard or len(guards) <= GUARDS_SHOWN:
        return text
    head = text[:text.rindex("Guards:")]
    return (f"{head}Guards ({len(guards)}, the first {GUARDS_SHOWN} shown; --all-guards prints all, "
            f"as does print(magpy.explain(model)(x).guards)):\n"
            + "\n".join("  " + g for g in guards[:GUARDS_SHOWN]) + f"\n  ... {len(guards) - GUARDS_SHOWN} more")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="inductor")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--all-guards", action="store_true", help=f"print every guard (default: the first {GUARDS_SHOWN})")
    p.add_argument("--profile", action="store_true",
                   help="compile with profile=True: Stats then has matched_calls, guard_time_s, mock_time_s")
    a = p.parse_args(argv)
    from magpy.backends import BackendError, resolve

    try:
        resolve(a.backend)
    except BackendError as err:
        p.exit(2, f"error: {err}\n")
    torch.manual_seed(0)
    model = DemoNet().eval()
    x = torch.randn(4, 3, 32, 32)
    print(summarized(magpy.explain(model)(x), every_guard=a.all_guards))
    ref = DemoNet().eval()
    ref.load_state_dict(model.state_dict())
    fast = magpy.compile(model, backend=a.backend, profile=a.profile)
    with torch.no_grad():
        t0 = time.perf_counter()
        out = fast(x)
        t1 = time.perf_counter()
        expect = ref(x)
        for _ in range(a.calls - 1):
            out = fast(x)
            expect = ref(x)
    ok = torch.allclose(out["logits"], expect["logits"], atol=1e-4) and model.last_batch == ref.last_batch
    print(f"\nbackend={a.backend}: first call (monitor run + compile) {t1 - t0:.2f}s; "
          f"{a.calls} calls match eager: {ok}; side effect self.last_batch={model.last_batch} (eager: {ref.last_batch})")
    print(magpy.stats(fast))
    if not a.profile:
        print("(matched_calls, guard_time_s and mock_time_s are None: they are measured only with "
              "magpy.compile(..., profile=True); --profile sets it)")
    if not ok:
        raise SystemExit("MagPy result differs from eager")


if __name__ == "__main__":
    main()
