#!/usr/bin/env bash
# MagPy: the single entry point. Sets up .venv on first use, then runs a sub-command.
#
#   ./reproduce.sh setup                build .venv only (torch 2.13.0 if none is importable, the project,
#                                       its tools; versions pinned by constraints.txt)
#   ./reproduce.sh demo                 compile a small model with MagPy and print what happened
#   ./reproduce.sh test                 ruff + the whole test suite
#   ./reproduce.sh bench                matched-path overhead benchmark (MagPy vs bare compiled graph)
#   ./reproduce.sh fig1|fig15|table2|fig16|fig17|fig18 [hydra overrides...]
#   ./reproduce.sh table3 [runner flags...]    (needs PARITYBENCH_DIR)
#   ./reproduce.sh all                  every experiment in turn
#   ./reproduce.sh help                 this list (also -h, --help)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
VENV="${MAGPY_VENV:-$ROOT/.venv}"
TORCH_PIN="2.13.0"
CONSTRAINTS="$ROOT/constraints.txt"   # the versions the numbers were measured with

usage() { sed -n '2,/^set -euo pipefail/{/^#/s/^# \{0,1\}//p}' "$ROOT/reproduce.sh"; }

bootstrap() {
    local base="${PYTHON:-python3}"
    if [ ! -x "$VENV/bin/python" ]; then
        echo "[reproduce] creating $VENV" >&2
        # system site packages: a GPU machine's own torch (and torch_xla) stays visible.
        "$base" -m venv --system-site-packages "$VENV"
    fi
    local py="$VENV/bin/python"
    if ! "$py" -c "import torch" >/dev/null 2>&1; then
        echo "[reproduce] no importable torch: installing torch==$TORCH_PIN" >&2
        "$py" -m pip install -q -c "$CONSTRAINTS" "torch==$TORCH_PIN"
    fi
    local stamp="$VENV/.magpy-installed"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        echo "[reproduce] installing the project and its tools" >&2
        "$py" -m pip install -q -c "$CONSTRAINTS" -e ".[all]"
        touch "$stamp"
    fi
    PY="$py"
}

cmd="${1:-demo}"
shift || true
case "$cmd" in help|-h|--help) usage; exit 0 ;; esac   # answered before any environment is built
bootstrap
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

case "$cmd" in
    setup) echo "[reproduce] environment ready: $VENV" ;;
    demo) exec "$PY" -m magpy.demo "$@" ;;
    test)
        "$PY" -m ruff check .
        exec "$PY" -m pytest -q "$@" ;;
    bench) exec "$PY" benchmarks/overhead.py "$@" ;;
    fig1|fig15|table2|fig16|fig17|fig18) exec "$PY" -m experiments.run "experiment=$cmd" "$@" ;;
    table3) exec "$PY" -m paritybench table3 "$@" ;;
    all)
        for e in fig1 fig15 table2 fig16 fig17 fig18; do
            "$PY" -m experiments.run "experiment=$e" "$@"
        done
        if [ -n "${PARITYBENCH_DIR:-}" ]; then "$PY" -m paritybench table3; fi ;;
    *) echo "reproduce.sh: unknown command '$cmd'" >&2; usage >&2; exit 2 ;;
esac
