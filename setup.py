"""Builds the loader's C extensions in place: `python setup.py build_ext --inplace`.

(`make app` / `make test` run it.) Without them the loader takes its pure-Python
paths (same results, slower). `_readahead` also needs SQLite's header and
library (Debian: libsqlite3-dev); it is optional: if it cannot be built, only
the reading of large SQLite stores is slower.
"""

from setuptools import Extension, setup

_FLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]

setup(
    name="transcript-lens",
    packages=[],
    ext_modules=[
        Extension("loaders._scan", ["loaders/_scan.c"], depends=["loaders/_mpscan.h", "loaders/_columns.h"], extra_compile_args=_FLAGS),
        Extension("loaders._readahead", ["loaders/_readahead.c"], libraries=["sqlite3"], extra_compile_args=_FLAGS, optional=True),
    ],
)
