"""The differential fuzzer in CI: a bounded pass over fixed seeds of each grammar family (values,
loops, state) must find nothing, every construct of each grammar renders to a program eager runs
deterministically, and the fuzzer does find a deliberately weakened guard (so the bounded pass is
a check that can fail)."""
from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grammar  # noqa: E402
import grammar_loops  # noqa: E402
import grammar_state  # noqa: E402
from fuzz import fuzz_pass, is_valid, render, run_spec  # noqa: E402

# Programs of the bounded CI pass (about 0.1 s each); ./reproduce.sh fuzz runs long passes.
CI_PROGRAMS = int(os.environ.get("MAGPY_FUZZ_CI_PROGRAMS", "400"))
# Programs of the bounded CI pass over the loops grammar (about 0.4 s each: several monitor runs,
# other-side runs; now and then one of several seconds)
CI_LOOP_PROGRAMS = int(os.environ.get("MAGPY_FUZZ_CI_LOOP_PROGRAMS", "80"))
# Programs of the bounded CI pass over the state grammar (about 0.15 s each)
CI_STATE_PROGRAMS = int(os.environ.get("MAGPY_FUZZ_CI_STATE_PROGRAMS", "120"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_bounded_pass_finds_nothing(seed):
    res = fuzz_pass(CI_PROGRAMS // 2, seed, "magpy", shrink_budget_s=20, max_finds=3)
    assert res.programs == CI_PROGRAMS // 2
    assert res.invalid == 0, "the grammar drew programs eager cannot run deterministically"
    # most programs reach a record: the pass tests guards and mocks, not only monitor runs
    assert res.answered_from_records >= res.correct // 3, res.summary()
    assert res.failures == 0, res.summary() + "\n\n" + "\n\n".join(f.report() for f in res.finds)


def _specs_covering_the_grammar():
    """One program per location x reader (kinds and uses cycled), plus every made object, memo
    key and layer."""
    out = []
    rng = random.Random(0)
    uses_seen = {}
    for loc, kinds in grammar.LOCATIONS.items():
        for r_i, reader in enumerate(grammar.READERS):
            kind = kinds[r_i % len(kinds)]
            uses = grammar.USES[grammar.use_kind(kind)]
            k = uses_seen.get(kind, 0)
            uses_seen[kind] = k + 1
            sched = grammar.draw_schedule(rng, grammar.POOLS[kind], 4)
            prec = 2 if loc in grammar.PRECEDENCE and r_i % 3 == 0 else -1
            out.append(grammar.Spec(slots=[grammar.Slot(loc, kind, reader, uses[k % len(uses)], sched, prec)],
                                    ncalls=4))
    for made in grammar.MADE:
        out.append(grammar.Spec(made=made, ncalls=3))
    for memo in grammar.MEMO_KEYS:
        out.append(grammar.Spec(slots=[grammar.Slot("arg", "int", "top", "mul", [1, 2, 1], -1)], memo=memo,
                                inputs="pool", ncalls=3))
    for write in grammar.WRITES:
        out.append(grammar.Spec(slots=[grammar.Slot("attr", "float", "top", "mul", [1.5, 1.5, 2.0], -1)], write=write,
                                inputs="pool", ncalls=3))
    for layer in grammar.LAYERS:
        out.append(grammar.Spec(layer=layer, train_schedule=[True, False, True], ncalls=3))
    return out


def test_every_construct_renders_to_a_deterministic_program():
    bad = [s.signature() for s in _specs_covering_the_grammar() if not is_valid(s)]
    assert not bad, f"{len(bad)} constructs do not run deterministically in eager: {bad[:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [21, 22])
def test_bounded_loops_pass_finds_nothing(seed):
    res = fuzz_pass(CI_LOOP_PROGRAMS // 2, seed, "magpy", family="loops", shrink_budget_s=20, max_finds=3)
    assert res.programs == CI_LOOP_PROGRAMS // 2
    assert res.invalid == 0, "the loops grammar drew programs eager cannot run deterministically"
    # most programs reach a record (a rolled loop, or one per length or policy seen again)
    assert res.answered_from_records > res.correct // 2, res.summary()
    assert res.failures == 0, res.summary() + "\n\n" + "\n\n".join(f.report() for f in res.finds)


def _loop_specs_covering_the_grammar():
    """One program per loop shape (cells cycled), and one per cell, accumulator, result, hazard
    (loop shapes cycled: index hazards also meet loops that keep their own counter), branch and
    knob, plus nested layers, a zip of unequal lengths and backward passes."""
    L = grammar_loops
    base = dict(lengths=[3, 5, 1, 5, 2], seeds=[0, 1, 2, 3, 0])
    loops = list(L.LOOPS)
    out = [L.LoopSpec(loop=lp, cell=L.CELLS[k % len(L.CELLS)], **base) for k, lp in enumerate(loops)]
    out += [L.LoopSpec(cell=cell, loop="while_countdown", **base) for cell in L.CELLS]
    out += [L.LoopSpec(acc=acc, result="stack", loop=loops[k], **base) for k, acc in enumerate(L.ACCS)]
    out += [L.LoopSpec(result=res, loop=loops[-k - 1], cell=L.CELLS[k % len(L.CELLS)], **base)
            for k, res in enumerate(L.RESULTS)]
    out += [L.LoopSpec(hazards=[hz], loop=loops[k % len(loops)], cell=L.CELLS[k % len(L.CELLS)], **base)
            for k, hz in enumerate(L.HAZARDS)]
    for k, branch in enumerate(L.BRANCHES):
        gates = L.draw_gates(random.Random(k), 3, 5) if "_arg_" in branch else None
        out.append(L.LoopSpec(branch=branch, gates=gates, cell=L.CELLS[k % len(L.CELLS)], **base))
    for k, (name, pool) in enumerate(L.KNOBS.items()):
        sched = [pool[j % len(pool)] for j in (0, 1, 1, 0, len(pool) - 1)]
        out.append(L.LoopSpec(knobs=[L.Knob(name, sched)], hazards=["break_tensor"] if name == "limit" else [],
                              loop="while_from_attr" if name == "start" else "range_size",
                              cell=L.CELLS[k % len(L.CELLS)], **base))
    out += [L.LoopSpec(nested=True, acc="append", cell=cell, loop=lp, **base)
            for cell, lp in (("lstm_tuple", "zip"), ("func_dict", "while_step2"), ("gru", "iter_list"),
                             ("elman", "range_from1"))]
    out.append(L.LoopSpec(loop="zip", ylengths=[4, 3, 1, 6, 2], **base))
    out += [L.LoopSpec(backward=bw, cell=cell, branch="gates_arg_pre", nblocks=2, gates=[(0.0, 0.0), (1.0, 0.0)] * 2 + [(0.0, 0.0)],
                       hazards=["tbptt"], acc="append", result="stack", **base)
            for bw in L.BACKWARDS for cell in ("lstm_tuple", "func_attr")]
    return out


def test_every_loops_construct_renders_to_a_deterministic_program():
    bad = [s.signature() for s in _loop_specs_covering_the_grammar() if not is_valid(s)]
    assert not bad, f"{len(bad)} constructs do not run deterministically in eager: {bad[:5]}"


def test_loops_shrinker_keeps_the_family():
    """Every simpler variant of a loops program is a loops program that still renders."""
    from fuzz import spec_for

    spec = spec_for(21, 0, "loops")
    cands = list(grammar_loops.loop_candidates(spec))
    assert cands and all(isinstance(c, grammar_loops.LoopSpec) for c in cands)
    assert all("def forward" in render(c) for c in cands)


def test_a_weakened_guard_is_found(monkeypatch):
    """Value guards switched off: the fuzzer must notice within a short pass."""
    from magpy import guards

    monkeypatch.setattr(guards.ValueGuard, "check_line", lambda self, var, vars_, pool: None)
    res = fuzz_pass(40, 5, "magpy", do_shrink=False)
    assert res.failures >= 3, res.summary()


def test_a_weakened_rolled_loop_check_is_found(monkeypatch):
    """The checks a rolled loop's body makes in every iteration (an early exit on a tensor value
    that the run saw go one way) switched off: the loops fuzzer must notice within a short pass."""
    from magpy.dynamic import nodes

    monkeypatch.setattr(nodes, "_holds", lambda kind, v, expected: True)
    res = fuzz_pass(20, 21, "magpy", family="loops", do_shrink=False)
    assert res.failures >= 2, res.summary()


def test_a_find_is_shrunk_to_a_small_program(monkeypatch):
    from fuzz import failure_kind, shrink

    from magpy import guards

    monkeypatch.setattr(guards.ValueGuard, "check_line", lambda self, var, vars_, pool: None)
    spec = grammar.Spec(slots=[grammar.Slot("global", "int", "with", "mul", [1, 1, 1, 1, 1], -1),
                               grammar.Slot("arg", "str", "top", "eq", ["relu", "relu", "sigmoid", "relu", "relu"], -1)],
                        layer="layernorm", ncalls=5)
    res = run_spec(spec)
    assert res.verdict == "wrong"
    small = shrink(spec, "magpy", failure_kind(res), budget_s=60)
    assert len(small.slots) == 1 and small.made is None and small.layer == "linear"
    assert len(render(small)) < len(render(spec))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [31, 32])
def test_bounded_state_pass_finds_nothing(seed):
    res = fuzz_pass(CI_STATE_PROGRAMS // 2, seed, "magpy", family="state", shrink_budget_s=20, max_finds=3)
    assert res.programs == CI_STATE_PROGRAMS // 2
    assert res.invalid == 0, "the state grammar drew programs eager cannot run deterministically"
    # most programs reach a record (modes that MagPy runs dynamically are the rest)
    assert res.answered_from_records > res.correct // 2, res.summary()
    assert res.failures == 0, res.summary() + "\n\n" + "\n\n".join(f.report() for f in res.finds)


def _state_specs_covering_the_grammar():
    """One program per class x form x variant (sources, splits before the piece and schedules
    cycled)."""
    L = grammar_state
    out = []
    for cls, forms in L.FORMS.items():
        for k, (form, variants) in enumerate(forms.items()):
            for v, var in enumerate(variants):
                if cls == "registry" and form in L.REGISTRY_WRITERS and var == "made_pair":
                    continue
                p = L.Piece(cls, form, var, [], L.SOURCES[(k + v) % 3], after_split=cls != "closure" and (k + v) % 4 == 0)
                pool = L._pool(p)
                p.schedule = [pool[q % len(pool)] for q in (0, 0, 1, 2, 1)]
                out.append(L.StateSpec(pieces=[p], zs=[0, 1, 1, 2, 5]))
    return out


def test_every_state_construct_renders_to_a_deterministic_program():
    bad = [s.signature() for s in _state_specs_covering_the_grammar() if not is_valid(s)]
    assert not bad, f"{len(bad)} constructs do not run deterministically in eager: {bad[:5]}"


def test_state_shrinker_keeps_the_family():
    from fuzz import spec_for

    spec = spec_for(31, 0, "state")
    cands = list(grammar_state.state_candidates(spec))
    assert cands and all(isinstance(c, grammar_state.StateSpec) for c in cands)
    assert all("def forward" in render(c) for c in cands)


def test_a_weakened_guard_is_found_by_the_state_grammar(monkeypatch):
    """Value guards switched off: closures over a value from outside, flags and precisions read in
    the call are served stale; the state fuzzer must notice within a short pass."""
    from magpy import guards

    monkeypatch.setattr(guards.ValueGuard, "check_line", lambda self, var, vars_, pool: None)
    res = fuzz_pass(20, 31, "magpy", family="state", do_shrink=False)
    assert res.failures >= 3, res.summary()
