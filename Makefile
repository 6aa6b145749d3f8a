# The two commands: `make all` (rebuild every table and figure) and `make test`.
# PROFILE=smoke|cpu|paper (default cpu) is passed to every notebook as papermill's `profile`.
PROFILE ?= cpu
VENV ?= .venv
PYTHON ?= python3
# On a CPU box torch comes in as this CPU build; a torch already in the venv is kept, and a
# CUDA torch in $(PYTHON)'s environment is inherited (the venv then sees system packages).
TORCH_SPEC ?= torch==2.13.0
PY := $(VENV)/bin/python

NOTEBOOKS := $(basename $(notdir $(wildcard notebooks/[0-9][0-9]_*.py)))
LIB := $(shell find paper_lib -name '*.py')
EXECUTED := $(NOTEBOOKS:%=build/executed/$(PROFILE)/%.ipynb)

.PHONY: all test bench venv check-profile report lint clean help $(NOTEBOOKS)
.DELETE_ON_ERROR:

all: $(EXECUTED) report  ## rebuild every notebook's tables and figures at PROFILE (default cpu)

help:  ## this list
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/:/'
	@echo "one notebook: make NAME [PROFILE=smoke|cpu|paper], NAME in: $(NOTEBOOKS)"

$(VENV)/.installed: pyproject.toml
	@if [ ! -x $(PY) ]; then \
	  if $(PYTHON) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then \
	    echo "CUDA torch found in $(PYTHON): the venv inherits it"; $(PYTHON) -m venv --system-site-packages $(VENV); \
	  else $(PYTHON) -m venv $(VENV); fi; fi
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[dev]"
	@touch $@

venv: $(VENV)/.installed  ## create .venv and install paper_lib with its dependencies

check-profile: | venv
	@$(PY) -m paper_lib.pipeline.profiles $(PROFILE)

# One target per notebook; it reruns only when its source or a paper_lib module it imports
# (directly or through other modules: paper_lib.pipeline.deps reads them with ast) changed.
build/deps/%.mk: notebooks/%.py $(LIB)
	@mkdir -p $(@D)
	@echo 'build/executed/$$(PROFILE)/$*.ipynb: '"$$($(PYTHON) -m paper_lib.pipeline.deps $<)" > $@
ifeq ($(filter clean help,$(MAKECMDGOALS)),)
-include $(NOTEBOOKS:%=build/deps/%.mk)
endif

build/executed/$(PROFILE)/%.ipynb: notebooks/%.py | venv check-profile
	$(PY) -m paper_lib.pipeline.runner $< --profile $(PROFILE)

$(NOTEBOOKS): %: build/executed/$(PROFILE)/%.ipynb  ## e.g. `make 01_grammar_probe`

report: $(EXECUTED) | venv  ## figures/REPORT.md from every notebook's metrics.json
	$(PY) -m paper_lib.pipeline.report --profile $(PROFILE)

test: | venv  ## unit tests plus every notebook at the smoke profile
	$(PY) -m pytest -q tests

bench: | venv  ## figures/bench/ema.csv: the EMA fast path against the reference recurrence
	$(PY) benchmarks/bench_ema.py

lint: | venv  ## ruff over paper_lib, notebooks, tests, benchmarks
	$(PY) -m ruff check paper_lib notebooks tests benchmarks

clean:  ## remove build outputs (keeps .venv, data/ caches and the committed figures)
	rm -rf build
