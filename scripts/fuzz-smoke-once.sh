#!/usr/bin/env bash
# `make test`'s fuzz smoke, run once per change of what it fuzzes:
#
#   bash scripts/fuzz-smoke-once.sh COMMAND...      (make test: `make fuzz-smoke ...`)
#
# The smoke tries the same inputs on every run (fuzz/campaign.py SMOKE_RUNS, libFuzzer seed 1),
# so on the same code it gives the same answer. Its key is the content of everything it runs:
# the C sources and their Python twins (loaders/), the targets and their seeds' generator (fuzz/,
# storegen/), the build (setup.py, scripts/build-sanitized.sh, the Makefile), the pinned packages,
# the compiler and the Python. A smoke that passed records its key in the machine's fuzz cache
# (the folder atheris is built into, scripts/build-sanitized.sh); a later run with the same key
# says so and runs nothing. Any edit to those files, committed or not, runs it again.
# FUZZ_SMOKE_ALWAYS=1, an empty TL_FUZZ_TOOLS_CACHE or a checkout without git: it always runs.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: fuzz-smoke-once.sh COMMAND..." >&2; exit 2; }

CACHE=${TL_FUZZ_TOOLS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/transcript-lens-fuzz}
if [ "${FUZZ_SMOKE_ALWAYS:-}" = 1 ] || [ -z "$CACHE" ] || ! git rev-parse --git-dir >/dev/null 2>&1; then
  exec "$@"
fi

key=$({
  git ls-files -z --cached --others --exclude-standard -- loaders fuzz storegen setup.py Makefile \
      requirements.txt requirements-dev.txt scripts/build-sanitized.sh scripts/fuzz-smoke-once.sh \
    | sort -z | xargs -0 sha256sum 2>&1 || true   # (a file deleted but still tracked: its error line)
  clang --version 2>/dev/null | head -1 || true
  "${PY:-.venv/bin/python}" -c 'import sys; print(sys.version)'
} | sha256sum | cut -c1-32)
stamp="$CACHE/smoke-passed/$key"

if [ -f "$stamp" ]; then
  echo "fuzz smoke: passed on this machine $(cat "$stamp") with the same code (key $key): not run again"
  exit 0
fi
"$@"
mkdir -p "$(dirname "$stamp")"
date -u +%Y-%m-%dT%H:%MZ > "$stamp"
