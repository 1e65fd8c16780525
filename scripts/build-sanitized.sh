#!/usr/bin/env bash
# The fuzzing toolchain and a sanitizer build of the loader's C extensions (`make fuzz`, fuzz/README.md).
#
#   bash scripts/build-sanitized.sh [FUZZ_DIR]     (default build/fuzz; PY=.venv/bin/python)
#
# 1. clang and its sanitizer/libFuzzer runtimes (Debian: clang, libclang-rt-<v>-dev), installed when missing;
# 2. atheris, built from its source release with that clang into FUZZ_DIR/site (not into the venv): only a
#    source build writes asan_with_fuzzer.so, the ASan runtime with libFuzzer linked in that a fuzzed native
#    extension needs (LD_PRELOAD; the PyPI wheel has none). About 3 minutes of compiling on one core, about half that on two;
# 3. loaders/_scan.c, loaders/_readahead.c and loaders/_rows.c compiled with AddressSanitizer, UBSan (every report aborts)
#    and libFuzzer's coverage into FUZZ_DIR/ext/loaders/. The in-place .so files next to the sources are
#    never touched; fuzz/common.py puts FUZZ_DIR/ext/loaders first on `loaders.__path__`.
# Idempotent: each step is skipped when its result is there and newer than its inputs.
set -euo pipefail

FUZZ_DIR=${1:-build/fuzz}
PY=${PY:-.venv/bin/python}
ATHERIS_VERSION=3.0.0
SITE="$FUZZ_DIR/site"
EXT="$FUZZ_DIR/ext/loaders"

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
apt_install() {
  echo "build-sanitized: installing $* (Debian)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

command -v clang >/dev/null || apt_install clang
[ -f /usr/include/sqlite3.h ] || apt_install libsqlite3-dev
# The runtimes live in clang's resource folder; Debian ships them apart from the compiler.
RT_DIR="$(clang -print-resource-dir)/lib/linux"
if [ ! -f "$RT_DIR/libclang_rt.asan-x86_64.a" ] || [ ! -f "$RT_DIR/libclang_rt.fuzzer_no_main-x86_64.a" ]; then
  major=$(clang -dumpversion | cut -d. -f1)
  apt_install "libclang-rt-$major-dev"
fi

if [ ! -f "$SITE/asan_with_fuzzer.so" ] || ! PYTHONPATH="$SITE" "$PY" -c "import atheris" 2>/dev/null; then
  echo "build-sanitized: building atheris $ATHERIS_VERSION with $(clang --version | head -1) (minutes, once per build folder)" >&2
  rm -rf "$SITE"
  # Its six C++ extensions compiled side by side, one per core (setuptools' `build_ext --parallel`,
  # read from the extra config file distutils takes from DIST_EXTRA_CONFIG): the build is compile-bound.
  jobs_cfg=$(mktemp)
  printf '[build_ext]\nparallel = %s\n' "$(nproc)" > "$jobs_cfg"
  DIST_EXTRA_CONFIG="$jobs_cfg" CC=clang CXX=clang++ "$PY" -m pip install -q --no-binary atheris --target "$SITE" "atheris==$ATHERIS_VERSION"
  rm -f "$jobs_cfg"
  [ -f "$SITE/asan_with_fuzzer.so" ] || { echo "build-sanitized: atheris built no asan_with_fuzzer.so" >&2; exit 1; }
fi

mkdir -p "$EXT"
SUFFIX=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
INCLUDES=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
# -O1 and frame pointers: readable sanitizer stacks at a usable speed. No recovery: the first
# report of either sanitizer aborts the run, and libFuzzer keeps the input that caused it.
CFLAGS=(-shared -fPIC -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter
        -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -I"$INCLUDES")
build() {  # build NAME SOURCE [LIBS...]
  local out="$EXT/$1$SUFFIX" src=$2
  shift 2
  if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt loaders/_mpscan.h ] && [ "$out" -nt loaders/_columns.h ] && [ "$out" -nt loaders/_grams.h ] \
     && [ "$out" -nt "$0" ]; then
    return
  fi
  echo "build-sanitized: $src -> $out" >&2
  clang "${CFLAGS[@]}" "$src" -o "$out.tmp" "$@"
  mv "$out.tmp" "$out"
}
build _scan loaders/_scan.c
build _readahead loaders/_readahead.c -lsqlite3
build _rows loaders/_rows.c -lsqlite3

# A build without the instrumentation would fuzz blind and find nothing: refuse it.
for so in "$EXT"/_scan"$SUFFIX" "$EXT"/_readahead"$SUFFIX" "$EXT"/_rows"$SUFFIX"; do
  nm "$so" | grep __asan_report >/dev/null || { echo "build-sanitized: $so has no AddressSanitizer checks" >&2; exit 1; }
  nm "$so" | grep __sanitizer_cov >/dev/null || { echo "build-sanitized: $so has no coverage counters" >&2; exit 1; }
done
