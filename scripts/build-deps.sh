#!/usr/bin/env bash
# What building the loader's C extensions needs beyond Python: a C compiler and
# SQLite's header and library (Debian: gcc, libsqlite3-dev). Installs what is
# missing when it can (root or sudo); otherwise says what is missing and goes on
# (`make app` then runs the pure-Python paths; `make test` fails on it).
set -uo pipefail

missing=()
command -v cc >/dev/null || missing+=(gcc)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO=none; fi
if [ "$SUDO" != none ] && command -v apt-get >/dev/null; then
  echo "build-deps: installing ${missing[*]} for the loader's C extensions" >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null && exit 0
fi
echo "build-deps: missing ${missing[*]}: the loader's C extensions may not build (it then runs slower, same results)" >&2
exit 0
