# CuTe from Scratch: build the book and run the tests.
#
#   make book   execute every chapter and build the HTML book into _build/html
#   make test   unit tests, then the book build, then checks of the built pages in headless Chromium
#   make clean  remove _build (the next build re-executes every chapter)
#
# Needs only Python >= 3.10 and make: the first run creates .venv and installs requirements.txt and this
# package (editable) into it. Reruns skip the install until requirements.txt or pyproject.toml change.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# The install stamp is keyed on the content of the dependency files, not on their timestamps.
DEPS_KEY := $(shell cat requirements.txt pyproject.toml 2>/dev/null | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(DEPS_KEY)

# No GPU (nvidia-smi missing or failing): run the kernels in Numba's CUDA simulator. Each chapter's first
# cell calls kernels.setup(), which decides the same way; this makes sure of it before numba is imported.
ifeq ($(shell nvidia-smi >/dev/null 2>&1 && echo gpu),)
export NUMBA_ENABLE_CUDASIM ?= 1
# The simulator runs one Python thread per CUDA thread (128-1024 a block); NumPy's BLAS worker threads,
# which spin after each call, then starve them on a small machine (a 2-core run of the GEMM tests went
# from 2.5 minutes to over 10). One BLAS thread is plenty for the simulator-sized checks.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
endif

# Find the notebook kernel ("python3") in the virtual environment first, whatever the user has installed.
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter$(if $(JUPYTER_PATH),:$(JUPYTER_PATH))
export PYDEVD_DISABLE_FILE_VALIDATION := 1

# The live pages run cutelite in the reader's browser on Pyodide's core runtime, which is taken from the
# npm registry's package `pyodide` (npm pack, no install) into _build/.pyodide and copied by the book's
# extension (book/_ext/book_live.py) into _build/html/_static/live/. Only this step needs npm.
PYODIDE_VERSION := 0.28.3
PYODIDE := _build/.pyodide/$(PYODIDE_VERSION)
export PYODIDE_DIR := $(abspath $(PYODIDE))/package

# Executed chapters are cached in _build/.jupyter_cache, keyed on their code cells only. The library they
# import is not part of that key, so the cache is dropped whenever a file of cutelite/ or kernels/ changes.
PKG_SOURCES := $(shell find cutelite kernels -name '*.py' 2>/dev/null)
PKG_STAMP := _build/.package-sources

.PHONY: book test unit-test html-test install pyodide clean distclean help
.DEFAULT_GOAL := help

help:
	@sed -n '3,5p' Makefile | sed 's/^# *//'

install: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; v = sys.version_info; sys.exit(0 if v >= (3, 10) else "Python >= 3.10 is needed (found %d.%d); run make PYTHON=python3.X" % v[:2])'
	$(PYTHON) -m venv $(VENV)

$(STAMP): | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q -e .
	@# Test-only oracle: NVIDIA's pycute (inside nvidia-cutlass); its heavy dependencies are not needed.
	-$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps nvidia-cutlass==4.2.0.0
	@# Build Matplotlib's font cache now, not inside the first chapter's output.
	@$(BIN)/python -c "import matplotlib.pyplot" >/dev/null 2>&1 || true
	@rm -f $(VENV)/.installed-*
	@touch $@

pyodide: $(PYODIDE)/package/pyodide.asm.wasm

$(PYODIDE)/package/pyodide.asm.wasm:
	@command -v npm >/dev/null || { echo "npm is needed once to fetch Pyodide for the live pages (Node.js)"; exit 1; }
	@mkdir -p $(PYODIDE)
	cd $(PYODIDE) && npm pack --silent pyodide@$(PYODIDE_VERSION) >/dev/null && tar xzf pyodide-$(PYODIDE_VERSION).tgz
	@rm -f $(PYODIDE)/pyodide-$(PYODIDE_VERSION).tgz
	@touch $@

$(PKG_STAMP): $(PKG_SOURCES)
	@rm -rf _build/.jupyter_cache
	@mkdir -p _build && touch $@

book: $(STAMP) $(PKG_STAMP) pyodide
	@echo "== building the book (NUMBA_ENABLE_CUDASIM=$${NUMBA_ENABLE_CUDASIM:-0})"
	@start=$$(date +%s); \
	$(BIN)/jupyter-book build . --all -W --keep-going; rc=$$?; \
	echo "== book build: exit $$rc after $$(( $$(date +%s) - start )) s"; exit $$rc

# pytest exits 5 when it collects no test: that is not a failure of the unit-test stage.
unit-test: $(STAMP)
	@echo "== unit tests"
	@$(BIN)/python -m pytest --ignore=tests/test_book_html.py; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "== no unit tests collected"; exit 0; fi; exit $$rc

html-test: $(STAMP)
	@echo "== checks of the built pages (_build/html)"
	$(BIN)/python -m pytest tests/test_book_html.py

# One command, in order, stopping at the first failure. The book build is where the chapters run.
test: $(STAMP)
	@$(MAKE) --no-print-directory unit-test
	@$(MAKE) --no-print-directory book
	@$(MAKE) --no-print-directory html-test

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV)
