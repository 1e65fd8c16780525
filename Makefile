# Transcript Lens: `make app` runs the app on the bundled demo store, `make test` runs every test.
# Both set up what they need on a fresh machine (virtualenv, packages, services).

VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: app test ext install bench demo clean fuzz fuzz-smoke gallery

# Python writes each module's bytecode the first time a process imports it, and reads it after:
# pip then need not compile every file of every package at install (--no-compile; most of
# plotly's and pandas' files are never imported), which was a third of a fresh set-up's time.
# A shell that sets PYTHONDONTWRITEBYTECODE would make every process compile its imports anew.
unexport PYTHONDONTWRITEBYTECODE

# The pinned lock (requirements*.txt); pyproject.toml holds the ranges a `pip install` resolves.
$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q --no-compile -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(VENV)/bin/pip install -q --no-compile -r requirements-dev.txt
	touch $@

# The project itself, editable, over the pinned packages: `transcript-lens` on the venv's PATH,
# `import analytics, loaders` from any folder or notebook server. --no-deps: the lock above
# has them; --no-build-isolation: the pinned setuptools builds it (nothing downloaded). The
# build backend's "Editable installation" banner (folders named like the package take precedence
# in the working directory) says what a checkout is meant to do here: silenced.
$(VENV)/.project: pyproject.toml setup.py $(VENV)/.runtime
	-bash scripts/build-deps.sh
	PYTHONWARNINGS="ignore:Editable installation" $(VENV)/bin/pip install -q --no-deps --no-build-isolation -e .
# Byte-compiled once, as `pip install` of a wheel does: an editable install otherwise
# compiles every module on every start where PYTHONDONTWRITEBYTECODE is set (~0.07 s a load).
	$(PY) -m compileall -q loaders analytics transcript_lens ui storegen lens_notebook > /dev/null
	touch $@

install: $(VENV)/.project

# The loader's C extensions (loaders/_scan.c, loaders/_readahead.c; rebuilt only when the
# source changed). The app runs without them (the pure-Python twins); the tests require them.
ext: $(VENV)/.runtime
	bash scripts/build-deps.sh
	$(PY) setup.py -q build_ext --inplace

# The LangGraph.js store writers the tests run (storegen/js): the packages pinned in its
# package-lock.json, installed again only when the lock changed (Node 20 and npm on PATH); a
# machine's first `npm ci` of a lock is kept and copied into later clones (scripts/js-deps.sh).
JS_STAMP := storegen/js/node_modules/.installed
$(JS_STAMP): storegen/js/package-lock.json scripts/js-deps.sh
	bash scripts/js-deps.sh
	touch $@

app: install
	-$(PY) setup.py -q build_ext --inplace
	$(VENV)/bin/transcript-lens app

# OpenSSL 1.1 for the Redis Stack server the tests start on a private port (scripts/redis-stack-libs.sh).
REDIS_STACK_LIBS := $(VENV)/redis-stack-libs/libssl.so.1.1
$(REDIS_STACK_LIBS): scripts/redis-stack-libs.sh $(VENV)/.dev
	bash scripts/redis-stack-libs.sh $(VENV)/redis-stack-libs $(PY)

# The fuzz smoke of `make test`: every target, the same inputs on every run (fuzz/campaign.py
# SMOKE_RUNS), stopped after TEST_FUZZ_SECONDS in all only if it has become that slow
# (`make fuzz`: ten minutes a target).
TEST_FUZZ_SECONDS ?= 300

# Hypothesis draws the same examples on every `make test`, wherever it runs (tests/conftest.py, profile "ci").
# The tests' temporary files (pytest's tmp_path, every tempfile of the code under test) go to
# memory where the machine has a tmpfs at /dev/shm: a run writes, syncs and deletes thousands of
# small databases, and waiting on the disk for them idled both cores for minutes.
TEST_TMPDIR := $(if $(wildcard /dev/shm/.),/dev/shm,/tmp)/transcript-lens-tests

# The folder comes first: TMPDIR is set for the set-up steps before it too (their temporary files).
$(TEST_TMPDIR):
	mkdir -p $@

test: export HYPOTHESIS_PROFILE = ci
test: export TMPDIR = $(TEST_TMPDIR)
test: $(TEST_TMPDIR) $(VENV)/.dev ext install $(JS_STAMP) $(REDIS_STACK_LIBS)
	bash scripts/test-services.sh
	$(PY) -m pytest -n 2 --dist loadfile -q -p no:cacheprovider
# Every docstring example of the packages runs as written.
	$(PY) -m pytest -q -p no:cacheprovider --doctest-modules loaders analytics transcript_lens ui lens_notebook
# The loader's tests that pass through the C code again without it (loaders/_native.py): the
# Python twins give the same tables. tests/loaders/twins.py lists them, and why the others are not.
	TRANSCRIPT_LENS_PUREPYTHON=1 $(PY) -m pytest -n 2 --dist loadfile -q -p no:cacheprovider $$($(PY) -m tests.loaders.twins)
# Differential fuzzing of every C target under ASan + UBSan (fuzz/README.md), a few seconds each; once per
# change of the code it fuzzes (scripts/fuzz-smoke-once.sh: the same inputs on the same code give the same answer).
	PY=$(PY) bash scripts/fuzz-smoke-once.sh $(MAKE) fuzz-smoke FUZZ_SMOKE_SECONDS=$(TEST_FUZZ_SECONDS)

bench: $(VENV)/.dev ext install
	$(PY) bench/bench_load.py

# A screenshot of every page and state of the app, on the demo and a larger generated store, with an
# index page: build/gallery/index.html (scripts/gallery.py; Debian's Chromium). Look at it after changing a page.
gallery: $(VENV)/.dev ext install
	$(PY) scripts/gallery.py

demo: $(VENV)/.dev install
	$(PY) demo/make_demo_store.py

# Differential fuzzing of the C extensions against their Python twins under ASan + UBSan (fuzz/README.md):
# FUZZ_SECONDS per target, one target at a time; `fuzz-smoke` runs every target, a fixed count of inputs each
# (at most FUZZ_SMOKE_SECONDS in all),
# and fails on any crash, sanitizer report or mismatch. Both install clang and build atheris on first use.
FUZZ_DIR ?= build/fuzz
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 300
# The smoke's targets two at a time (one process each: both cores busy); `make fuzz` runs one at a time.
FUZZ_SMOKE_JOBS ?= 2
FUZZ_TARGETS ?= row,thread,ts_list,stage,readahead,rows

fuzz: $(VENV)/.dev
	PY=$(PY) bash scripts/build-sanitized.sh $(FUZZ_DIR)
	[ -d $(FUZZ_DIR)/seeds/row ] || PYTHONPATH=. $(PY) -m fuzz.seeds $(FUZZ_DIR)/seeds
	PYTHONPATH=. $(PY) -m fuzz.campaign --dir $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) --targets $(FUZZ_TARGETS)

fuzz-smoke: $(VENV)/.dev
	PY=$(PY) bash scripts/build-sanitized.sh $(FUZZ_DIR)
	[ -d $(FUZZ_DIR)/seeds/row ] || PYTHONPATH=. $(PY) -m fuzz.seeds $(FUZZ_DIR)/seeds
	PYTHONPATH=. $(PY) -m fuzz.campaign --dir $(FUZZ_DIR) --seconds $(FUZZ_SMOKE_SECONDS) --targets $(FUZZ_TARGETS) --smoke --jobs $(FUZZ_SMOKE_JOBS)

clean:
	rm -rf .cache .pytest_cache .hypothesis build dist *.egg-info loaders/_*.so loaders/_*.pyd
