"""One fuzz target under atheris (libFuzzer), in a process with the sanitizer runtime preloaded.

    python -m fuzz.run TARGET [libFuzzer flags] [CORPUS_DIR ...]
    python -m fuzz.run TARGET --replay FILE_OR_DIR ...   (no atheris: run inputs once, e.g. a crash file)

`python -m fuzz.campaign` (make fuzz / make fuzz-smoke) starts this with the
environment it needs (LD_PRELOAD of atheris's asan_with_fuzzer.so,
PYTHONMALLOC=malloc so that ASan sees every Python allocation, TL_FUZZ_EXT).
The loader's modules are instrumented for Python coverage as well, so inputs
that take new branches of the Python twins are kept as well as those that take
new branches in C.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.common import use_sanitized_extensions


def _replay(target, paths: list[str]) -> int:
    files = [f for p in map(Path, paths) for f in (sorted(p.iterdir()) if p.is_dir() else [p]) if f.is_file()]
    for f in files:
        target(f.read_bytes())
    print(f"replayed {len(files)} inputs: no mismatch")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        raise SystemExit(__doc__)
    name, rest = argv[1], argv[2:]
    if rest[:1] == ["--replay"]:
        import fuzz.targets as targets

        use_sanitized_extensions()
        targets.bind()
        return _replay(targets.TARGETS[name], rest[1:])

    import atheris

    use_sanitized_extensions()
    with atheris.instrument_imports(include=["loaders", "fuzz.targets"]):
        import fuzz.targets as targets

        targets.bind()
    target = targets.TARGETS[name]
    atheris.Setup([argv[0], *rest], target)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
