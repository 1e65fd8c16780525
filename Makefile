# Transcript Lens: `make app` runs the app on the bundled demo store, `make test` runs every test.
# Both set up what they need on a fresh machine (virtualenv, packages, services).

VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: app test ext bench demo clean

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(VENV)/bin/pip install -q -r requirements-dev.txt
	touch $@

# The loader's C extensions (loaders/_scan.c, loaders/_readahead.c; rebuilt only when the
# source changed). The app runs without them (the pure-Python twins); the tests require them.
ext: $(VENV)/.runtime
	bash scripts/build-deps.sh
	$(PY) setup.py -q build_ext --inplace

app: $(VENV)/.runtime
	-bash scripts/build-deps.sh
	-$(PY) setup.py -q build_ext --inplace
	$(VENV)/bin/streamlit run app.py

test: $(VENV)/.dev ext
	bash scripts/test-services.sh
	$(PY) -m pytest -n 2 --dist loadfile -q -p no:cacheprovider
	# The loader again without any C (loaders/_native.py): the Python twins give the same tables.
	TRANSCRIPT_LENS_PUREPYTHON=1 $(PY) -m pytest -n 2 --dist loadfile -q -p no:cacheprovider tests/loaders

bench: $(VENV)/.dev ext
	$(PY) bench/bench_load.py

demo: $(VENV)/.dev
	$(PY) demo/make_demo_store.py

clean:
	rm -rf .cache .pytest_cache .hypothesis build loaders/_*.so loaders/_*.pyd
