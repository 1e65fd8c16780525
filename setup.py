"""The parts of the build pyproject.toml cannot say: the loader's C extensions, and the app's files.

`pip install .` (or `python -m build`) builds everything; `python setup.py build_ext --inplace`
builds the extensions next to their sources (`make app` / `make test` do, before installing the
project editable). Every extension is optional: without a compiler the loader takes its
pure-Python paths (same results, slower; `make test` fails on a missing one, tests/loaders/
test_native.py). `_readahead` and `_rows` also need SQLite's header and library (Debian:
libsqlite3-dev); without them only the reading of large SQLite stores is slower.

app.py, pages/, demo/demo.sqlite and .streamlit/config.toml stay at the top of the repository
(`streamlit run app.py` works in a checkout); a built wheel carries a copy of them in
transcript_lens/_app/, where `transcript-lens app` finds them (`transcript_lens.app_dir()`).
An editable install needs no copy: the package finds them in the checkout.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

_FLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]

#: Copied into transcript_lens/_app/ with the same relative paths (MANIFEST.in puts them in the sdist).
APP_FILES = ["app.py", "pages/*.py", "demo/demo.sqlite", ".streamlit/config.toml"]


class build_py_with_app(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "transcript_lens" / "_app"
        for pattern in APP_FILES:
            files = sorted(root.glob(pattern))
            if not files:
                raise FileNotFoundError(f"{pattern}: the app's files are not in the source tree")
            for src in files:
                rel = src.relative_to(root)
                (target / rel.parent).mkdir(parents=True, exist_ok=True)
                self.copy_file(str(src), str(target / rel))


setup(
    cmdclass={"build_py": build_py_with_app},
    ext_modules=[
        Extension("loaders._scan", ["loaders/_scan.c"], depends=["loaders/_mpscan.h", "loaders/_columns.h", "loaders/_grams.h"],
                  extra_compile_args=_FLAGS, optional=True),
        Extension("loaders._readahead", ["loaders/_readahead.c"], libraries=["sqlite3"], extra_compile_args=_FLAGS,
                  optional=True),
        Extension("loaders._rows", ["loaders/_rows.c"], depends=["loaders/_mpscan.h"], libraries=["sqlite3"],
                  extra_compile_args=_FLAGS, optional=True),
    ],
)
