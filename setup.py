"""Builds the loader's one C extension in place: `python setup.py build_ext --inplace`.

(`make app` / `make test` run it; without a compiler the loader uses its pure-Python path.)
"""

from setuptools import Extension, setup

setup(
    name="transcript-lens",
    packages=[],
    ext_modules=[Extension("loaders._scan", ["loaders/_scan.c"], extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"])],
)
