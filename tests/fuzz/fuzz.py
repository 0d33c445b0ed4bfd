"""The differential fuzzer: draw programs from a grammar, run each eagerly and compiled on the
same call sequence with the soundness harness (results, prints, outside state, identities, RNG and
torch global state compared after every call), and shrink every failure to a minimal program.

    python tests/fuzz --programs 2000 --seed 1           # a pass against MagPy
    python tests/fuzz --programs 300 --against dynamo    # the same programs through torch.compile
    ./reproduce.sh fuzz --programs 20000                 # the long pass
    python tests/fuzz --grammar loops --programs 1000    # recurrent loops and tensor branches
    python tests/fuzz --grammar state --programs 300     # closures, registries, native readers, modes

Programs come from one of the grammar families (:data:`FAMILIES`): ``values`` (grammar.py: where
a value lives x how the program reads it x how it changes between calls), ``loops``
(grammar_loops.py: loops over a sequence whose length changes between calls, branches on tensor
values, the outside state they read and write) or ``state`` (grammar_state.py: closures that
outlive a split, identity-keyed registries, natives that read attributes, modes entered inside
the call).

A *find* is a program on which the compiled world returns something else than eager, leaves other
outside state, or raises where eager does not. Before it is reported it is checked to be a
deterministic program (eager against eager agrees) and shrunk (``shrink``) while it keeps failing
the same way; finds are grouped by the shrunk program's :meth:`Spec.signature`.
"""
from __future__ import annotations

import dataclasses
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "soundness"))
sys.path.insert(0, HERE)

import grammar  # noqa: E402
import harness  # noqa: E402
from grammar import MEMO_KEYS, USES, Spec, draw_spec, use_kind  # noqa: E402, F401
from grammar_loops import LoopSpec, draw_loop_spec, loop_candidates, render_loops  # noqa: E402
from grammar_state import StateSpec, draw_state_spec, render_state, state_candidates  # noqa: E402


@dataclass(frozen=True)
class Family:
    """A grammar family: how a spec is drawn, rendered and made simpler."""
    name: str
    spec_type: type
    draw: Callable[[random.Random], object]
    render: Callable[[object], str]                  # the soundness-program source
    candidates: Callable[[object], Iterator[object]]  # simpler specs, most structural first
    stream: str                                      # prefix of each program's random seed


def _family_of(spec) -> Family:
    for fam in FAMILIES.values():
        if isinstance(spec, fam.spec_type):
            return fam
    raise TypeError(f"no grammar family draws {type(spec).__name__}")


def render(spec) -> str:
    """The soundness-program source for a spec of any family."""
    return _family_of(spec).render(spec)


def program_of(spec, name: str = "p") -> harness.Program:
    return harness.Program("fuzz", name, render(spec))


def run_spec(spec, mode: str = "magpy", name: str = "p") -> harness.Result:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return harness.run_program(program_of(spec, name), mode)


def is_failure(res: harness.Result) -> bool:
    return res.verdict in ("wrong", "raised") and not res.detail.startswith("setup:")


def is_valid(spec) -> bool:
    """A program the grammar should not have made is one eager cannot even run twice the same way."""
    res = run_spec(spec, "eager")
    return res.verdict == "correct"


# ------------------------------------------------------------------------------------------------
# shrinking
# ------------------------------------------------------------------------------------------------


def _candidates(spec: Spec):
    """Simpler variants of a ``values`` spec, most structural first."""
    R = dataclasses.replace
    for k in range(len(spec.slots)):
        if len(spec.slots) > 1:
            yield R(spec, slots=spec.slots[:k] + spec.slots[k + 1:])
    if spec.write:
        yield R(spec, write=None)
    if spec.made:
        yield R(spec, made=None)
    if spec.memo:
        yield R(spec, memo=None)
    if spec.layer != "linear":
        yield R(spec, layer="linear", train_schedule=None)
    if spec.train_schedule is not None:
        yield R(spec, train_schedule=None)
    if spec.inputs != "fresh" and spec.memo != "id_x":
        yield R(spec, inputs="fresh")
    if spec.ncalls > 3:
        n = spec.ncalls - 1
        yield R(spec, ncalls=n, slots=[R(s, schedule=s.schedule[:n], precedence_at=s.precedence_at if
                                         s.precedence_at < n else -1) for s in spec.slots],
                train_schedule=spec.train_schedule[:n] if spec.train_schedule else None)
    for k, s in enumerate(spec.slots):
        def with_slot(new, k=k):
            return R(spec, slots=spec.slots[:k] + [new] + spec.slots[k + 1:])
        if s.precedence_at >= 0:
            yield with_slot(R(s, precedence_at=-1))
        if s.reader != "top":
            yield with_slot(R(s, reader="top"))
        first = USES[use_kind(s.kind)][0]
        if s.use != first:
            yield with_slot(R(s, use=first))
        if s.loc != "arg" and s.kind in ("int", "float", "mixed", "str", "optional"):
            yield with_slot(R(s, loc="arg", precedence_at=-1))
        for p in range(1, len(s.schedule)):
            if s.schedule[p] is not s.schedule[p - 1] and repr(s.schedule[p]) != repr(s.schedule[p - 1]):
                yield with_slot(R(s, schedule=s.schedule[:p] + [s.schedule[p - 1]] + s.schedule[p + 1:]))


def failure_kind(res: harness.Result) -> tuple:
    """What kind of failure ``res`` is: its verdict and which part differed first (out, state, a
    global...), so that shrinking keeps the failure and does not wander to another one."""
    part = res.detail.split(": ", 1)[1] if res.detail.startswith("call ") else res.detail
    return res.verdict, part.split(":", 1)[0].split("[", 1)[0].split(".", 1)[0][:40]


def shrink(spec, mode: str, kind: tuple, budget_s: float = 60.0):
    """Greedily replace ``spec`` by simpler variants (of its own family) that still fail the same
    way (``kind``, from :func:`failure_kind`)."""
    candidates = _family_of(spec).candidates
    t0 = time.monotonic()
    progress = True
    while progress and time.monotonic() - t0 < budget_s:
        progress = False
        for cand in candidates(spec):
            if time.monotonic() - t0 >= budget_s:
                break
            res = run_spec(cand, mode)
            if is_failure(res) and failure_kind(res) == kind and is_valid(cand):
                spec, progress = cand, True
                break
    return spec


# ------------------------------------------------------------------------------------------------
# a pass
# ------------------------------------------------------------------------------------------------


@dataclass
class Find:
    index: int                 # which program of the pass
    verdict: str
    detail: str
    spec: object               # a spec of the pass's family
    shrunk: object
    shrunk_detail: str

    def report(self) -> str:
        return (f"# find at program {self.index}: {self.verdict}: {self.shrunk_detail}\n"
                f"# signature: {self.shrunk.signature()}\n{render(self.shrunk)}")


@dataclass
class PassResult:
    mode: str
    family: str = "values"
    programs: int = 0
    correct: int = 0
    failures: int = 0
    invalid: int = 0
    answered_from_records: int = 0
    seconds: float = 0.0
    finds: list[Find] = field(default_factory=list)

    def signatures(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.finds:
            out[f.shrunk.signature()] = out.get(f.shrunk.signature(), 0) + 1
        return out

    def summary(self) -> str:
        return (f"[fuzz] {self.mode}, {self.family} grammar: {self.programs} programs in {self.seconds:.0f}s: "
                f"{self.correct} correct, "
                f"{self.failures} failing ({len(self.signatures())} distinct after shrinking), "
                f"{self.invalid} invalid; {self.answered_from_records} correct programs had calls "
                f"answered from a record")


FAMILIES: dict[str, Family] = {
    "values": Family("values", Spec, draw_spec, grammar.render, _candidates, ""),
    "loops": Family("loops", LoopSpec, draw_loop_spec, render_loops, loop_candidates, "loops:"),
    "state": Family("state", StateSpec, draw_state_spec, render_state, state_candidates, "state:"),
}


def spec_for(seed: int, index: int, family: str = "values"):
    fam = FAMILIES[family]
    return fam.draw(random.Random(f"{fam.stream}{seed}:{index}"))


def fuzz_pass(n: int, seed: int = 0, mode: str = "magpy", *, do_shrink: bool = True,
              time_budget_s: float | None = None, shrink_budget_s: float = 60.0, max_finds: int = 50,
              start: int = 0, family: str = "values", log=None) -> PassResult:
    """Run programs ``start .. start+n-1`` of the stream ``seed`` of grammar ``family`` against
    ``mode``."""
    out = PassResult(mode, family)
    t0 = time.monotonic()
    for idx in range(start, start + n):
        if time_budget_s is not None and time.monotonic() - t0 > time_budget_s:
            break
        spec = spec_for(seed, idx, family)
        res = run_spec(spec, mode, name=f"s{seed}_{idx}")
        out.programs += 1
        if not is_failure(res):
            if res.verdict == "correct":
                out.correct += 1
                out.answered_from_records += res.compiled_hits > 0
            else:
                out.invalid += 1
            continue
        if not is_valid(spec):
            out.invalid += 1
            continue
        out.failures += 1
        shrunk, sdetail = spec, res.detail
        if do_shrink and len(out.finds) < max_finds:
            shrunk = shrink(spec, mode, failure_kind(res), shrink_budget_s)
            sdetail = run_spec(shrunk, mode).detail
        find = Find(idx, res.verdict, res.detail, spec, shrunk, sdetail)
        if len(out.finds) < max_finds:
            out.finds.append(find)
        if log:
            log(f"[fuzz] program {idx}: {res.verdict}: {res.detail[:160]}\n  shrunk: {shrunk.signature()}")
    out.seconds = time.monotonic() - t0
    return out
