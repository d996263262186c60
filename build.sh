#!/usr/bin/env bash
# The one entry point for people: set-up, tests, demo, benchmarks, packaging for spark-submit.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV="${DEID_VENV:-$ROOT/.venv}"  # DEID_VENV: reuse an existing virtualenv
PY="$VENV/bin/python"
export PYSPARK_PYTHON="$PY" PYSPARK_DRIVER_PYTHON="$PY"

die() { echo "build.sh: error: $*" >&2; exit 1; }

check_python() {
  command -v python3 >/dev/null || die "python3 not found; install Python 3.11"
  python3 -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else 1)' ||
    die "Python >= 3.11 is required (found $(python3 --version 2>&1))"
}

check_java() {
  command -v java >/dev/null || die "java not found: Spark 4 needs Java 17 (e.g. apt-get install openjdk-17-jre-headless)"
  local v
  v=$(java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
  case "$v" in
    17*|21*) ;;
    *) die "Java 17 or 21 is required by Spark 4 (found '${v:-unknown}')" ;;
  esac
}

setup() {
  check_python
  local stamp="$VENV/.deid-setup"
  if [ -x "$PY" ] && [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; then
    return 0
  fi
  echo "==> creating $VENV and installing the project with its test tools"
  [ -x "$PY" ] || python3 -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q -e ".[test,package,connect]"
  # Cython is a build dependency only (pinned in the 'compile' extra: the compiled spans were checked
  # identical to pure Python with that release); without it the engine runs as pure Python.
  "$PY" -m pip install -q -e ".[compile]" ||
    echo "build.sh: Cython could not be installed: the engine runs as pure Python"
  touch "$stamp"
}

# Compile the [tool.deid.compiled] modules whose build is not current (in parallel, one per core);
# no compiler or no Cython: one line, pure Python, same outputs. DEID_COMPILED=0 skips it.
compile_modules() {
  [ "${DEID_COMPILED:-1}" = 0 ] && return 0
  "$PY" scripts/compile_modules.py
}

cmd_setup() { setup; compile_modules; echo "set up: $VENV"; }

cmd_test() {
  setup
  compile_modules
  check_java
  "$VENV/bin/ruff" check .
  "$VENV/bin/lint-imports"
  "$PY" -m pytest "$@"
}

cmd_demo() {
  setup
  compile_modules
  check_java
  local out="$ROOT/out/demo"
  rm -rf "$out"
  echo "==> de-identifying the built-in sample notes (samples/notes.parquet) in Spark local mode"
  "$PY" jobs/deidentify.py --input samples/notes.parquet --output "$out" \
    --name-columns patient_first_name,patient_last_name,attending_name:DOCTOR --demo-key
  "$PY" -m deid_core.app.commands.summary "$out"
}

cmd_golden() {
  setup
  compile_modules
  "$PY" -m tests.golden_outputs "$@"
}

cmd_package() {
  setup
  "$PY" scripts/package.py "$@"
}

cmd_bench() {
  setup
  compile_modules
  local what="${1:-all}"; shift || true
  "$PY" -m benchmarks "$what" "$@"
}

cmd_help() {
  cat <<'HELP'
usage: ./build.sh COMMAND [ARGS]

  setup      create .venv and install the project with its test and packaging tools; compile the
             engine modules pyproject.toml [tool.deid.compiled] lists (Cython, pure Python without it)
  test       set up if needed, compile what changed, lint with ruff, check the import layering
             (import-linter), run the whole pytest suite (extra args go to pytest)
  demo       set up if needed, compile what changed, run the Spark job in local mode on the built-in sample notes,
             print where the output is and a short summary
  golden     compare the default pipeline's output on the sample notes with tests/golden/
             (--update rewrites it and the README example; commit it with a deliberate change)
  package    build dist/: the project wheel, the default bundle and a packed environment
             (venv-pack) for spark-submit --archives (no compiled modules: pure Python there)
  bench      compile what changed, run a benchmark: tokenize | rules | surrogates | leakcheck | synth | job | worker |
             tagger | generalization | all (see benchmarks/)
  help       this text
HELP
}

case "${1:-help}" in
  setup) shift; cmd_setup "$@" ;;
  test) shift; cmd_test "$@" ;;
  demo) shift; cmd_demo "$@" ;;
  golden) shift; cmd_golden "$@" ;;
  package) shift; cmd_package "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  help|-h|--help) cmd_help ;;
  *) cmd_help >&2; die "unknown command '$1'" ;;
esac
