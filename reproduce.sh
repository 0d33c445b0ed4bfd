#!/usr/bin/env bash
# MagPy: the single entry point. Sets up .venv on first use, then runs a sub-command.
#
#   ./reproduce.sh setup                build .venv only, self-contained (torch 2.13.0 if none is importable,
#                                       the project, its tools; every version pinned by requirements.lock,
#                                       the closure the numbers were measured in); MAGPY_SYSTEM_SITE_PACKAGES=1
#                                       lets the venv see the interpreter's packages (a GPU machine's torch)
#   ./reproduce.sh lock                 write requirements.lock from this venv's `pip freeze`
#   ./reproduce.sh demo                 compile a small model with MagPy and print what happened
#   ./reproduce.sh test                 ruff + the whole test suite
#   ./reproduce.sh test-core            the MagPy core suite only (Python features, soundness, dynamic/API,
#                                       capture, guard hits, compiled module, bytecode per version)
#   ./reproduce.sh test-pythons [3.X ...]   the core suite on other CPythons (default: of 3.12 3.13 3.10 3.11
#                                       in that order, those other than python3's), each
#                                       in its own .venv-3.X; an interpreter that is not installed, or a venv
#                                       that cannot be built, is reported unavailable; a version that would not
#                                       finish within MAGPY_TEST_BUDGET_S seconds of MAGPY_TEST_START fails (CI)
#   ./reproduce.sh test-torches [X.Y.Z ...]   the core suite on CPython 3.11 with torch 2.9.0 and 2.14.1
#                                       (each in .venv-torchX.Y.Z); a cell not run fails (CI)
#   ./reproduce.sh setup-xla            build .venv-xla: CPython 3.11, torch 2.9.0 + torch_xla 2.9.0 (pinned
#                                       in reproduce.sh, XLA_TORCH) and the project; the experiments run their
#                                       LazyTensor and XLA cells (lazytensor-xla, dynamo-xla, magpy-xla,
#                                       fullgraph-xla) in it, on the CPU with PJRT_DEVICE=CPU
#   ./reproduce.sh test-xla             the XLA tests (tests/test_xla.py) in .venv-xla, built first when
#                                       missing; fails when it cannot run (CI)
#   MAGPY_DROP_VENVS=1 ./reproduce.sh test-pythons|test-torches|test-xla   remove each of those venvs once
#                                       its suite ran (CI: ~5 GB each with a CUDA torch from PyPI)
#   PYTHON=python3.12 ./reproduce.sh <command>   any command on another CPython, in .venv-3.12
#   MAGPY_TORCH=2.14.1 MAGPY_VENV=.venv-torch2.14.1 ./reproduce.sh test-core   the core suite on another
#                                       supported torch (magpy/torch_support.py: 2.9 to 2.14), installed into
#                                       that venv when its torch is another version
#   ./reproduce.sh bench                matched-path overhead benchmark (MagPy vs bare compiled graph)
#   ./reproduce.sh fuzz [--programs N --seed S --against magpy|dynamo ...]   the differential fuzzer
#                                       (random programs run eagerly and compiled, finds shrunk; --help)
#   ./reproduce.sh fig1|fig15|table2|fig16|fig17|fig18 [hydra overrides...]
#   ./reproduce.sh table3 [runner flags...]    (needs PARITYBENCH_DIR)
#   ./reproduce.sh zoo [--models bert,gpt2] [--train] [runner flags...]   coverage on every base model
#                                       type of the installed transformers (small configs, random weights);
#                                       results in results/zoo/transformers-<version>-<backend>[-train]/
#   ./reproduce.sh gpu-quick [--budget-s 540 ...]  a paper-size subset (fig15/table2/fig16 for BERT, ResNet,
#                                       DeBERTa, Quantized) that fits in 10 minutes on one GPU; results in
#                                       results/gpu/<card>/ (--device cpu: the same plan at smoke size)
#   ./reproduce.sh estimate [results/gpu/<card>]   each experiment's estimated run time at paper size on
#                                       a GPU, from the cells gpu-quick measured there (experiments/estimate.py)
#   ./reproduce.sh gpu-wheels           download the wheels gpu-quick needs on a machine without
#                                       internet into wheels/ (Python 3.12 by default: PYVER=3.11 ...)
#   ./reproduce.sh all                  every experiment in turn
#   ./reproduce.sh help                 this list (also -h, --help)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
VENV="${MAGPY_VENV:-$ROOT/.venv}"
if [ -n "${PYTHON:-}" ] && [ -z "${MAGPY_VENV:-}" ]; then
    # An explicit interpreter gets a venv of its own: PYTHON=python3.12 -> .venv-3.12.
    VENV="$ROOT/.venv-$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
fi
CORE_TESTS=(tests/test_python_features.py tests/test_lifetimes.py tests/soundness tests/test_dynamic_and_api.py tests/test_capture.py
            tests/test_guard_hits.py tests/test_compiled_module.py tests/test_bytecode.py tests/test_scalar_reads.py
            tests/test_lifted_shapes.py tests/test_loops.py tests/test_branches.py tests/test_splits.py
            tests/test_torch_support.py tests/test_splits_outer.py tests/test_flow_handling.py tests/test_other_side.py
            tests/test_loop_idioms.py tests/test_branch_idioms.py)
TORCH_PIN="${MAGPY_TORCH:-2.13.0}"   # pyproject.toml declares the supported range; this is the tested pin
LOCK="$ROOT/requirements.lock"   # the full closure the numbers were measured in (pip freeze)
# What every pip install below gets as constraints (-c): the lock without its torch line, since torch
# is installed explicitly (torch==$TORCH_PIN) or kept when an importable supported one is there.
CONSTRAINTS="$VENV/.magpy-constraints.txt"
write_constraints() { grep -v -E '^torch==' "$LOCK" > "$CONSTRAINTS"; }

# requirements.lock from this venv: pip freeze without the editable project, torch without its local
# label (+cpu, +cu130), every line for this CPython only; the header comment is kept.
write_lock() {
    local pyver header
    pyver="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    header="$(sed -n '/^#/!q;p' "$LOCK")"
    { printf '%s\n' "$header"
      "$PY" -m pip freeze --exclude-editable | grep -v '^#' | sed -E 's/^(torch==[^+]*)\+.*/\1/' | LC_ALL=C sort -f \
          | sed -E "s/\$/; python_version == \"$pyver\"/"
    } > "$LOCK.new"
    mv "$LOCK.new" "$LOCK"
    echo "[reproduce] wrote $LOCK ($(grep -c -v '^#' "$LOCK") packages)" >&2
}
XLA_VENV="${MAGPY_XLA_VENV:-$ROOT/.venv-xla}"   # experiments/compilers.py xla_python() finds it there
XLA_TORCH=2.9.0   # torch-xla is released for one torch each: torch-xla 2.9.0 pairs with torch 2.9.0

usage() { sed -n '2,/^set -euo pipefail/{/^#/s/^# \{0,1\}//p}' "$ROOT/reproduce.sh"; }

# A GPU machine ships its own torch (and often pandas, matplotlib) but may have no internet: use its
# interpreter's packages, add the experiments' missing ones from wheels/ (./reproduce.sh gpu-wheels) or
# the registry, and run the project from the checkout (PYTHONPATH) instead of installing it.
bootstrap_gpu() {
    local base="${PYTHON:-python3}"
    if [ ! -x "$VENV/bin/python" ]; then
        echo "[reproduce] creating $VENV (seeing $base's packages)" >&2
        "$base" -m venv --system-site-packages "$VENV"
        # When $base is itself a venv (a GPU image's /opt/.../.venv/bin/python3), --system-site-packages
        # reaches only the base interpreter's packages: a .pth file adds $base's own (its torch).
        local site
        site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
        "$base" -c 'import site, sys; print("\n".join(p for p in site.getsitepackages() if "-packages" in p))' \
            > "$site/_magpy_base_site.pth"
    fi
    write_constraints
    PY="$VENV/bin/python"
    if ! "$PY" -c "import torch" >/dev/null 2>&1; then
        echo "[reproduce] no importable torch: installing torch==$TORCH_PIN" >&2
        "$PY" -m pip install -q -c "$CONSTRAINTS" "torch==$TORCH_PIN"
    fi
    local missing=()
    "$PY" -c "import hydra, omegaconf" 2>/dev/null || missing+=(hydra-core)
    "$PY" -c "import pandas" 2>/dev/null || missing+=(pandas)
    "$PY" -c "import matplotlib" 2>/dev/null || missing+=(matplotlib)
    "$PY" -c "import tabulate" 2>/dev/null || missing+=(tabulate)
    "$PY" -c "import rich" 2>/dev/null || missing+=(rich)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "[reproduce] installing ${missing[*]}" >&2
        if [ -d "$ROOT/wheels" ]; then
            "$PY" -m pip install -q --no-index --find-links "$ROOT/wheels" "${missing[@]}"
        else
            "$PY" -m pip install -q -c "$CONSTRAINTS" "${missing[@]}"
        fi
    fi
}

bootstrap() {
    # $1: "all" (the project with every extra) or "core" (what the core suite needs: pytest, numpy)
    local what="${1:-all}"
    local base="${PYTHON:-python3}"
    if [ ! -x "$VENV/bin/python" ]; then
        if [ -n "${MAGPY_SYSTEM_SITE_PACKAGES:-}" ]; then
            # the interpreter's packages stay visible: a GPU machine's own torch (and torch_xla)
            echo "[reproduce] creating $VENV (seeing $base's packages)" >&2
            "$base" -m venv --system-site-packages "$VENV"
        else
            # self-contained: every package comes from requirements.lock's versions, none from the system
            echo "[reproduce] creating $VENV" >&2
            "$base" -m venv "$VENV"
        fi
    fi
    write_constraints
    local py="$VENV/bin/python"
    # Any importable torch is kept (a GPU machine's own build), unless MAGPY_TORCH asks for another version.
    if ! "$py" -c "import sys, torch; sys.exit('${MAGPY_TORCH:-}' not in ('', torch.__version__.split('+')[0]))" \
            >/dev/null 2>&1; then
        echo "[reproduce] no importable torch${MAGPY_TORCH:+ $MAGPY_TORCH}: installing torch==$TORCH_PIN" >&2
        "$py" -m pip install -q -c "$CONSTRAINTS" "torch==$TORCH_PIN"
    fi
    local stamp="$VENV/.magpy-installed"
    if [ "$what" = core ] && { [ -f "$stamp" ] && [ ! pyproject.toml -nt "$stamp" ]; }; then
        PY="$py"; return   # the full install has what the core suite needs
    fi
    [ "$what" = core ] && stamp="$VENV/.magpy-core-installed"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        if [ "$what" = core ]; then
            echo "[reproduce] installing the project with pytest and numpy" >&2
            "$py" -m pip install -q -c "$CONSTRAINTS" -e ".[dev]" numpy
        else
            echo "[reproduce] installing the project and its tools" >&2
            "$py" -m pip install -q -c "$CONSTRAINTS" -e ".[all]"
        fi
        touch "$stamp"
    fi
    PY="$py"
}

# A CPython X.Y interpreter: pythonX.Y on PATH, else pyenv's newest X.Y.*, else uv's; prints its path.
find_python() {
    local v="$1" p full
    local check="import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))"
    p="$(command -v "python$v" 2>/dev/null || true)"
    if [ -n "$p" ] && "$p" -c "$check" 2>/dev/null; then echo "$p"; return 0; fi
    if command -v pyenv >/dev/null 2>&1; then
        full="$(pyenv versions --bare 2>/dev/null | grep -E "^$v\.[0-9]+$" | sort -V | tail -n 1 || true)"
        p="$( [ -n "$full" ] && PYENV_VERSION="$full" pyenv which python 2>/dev/null || true)"
        if [ -n "$p" ] && "$p" -c "$check" 2>/dev/null; then echo "$p"; return 0; fi
    fi
    if command -v uv >/dev/null 2>&1; then
        p="$(uv python find "$v" 2>/dev/null || true)"
        if [ -n "$p" ] && "$p" -c "$check" 2>/dev/null; then echo "$p"; return 0; fi
    fi
    return 1
}

# MAGPY_DROP_VENVS=1 (CI): each extra venv (~5 GB with a CUDA torch from PyPI) is removed once its
# suite has run, so that the matrix needs the disk of one, not of six.
drop_venv() {
    if [ "${MAGPY_DROP_VENVS:-0}" = 1 ] && [ -n "$1" ] && [ "$1" != "$ROOT/.venv" ]; then
        rm -rf "$1"; echo "[reproduce] removed $1 (MAGPY_DROP_VENVS=1)" >&2
    fi
}

# The core suite on each requested CPython (see the header). Fails only if a suite that ran failed.
test_pythons() {
    local versions=("$@") v main
    if [ ${#versions[@]} -eq 0 ]; then
        # by default every other CPython than the one `test` runs the whole suite on
        main="$("${PYTHON:-python3}" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
        for v in 3.12 3.13 3.10 3.11; do [ "$v" = "$main" ] || versions+=("$v"); done
    fi
    local start="${MAGPY_TEST_START:-$(date +%s)}" budget="${MAGPY_TEST_BUDGET_S:-}"
    # One version's venv (the CUDA torch wheel from PyPI, ~4.7 GB), install and core suite took
    # 200-230 s on a busy 2-core machine; after each version its own time is the estimate if longer.
    local need="${MAGPY_PER_PYTHON_S:-300}"
    local failed=0 py log t0 summary=()
    for v in "${versions[@]}"; do
        t0=$(date +%s)
        if [ -n "$budget" ] && [ $(( $(date +%s) - start + need )) -gt "$budget" ]; then
            # (a cell of the matrix that is not run is a failure: CI must not pass without it)
            summary+=("$v: FAILED: not run (would not finish within the ${budget}s budget)"); failed=1; continue
        fi
        if ! py="$(find_python "$v")"; then
            summary+=("$v: skipped (no CPython $v interpreter found)"); continue
        fi
        echo "[reproduce] CPython $v ($py): core suite in .venv-$v" >&2
        if ! PYTHON="$py" MAGPY_VENV="$ROOT/.venv-$v" "$ROOT/reproduce.sh" setup-core; then
            summary+=("$v: skipped (its venv could not be built)"); drop_venv "$ROOT/.venv-$v"; continue
        fi
        log="$(mktemp)"
        if PYTHON="$py" MAGPY_VENV="$ROOT/.venv-$v" "$ROOT/reproduce.sh" test-core 2>&1 | tee "$log"; then
            summary+=("$v: $(tail -n 1 "$log")")
        else
            summary+=("$v: FAILED $(tail -n 1 "$log")"); failed=1
        fi
        rm -f "$log"; drop_venv "$ROOT/.venv-$v"
        need=$(( $(date +%s) - t0 > need ? $(date +%s) - t0 : need ))
    done
    printf '[reproduce] core suite on other CPythons:\n' >&2
    printf '  %s\n' "${summary[@]}" >&2
    return "$failed"
}

test_torches() {
    # The MagPy core suite on the other supported torch versions (CPython 3.11, each in its own
    # .venv-torchX: the CUDA build from PyPI, which runs on CPU). Every cell runs or fails CI.
    local versions=("$@") v py failed=0 log summary=()
    [ ${#versions[@]} -gt 0 ] || versions=(2.9.0 2.14.1)
    local start="${MAGPY_TEST_START:-$(date +%s)}" budget="${MAGPY_TEST_BUDGET_S:-}" need="${MAGPY_PER_TORCH_S:-480}"
    if ! py="$(find_python 3.11)"; then
        printf '[reproduce] torch versions: unavailable (no CPython 3.11 interpreter found)\n' >&2; return 0
    fi
    for v in "${versions[@]}"; do
        if [ -n "$budget" ] && [ $(( $(date +%s) - start + need )) -gt "$budget" ]; then
            summary+=("torch $v: FAILED: not run (would not finish within the ${budget}s budget)"); failed=1; continue
        fi
        echo "[reproduce] torch $v ($py): core suite in .venv-torch$v" >&2
        if ! PYTHON="$py" MAGPY_TORCH="$v" MAGPY_VENV="$ROOT/.venv-torch$v" "$ROOT/reproduce.sh" setup-core; then
            summary+=("torch $v: FAILED: its venv could not be built"); failed=1; drop_venv "$ROOT/.venv-torch$v"; continue
        fi
        log="$(mktemp)"
        if PYTHON="$py" MAGPY_TORCH="$v" MAGPY_VENV="$ROOT/.venv-torch$v" "$ROOT/reproduce.sh" test-core 2>&1 | tee "$log"; then
            summary+=("torch $v: $(tail -n 1 "$log")")
        else
            summary+=("torch $v: FAILED $(tail -n 1 "$log")"); failed=1
        fi
        rm -f "$log"; drop_venv "$ROOT/.venv-torch$v"
    done
    printf '[reproduce] core suite on other torch versions:\n' >&2
    printf '  %s\n' "${summary[@]}" >&2
    return "$failed"
}

setup_xla() {
    # torch_xla is released for one torch each (torch-xla 2.9.0 for torch 2.9.0): its own venv, so
    # that the other experiments keep measuring with the tested torch.
    local py
    if ! py="$(find_python 3.11)"; then
        echo "[reproduce] setup-xla: no CPython 3.11 interpreter found (torch-xla's wheel is cp311)" >&2; return 1
    fi
    PYTHON="$py" MAGPY_TORCH="$XLA_TORCH" MAGPY_VENV="$XLA_VENV" "$ROOT/reproduce.sh" setup || return 1
    if ! "$XLA_VENV/bin/python" -c "import torch_xla" >/dev/null 2>&1; then
        echo "[reproduce] installing torch-xla into $XLA_VENV" >&2
        local CONSTRAINTS="$XLA_VENV/.magpy-constraints.txt"   # (written by the setup just run: the lock)
        "$XLA_VENV/bin/python" -m pip install -q -c "$CONSTRAINTS" "torch-xla==$XLA_TORCH" || return 1
    fi
    # a check that XLA compiles and runs here (the CPU client: PJRT_DEVICE=CPU)
    PJRT_DEVICE="${PJRT_DEVICE:-CPU}" "$XLA_VENV/bin/python" -c "
import torch, torch_xla
x = torch.ones(2, 2, device=torch_xla.device())
assert (x + x).cpu().tolist() == [[2.0, 2.0], [2.0, 2.0]]
print('[reproduce] XLA ready:', '$XLA_VENV', 'torch', torch.__version__, 'torch_xla', torch_xla.__version__)
" >&2
}

cmd="${1:-demo}"
shift || true
case "$cmd" in help|-h|--help) usage; exit 0 ;; esac   # answered before any environment is built
case "$cmd" in test-pythons) test_pythons "$@"; exit $? ;; esac   # builds its own venvs
case "$cmd" in test-torches) test_torches "$@"; exit $? ;; esac   # ... and so does this
case "$cmd" in setup-xla) setup_xla; exit $? ;; esac   # ... and this
if [ "$cmd" = test-xla ]; then
    # Every XLA test runs, or the stage fails: no venv, no torch_xla or a skipped test is a failure.
    [ -x "$XLA_VENV/bin/python" ] && "$XLA_VENV/bin/python" -c "import torch_xla" >/dev/null 2>&1 || setup_xla \
        || { echo "[reproduce] test-xla: FAILED: $XLA_VENV could not be built" >&2; drop_venv "$XLA_VENV"; exit 1; }
    log="$(mktemp)"
    PJRT_DEVICE="${PJRT_DEVICE:-CPU}" MAGPY_XLA_STAGE=1 PYTHONPATH="$ROOT" \
        "$XLA_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_xla.py "$@" 2>&1 | tee "$log" \
        && status=0 || status=1
    summary="$(tail -n 1 "$log")"; rm -f "$log"; drop_venv "$XLA_VENV"
    if [ "$status" = 0 ] && [[ "$summary" == *skipped* || "$summary" == *deselected* || "$summary" != *passed* ]]; then
        status=1   # a test not run is a failure of this stage
    fi
    [ "$status" = 0 ] && echo "[reproduce] XLA tests: $summary" >&2 || echo "[reproduce] XLA tests: FAILED $summary" >&2
    exit "$status"
fi
if [ "$cmd" = gpu-wheels ]; then
    # Pure-Python wheels of what bootstrap_gpu may miss (antlr4's runtime exists only as an sdist: built here).
    mkdir -p "$ROOT/wheels"
    pyver="${PYVER:-3.12}"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
        -d "$ROOT/wheels" hydra-core==1.3.8 omegaconf==2.3.1 tabulate==0.10.0
    python3 -m pip wheel -q --no-deps -w "$ROOT/wheels" antlr4-python3-runtime==4.9.3
    ls "$ROOT/wheels"; exit 0
fi
case "$cmd" in setup-core|test-core) bootstrap core ;; gpu-quick) bootstrap_gpu ;; *) bootstrap all ;; esac
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

case "$cmd" in
    setup|setup-core) echo "[reproduce] environment ready: $VENV" ;;
    lock) write_lock ;;
    demo) exec "$PY" -m magpy.demo "$@" ;;
    test)
        "$PY" -m ruff check .
        exec "$PY" -m pytest -q "$@" ;;
    test-core) exec "$PY" -m pytest -q "${CORE_TESTS[@]}" "$@" ;;
    bench) exec "$PY" benchmarks/overhead.py "$@" ;;
    fuzz) exec "$PY" tests/fuzz "$@" ;;
    fig1|fig15|table2|fig16|fig17|fig18) exec "$PY" -m experiments.run "experiment=$cmd" "$@" ;;
    table3) exec "$PY" -m paritybench table3 "$@" ;;
    zoo) exec "$PY" -m paritybench zoo "$@" ;;
    gpu-quick) exec "$PY" -m experiments.gpu_quick "$@" ;;
    estimate) exec "$PY" -m experiments.estimate "$@" ;;
    all)
        for e in fig1 fig15 table2 fig16 fig17 fig18; do
            "$PY" -m experiments.run "experiment=$e" "$@"
        done
        if [ -n "${PARITYBENCH_DIR:-}" ]; then "$PY" -m paritybench table3; fi ;;
    *) echo "reproduce.sh: unknown command '$cmd'" >&2; usage >&2; exit 2 ;;
esac
