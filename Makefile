# webtorch: the single entry point.
#   make install   .venv with webtorch (editable) + extras, npm packages, web bundle, wheel in dist/,
#                  the playground's Python snapshot for a first visit (web/tools/make_snapshot.py)
#   make run       install, then serve the playground on http://$(HOST):$(PORT)/
#   make test      install, then run every test tier (cpu, native webgpu, browser)
#   make bench     install, then run the benchmarks
#   make bench-browser  install, then webtorch in Pyodide vs tfjs-webgpu and webgpu-torch in headless Chromium
# Each step is stamped and skipped when its inputs have not changed.

SHELL   := /bin/bash
PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
HOST    ?= 127.0.0.1
PORT    ?= 8000
PYTEST_ARGS ?= -q -n 2
BENCH_ARGS  ?=

PIP_STAMP   := $(VENV)/.webtorch-pip.stamp
NPM_STAMP   := node_modules/.webtorch-npm.stamp
WEB_STAMP   := web/dist/.webtorch-build.stamp
WHEEL_STAMP := dist/.webtorch-wheel.stamp
VENDOR_STAMP := web/vendor/.webtorch-vendor.stamp
SNAPSHOT_STAMP := web/dist/.webtorch-snapshot.stamp

# Inputs (ignores caches and build outputs).
WHEEL_SRC := pyproject.toml setup.py README.md \
  $(shell find py server shaders -type f -not -path '*/__pycache__/*' -not -name '*.pyc' 2>/dev/null)
WEB_SRC   := $(wildcard package.json package-lock.json) \
  $(shell find web -type f -not -path 'web/dist/*' -not -path 'web/vendor/*' -not -path '*/__pycache__/*' 2>/dev/null) \
  $(wildcard py/webtorch/backends/webgpu/drivers/*.js)

.PHONY: install run test bench bench-browser wheel clean

install: $(PIP_STAMP) $(NPM_STAMP) $(WEB_STAMP) $(WHEEL_STAMP) $(VENDOR_STAMP) $(SNAPSHOT_STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(PIP_STAMP): pyproject.toml setup.py | $(PY)
	$(PY) -m pip install --disable-pip-version-check -e '.[all]'
	touch $@

# npm ci when a lockfile exists (it never rewrites the lockfile), else a plain install that
# writes none.  No package.json yet: nothing to do.
$(NPM_STAMP): $(wildcard package.json package-lock.json)
	@if [ -f package-lock.json ]; then \
	  echo "npm ci"; npm ci --no-audit --no-fund; \
	elif [ -f package.json ]; then \
	  echo "npm install (no lockfile)"; npm install --no-package-lock --no-audit --no-fund; \
	else echo "no package.json: skipping npm"; fi
	@mkdir -p $(dir $@) && touch $@

$(WEB_STAMP): $(NPM_STAMP) $(WEB_SRC)
	@if [ -f package.json ]; then npm run build --if-present; else echo "no package.json: skipping web build"; fi
	@mkdir -p $(dir $@) && touch $@

# The wheel Pyodide loads (served at /wheels/<name>.whl).  Stale setuptools build dirs are
# removed first so a deleted module never lingers in the wheel.
$(WHEEL_STAMP): $(PIP_STAMP) $(WHEEL_SRC)
	rm -rf build/lib build/bdist.* dist/webtorch-*.whl
	$(PY) -m pip wheel --disable-pip-version-check --no-deps -q -w dist .
	touch $@

wheel: $(WHEEL_STAMP)

# Pure-Python wheels the playground vendors (tqdm, einops): pinned, hash-checked, from PyPI.
$(VENDOR_STAMP): web/vendor-requirements.txt | $(PY)
	rm -rf web/vendor
	$(PY) -m pip download --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
	  -d web/vendor -r web/vendor-requirements.txt
	touch $@

# Python with webtorch imported, snapshotted in headless Chromium, and the kernels the examples
# build there (~1-2 min here): a visit restores it instead of starting Python.  Without Chromium
# it is skipped (the page starts Python).
$(SNAPSHOT_STAMP): $(WEB_STAMP) $(WHEEL_STAMP) $(VENDOR_STAMP)
	$(PY) web/tools/make_snapshot.py
	touch $@

run: install
	$(VENV)/bin/webtorch-playground --host $(HOST) --port $(PORT)

test: install
	$(PY) -m pytest tests $(PYTEST_ARGS)

bench: install
	@if [ -f bench/run.py ]; then $(PY) bench/run.py $(BENCH_ARGS); \
	else echo "bench/run.py not written yet"; fi

bench-browser: install
	$(PY) bench/browser/run.py $(BENCH_ARGS)

clean:
	rm -rf build dist *.egg-info web/dist web/vendor $(PIP_STAMP) $(NPM_STAMP)
