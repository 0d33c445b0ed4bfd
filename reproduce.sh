#!/usr/bin/env bash
# MagPy: the single entry point. Sets up .venv on first use, then runs a sub-command.
#
#   ./reproduce.sh setup                build .venv only, self-contained (torch 2.13.0 if none is importable,
#                                       the project, its tools; every version pinned by requirements.lock,
#                                       the closure the numbers were measured in); MAGPY_SYSTEM_SITE_PACKAGES=1
#                                       lets the venv see the interpreter's packages (a GPU machine's torch)
#   ./reproduce.sh lock                 write requirements.lock from this venv's `pip freeze`
#   ./reproduce.sh demo                 compile a small model with MagPy and print what happened
#   ./reproduce.sh test                 ruff + the test suite but its slow tests (the ParityBench corpus,
#                                       the fuzzer's bounded passes, end-to-end sweeps: @pytest.mark.slow)
#   ./reproduce.sh test-slow            the slow tests only; fails when one of them is skipped (CI runs
#                                       test, then test-slow: together, the whole suite)
#   ./reproduce.sh test-core            the MagPy core suite only (Python features, soundness, dynamic/API,
#                                       capture, guard hits, compiled module, bytecode per version)
#   ./reproduce.sh test-pythons [3.X ...]   the core suite on other CPythons (default: of 3.12 3.13 3.10 3.11
#                                       in that order, those other than python3's), each
#                                       in its own .venv-3.X; an interpreter that is not installed, or a venv
#                                       that cannot be built, is reported unavailable; a version that would not
#                                       finish within MAGPY_TEST_BUDGET_S seconds of MAGPY_TEST_START fails (CI)
#   ./reproduce.sh test-torches [X.Y.Z ...]   the core suite on CPython 3.11 with torch 2.9.0 and 2.14.1
#                                       (each in .venv-torchX.Y.Z); a cell not run fails (CI)
#   ./reproduce.sh test-matrix          both of those (CI), interleaved: each cell's venv is built while
#                                       the cell before it runs its suite
#   ./reproduce.sh setup-xla            build .venv-xla: CPython 3.11, torch 2.9.0 + torch_xla 2.9.0 (pinned
#                                       in reproduce.sh, XLA_TORCH) and the project; the experiments run their
#                                       LazyTensor and XLA cells (lazytensor-xla, dynamo-xla, magpy-xla,
#                                       fullgraph-xla) in it, on the CPU with PJRT_DEVICE=CPU
#   ./reproduce.sh test-xla             the XLA tests (tests/test_xla.py) in .venv-xla, built first when
#                                       missing; fails when it cannot run (CI)
#   MAGPY_DROP_VENVS=1 ./reproduce.sh test-pythons|test-torches|test-xla   remove each of those venvs once
#                                       its suite ran (CI: ~5 GB each with a CUDA torch from PyPI)
#   MAGPY_TEST_WORKERS=N ./reproduce.sh test|test-slow|test-core   N pytest-xdist workers (default: one per core, at
#                                       most 4; 0: one process, in file order)
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
            tests/test_lifted_shapes.py tests/test_loops.py tests/test_branches.py tests/test_splits.py tests/test_realtype.py
            tests/test_torch_support.py tests/test_splits_outer.py tests/test_flow_handling.py tests/test_other_side.py
            tests/test_loop_idioms.py tests/test_branch_idioms.py)
# The suites spread their tests over one pytest-xdist worker per core (at most 4: each worker holds its
# own torch), handing out tests as workers free up (worksteal: a few tests take 20 s, most well under
# one); MAGPY_TEST_WORKERS=0 runs them in this process, in file order.
NWORKERS="${MAGPY_TEST_WORKERS:-$(n="$(nproc 2>/dev/null || echo 1)"; echo $(( n < 2 ? 0 : n < 4 ? n : 4 )))}"
WORKERS=(); if [ "$NWORKERS" -gt 0 ] 2>/dev/null; then WORKERS=(-n "$NWORKERS" --dist worksteal); fi
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

# The core suite in each cell of a matrix of venvs. A cell is "label|X.Y|torch|venv|strict": its
# CPython, its torch version (- for the tested pin, TORCH_PIN), its venv, and whether a venv that cannot
# be built fails (1) or is reported unavailable (0). A cell's venv (a CUDA torch wheel from PyPI, ~4.7 GB)
# is built in the background while the cell before it runs its suite, so that the matrix costs about
# its suites' time. A cell that would not start its suite within MAGPY_TEST_BUDGET_S seconds of
# MAGPY_TEST_START (with MAGPY_PER_CELL_S, or the longest suite so far, left for it) is not run and fails:
# CI must not pass without it. Fails if any suite that ran failed.
MATRIX_CELLS=() MATRIX_PIDS=() MATRIX_LOGS=()
matrix_build() {   # $1: cell index; starts building its venv in the background
    local label pyv torch venv strict py
    IFS='|' read -r label pyv torch venv strict <<< "${MATRIX_CELLS[$1]}"
    MATRIX_LOGS[$1]="$(mktemp)"
    if ! py="$(find_python "$pyv")"; then
        echo "no CPython $pyv interpreter found" > "${MATRIX_LOGS[$1]}"; MATRIX_PIDS[$1]=none; return
    fi
    echo "[reproduce] $label ($py): building $venv" >&2
    ( if [ "$torch" = - ]; then unset MAGPY_TORCH; else export MAGPY_TORCH="$torch"; fi
      PYTHON="$py" MAGPY_VENV="$venv" "$ROOT/reproduce.sh" setup-core ) > "${MATRIX_LOGS[$1]}" 2>&1 &
    MATRIX_PIDS[$1]=$!
}
run_matrix() {   # $1: what the summary calls the matrix; then its cells
    local title="$1"; shift
    MATRIX_CELLS=("$@") MATRIX_PIDS=() MATRIX_LOGS=()
    local n=${#MATRIX_CELLS[@]} i label pyv torch venv strict py log t0 took failed=0 summary=()
    local start="${MAGPY_TEST_START:-$(date +%s)}" budget="${MAGPY_TEST_BUDGET_S:-}" need="${MAGPY_PER_CELL_S:-360}"
    local next_pyv
    for (( i = 0; i < n; i++ )); do
        IFS='|' read -r label pyv torch venv strict <<< "${MATRIX_CELLS[$i]}"
        [ -n "${MATRIX_PIDS[$i]:-}" ] || matrix_build "$i"
        local built=0
        if [ "${MATRIX_PIDS[$i]}" != none ] && wait "${MATRIX_PIDS[$i]}"; then built=1; fi
        # (not beside a suite on the same CPython: installing the project rebuilds its C extensions
        # in place, over the files that suite's processes have loaded)
        if [ $(( i + 1 )) -lt "$n" ]; then
            IFS='|' read -r _ next_pyv _ <<< "${MATRIX_CELLS[$(( i + 1 ))]}"
            [ "$next_pyv" = "$pyv" ] || matrix_build $(( i + 1 ))
        fi
        if [ "${MATRIX_PIDS[$i]}" = none ]; then
            summary+=("$label: skipped ($(cat "${MATRIX_LOGS[$i]}"))")
        elif [ "$built" = 0 ]; then
            grep -v '^WARNING: Location' "${MATRIX_LOGS[$i]}" | tail -n 20 >&2
            if [ "$strict" = 1 ]; then summary+=("$label: FAILED: its venv could not be built"); failed=1
            else summary+=("$label: skipped (its venv could not be built)"); fi
        elif [ -n "$budget" ] && [ $(( $(date +%s) - start + need )) -gt "$budget" ]; then
            summary+=("$label: FAILED: not run (would not finish within the ${budget}s budget)"); failed=1
        else
            grep -v '^WARNING: Location' "${MATRIX_LOGS[$i]}" >&2
            py="$(find_python "$pyv")"
            echo "[reproduce] $label ($py): core suite in $venv" >&2
            log="$(mktemp)" t0=$(date +%s)
            if ( if [ "$torch" = - ]; then unset MAGPY_TORCH; else export MAGPY_TORCH="$torch"; fi
                 PYTHON="$py" MAGPY_VENV="$venv" "$ROOT/reproduce.sh" test-core ) 2>&1 | tee "$log"; then
                summary+=("$label: $(tail -n 1 "$log")")
            else
                summary+=("$label: FAILED $(tail -n 1 "$log")"); failed=1
            fi
            took=$(( $(date +%s) - t0 )); [ "$took" -gt "$need" ] && need=$took
            rm -f "$log"
        fi
        rm -f "${MATRIX_LOGS[$i]}"; drop_venv "$venv"
    done
    printf '[reproduce] core suite %s:\n' "$title" >&2
    printf '  %s\n' "${summary[@]}" >&2
    return "$failed"
}

# The core suite on other CPythons (default: 3.12 3.13 3.10 3.11, leaving out python3's own version).
python_cells() {
    local versions=("$@") v main
    if [ ${#versions[@]} -eq 0 ]; then
        main="$("${PYTHON:-python3}" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
        for v in 3.12 3.13 3.10 3.11; do [ "$v" = "$main" ] || versions+=("$v"); done
    fi
    for v in "${versions[@]}"; do echo "CPython $v|$v|-|$ROOT/.venv-$v|0"; done
}
# ... and on CPython 3.11 with other torch versions (default 2.9.0 and 2.14.1); every one runs or fails.
torch_cells() {
    local versions=("$@") v
    [ ${#versions[@]} -gt 0 ] || versions=(2.9.0 2.14.1)
    for v in "${versions[@]}"; do echo "torch $v|3.11|$v|$ROOT/.venv-torch$v|1"; done
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
# (these build their own venvs)
case "$cmd" in test-pythons) mapfile -t cells < <(python_cells "$@"); run_matrix "on other CPythons" "${cells[@]}"; exit $? ;; esac
case "$cmd" in test-torches) mapfile -t cells < <(torch_cells "$@"); run_matrix "on other torch versions" "${cells[@]}"; exit $? ;; esac
case "$cmd" in test-matrix)
    # (interleaved: each cell's venv is built beside a suite on another CPython)
    mapfile -t pcells < <(python_cells); mapfile -t tcells < <(torch_cells); cells=()
    for (( i = 0; i < ${#pcells[@]} || i < ${#tcells[@]}; i++ )); do
        [ "$i" -lt "${#pcells[@]}" ] && cells+=("${pcells[$i]}")
        [ "$i" -lt "${#tcells[@]}" ] && cells+=("${tcells[$i]}")
    done
    run_matrix "on other CPythons and torch versions" "${cells[@]}"; exit $? ;; esac
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
        exec "$PY" -m pytest -q "${WORKERS[@]}" -m "not slow" "$@" ;;
    test-slow)
        # Every slow test runs, or the stage fails: a skipped one is a failure (the others are deselected).
        log="$(mktemp)"
        "$PY" -m pytest -q "${WORKERS[@]}" -m slow "$@" 2>&1 | tee "$log" && status=0 || status=1
        summary="$(tail -n 1 "$log")"; rm -f "$log"
        if [ "$status" = 0 ] && [[ "$summary" == *skipped* || "$summary" != *passed* ]]; then
            status=1   # a test not run is a failure of this stage
        fi
        [ "$status" = 0 ] && echo "[reproduce] slow tests: $summary" >&2 || echo "[reproduce] slow tests: FAILED $summary" >&2
        exit "$status" ;;
    test-core) exec "$PY" -m pytest -q "${WORKERS[@]}" "${CORE_TESTS[@]}" "$@" ;;
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
