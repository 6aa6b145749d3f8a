# The two commands: `make all` (rebuild every table and figure) and `make test`.
# PROFILE=smoke|cpu|paper|gpu (default cpu) is passed to every notebook as papermill's `profile`.
PROFILE ?= cpu
VENV ?= .venv
PYTHON ?= python3
# On a CPU box torch comes in as this CPU build; a torch already in the venv is kept, and a
# CUDA torch in $(PYTHON)'s environment is inherited (the venv then sees system packages).
TORCH_SPEC ?= torch==2.13.0
PY := $(VENV)/bin/python
# The exact version of every dependency (and of theirs; torch apart, as above), for the Python that `make lock`
# resolved them with: every install goes through it. `make lock` remakes it from a fresh resolve.
CONSTRAINTS ?= constraints.txt

# The profile is checked first, before anything is installed or run, with the plain python3:
# paper_lib/pipeline/profiles.py needs only the standard library and is the one list of names.
PROFILE_ERROR := $(shell $(PYTHON) paper_lib/pipeline/profiles.py '$(PROFILE)' 2>&1)
ifneq ($(strip $(PROFILE_ERROR)),)
$(error $(PROFILE_ERROR))
endif

NOTEBOOKS := $(basename $(notdir $(wildcard notebooks/[0-9][0-9]_*.py)))
EXECUTED := $(NOTEBOOKS:%=build/executed/$(PROFILE)/%.ipynb)

.PHONY: all site test-browser test test-fast test-slow test-dispatch bench bench-contention gpu-check device-prepare device-study device-publish venv lock lab check-profile report lint clean help $(NOTEBOOKS)
.DELETE_ON_ERROR:

all: $(EXECUTED) report site  ## rebuild every notebook's tables and figures, the report and the site, at PROFILE (default cpu)

help:  ## this list
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/:/'
	@echo "one notebook: make NAME [PROFILE=smoke|cpu|paper|gpu], NAME in: $(NOTEBOOKS)"

# A venv that an older Python than 3.10 made (or whose Python no longer runs) is made again with $(PYTHON);
# $(PYTHON) itself was checked with the profile, above.
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	@if [ -e $(PY) -o -L $(PY) ] && ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then \
	  if [ ! -f $(VENV)/pyvenv.cfg ]; then echo "$(VENV) has a Python older than 3.10 (or one that does not run) and \
	is no venv to replace: point VENV= at one with Python 3.10+"; exit 2; fi; \
	  echo "$(VENV) was made by $$($(PY) -V 2>&1 || echo a Python that no longer runs), older than 3.10: made again \
	with $$($(PYTHON) -V 2>&1)"; rm -rf $(VENV); fi
	@if [ ! -x $(PY) ]; then \
	  if $(PYTHON) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then \
	    echo "CUDA torch found in $(PYTHON): the venv inherits it"; $(PYTHON) -m venv --system-site-packages $(VENV); \
	  else $(PYTHON) -m venv $(VENV); fi; fi
	@v=$$($(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	  grep -q "python_version == \"$$v\"" $(CONSTRAINTS) || echo "note: $(CONSTRAINTS) pins no version for \
	Python $$v: they are resolved within pyproject.toml's ranges (make lock pins them)"
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[dev]"
	@touch $@

venv: $(VENV)/.installed  ## create .venv and install paper_lib and its dependencies at constraints.txt's versions

# Every dependency pip resolves for pyproject.toml now (every extra), pinned exactly, in a scratch venv of
# $(PYTHON) with $(TORCH_SPEC); torch and what only torch needs (sympy, mpmath, networkx, triton, nvidia-*)
# stay unpinned, so that a CUDA torch already installed is kept.
LOCK_VENV := build/lock-venv
lock:  ## remake constraints.txt: the newest versions pyproject.toml allows, resolved afresh and pinned
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"
	$(LOCK_VENV)/bin/python -m pip install -q -e ".[dev,notebook,site,browser]"
	@v=$$($(LOCK_VENV)/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	{ echo "# Made by \`make lock\` ($$($(LOCK_VENV)/bin/python -V), $$(uname -sm)): pyproject.toml's dependencies and"; \
	  echo "# extras, exact; torch is the Makefile's TORCH_SPEC, or the CUDA torch installed. Do not edit: make lock."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable \
	  | grep -viE '^((torch|triton|sympy|mpmath|networkx)==|nvidia-)' | sed "s/\$$/ ; python_version == \"$$v\"/"; \
	} > $(CONSTRAINTS).new
	mv -f $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf $(LOCK_VENV)

check-profile:  ## check PROFILE (every target does, before it installs anything)
	@:

# One target per notebook; it reruns only when the content of its source or of a paper_lib module
# it imports (directly or through other modules: paper_lib.pipeline.deps reads them with ast)
# changed. Staleness is by content, never by date: each run records the sha256 of every file it
# reads as it starts (build/executed/<profile>/<notebook>.inputs), and before deciding anything
# make asks deps --stale which notebooks' files differ from their record; only those (and those
# never run) are remade. So a file copied in with an old date (cp -p, rsync -a, tar, unzip) or
# edited after a clock change reruns, a source saved while make ran it reruns next time, and one
# rewritten with the same bytes (Jupyter saving a notebook that was only opened) reruns nothing.
ifneq ($(filter-out clean help venv lock lint lab check-profile test test-fast test-slow test-browser bench bench-contention gpu-check device-prepare device-study device-publish,$(or $(MAKECMDGOALS),all)),)
STALE := $(shell $(PYTHON) -m paper_lib.pipeline.deps --stale build/executed/$(PROFILE) $(NOTEBOOKS:%=notebooks/%.py))
endif
.PHONY: FORCE
FORCE:
$(STALE:%=build/executed/$(PROFILE)/%.ipynb): FORCE

# --publish: outputs go to figures/<notebook>/ (never at smoke) with the executed notebook as
# HTML, only from committed sources; any other run of a notebook writes under build/<profile>/.
# benchmarks/timed.py appends notebook, profile, wall_s, cpu_s, threads, load_avg to build/timing.csv.
# --record: the record is kept only once the run succeeded (a failed or interrupted run leaves the old
# one), and the run holds <notebook>.lock meanwhile: a second make in this clone names it and waits.
build/executed/$(PROFILE)/%.ipynb: | venv
	$(PY) benchmarks/timed.py notebooks/$*.py --profile $(PROFILE) --publish --record $(@:.ipynb=.inputs)

$(NOTEBOOKS): %: build/executed/$(PROFILE)/%.ipynb  ## e.g. `make 01_grammar_probe`

report: $(EXECUTED) | venv  ## figures/REPORT.md from every notebook's metrics.json
	$(PY) -m paper_lib.claims report --profile $(PROFILE)

# The static site (Jupyter Book 1.x, the `site` extra): docs/ at cpu and paper (served as pages),
# build/smoke/docs/ at smoke; built beside the old one and swapped in by one rename.
$(VENV)/.site-extra: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[dev,site]"
	@touch $@

site: $(EXECUTED) report $(VENV)/.site-extra  ## docs/index.html: the findings, the results table and one page per notebook
	$(PY) -m paper_lib.claims site --profile $(PROFILE)

# The browser test: Debian's chromium (installed when missing and root; else the test skips in
# one line) driven by Playwright (the `browser` extra; it downloads no browser of its own).
test-browser: $(VENV)/.site-extra  ## the site, built from a fixture, in headless Chromium
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }; \
	  else echo "test-browser: no /usr/bin/chromium and not root to install it (apt-get install chromium)"; fi; fi
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[dev,site,browser]"
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -p no:cacheprovider tests/test_site_browser.py

# JupyterLab with the notebook extra, on lab/: git-ignored copies of notebooks/*.py, made when
# missing and never overwritten (paper_lib/pipeline/lab.py), so a tweak and Jupyter's autosave
# never touch a tracked notebook. They open as notebooks (jupytext, paired with an .ipynb that
# git ignores, with the python3 kernel of their header); nbstripout keeps outputs out of any
# .ipynb that git sees.
# LAB_ARGS: more JupyterLab options, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`. As root
# (a container) JupyterLab refuses to start without --allow-root, which is then added.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
LAB_ARGS ?=
LAB_ROOT := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)

$(VENV)/.notebook-extra: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[dev,notebook]"
	@touch $@

lab: $(VENV)/.notebook-extra  ## JupyterLab on lab/, git-ignored copies of notebooks/ to tweak (installs the notebook extra)
	@if git rev-parse --git-dir >/dev/null 2>&1; then $(PY) -m nbstripout --install --attributes .gitattributes; fi
	@mkdir -p $(dir $(LAB_SETTINGS)); test -f $(LAB_SETTINGS) || \
	  echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}, "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' > $(LAB_SETTINGS)
	@$(PY) -m paper_lib.pipeline.lab .
	$(PY) -m jupyterlab --FileContentsManager.preferred_dir=lab $(LAB_ROOT) $(LAB_ARGS)

# `make test` runs its three parts two at a time (each single-threaded: a smoke notebook's tensors are tiny),
# in Python's UTF-8 mode (the tests' own files; paper_lib names every encoding, tests/test_fault_encodings.py).
test: | venv  ## unit tests, the kernel tests at two forced CPU dispatch levels, every notebook at the smoke profile
	@$(MAKE) --no-print-directory -j2 test-fast test-slow test-dispatch

test-fast: | venv  ## unit tests only: no notebooks, no multi-process runs
	OMP_NUM_THREADS=1 PYTHONUTF8=1 $(PY) -m pytest -q -p no:cacheprovider tests -m "not notebook and not multiprocess"

# The kernel tests (marker `kernel`) again with torch's CPU dispatch forced down, so that a result that
# holds on one CPU's kernels only (AVX-512 here, AVX2 or none on the next machine) fails here.
DISPATCH_LEVELS ?= default avx2
test-dispatch: | venv  ## the kernel tests with ATEN_CPU_CAPABILITY=default, then =avx2
	@for level in $(DISPATCH_LEVELS); do \
	  echo "kernel tests at ATEN_CPU_CAPABILITY=$$level"; \
	  ATEN_CPU_CAPABILITY=$$level OMP_NUM_THREADS=1 PYTHONUTF8=1 $(PY) -m pytest -q -p no:cacheprovider tests -m kernel || exit 1; \
	done

test-slow: | venv  ## the notebooks at smoke and the 2-process DDP test
	OMP_NUM_THREADS=1 PYTHONUTF8=1 $(PY) -m pytest -q -p no:cacheprovider tests -m "notebook or multiprocess" --durations=5

bench: | venv  ## figures/bench/ema.csv (EMA kernel vs memory floor), throughput.csv (SPEN vs Transformer, MFU), levers.csv (each CPU speed-up against the path it replaces)
	PAPER_LIB_PUBLISH=1 $(PY) benchmarks/bench_ema.py
	PAPER_LIB_PUBLISH=1 $(PY) benchmarks/bench_throughput.py
	PAPER_LIB_PUBLISH=1 $(PY) benchmarks/bench_levers.py

bench-contention: | venv  ## figures/bench/contention.csv: notebook 01 at smoke, idle and beside a 2-thread load
	PAPER_LIB_PUBLISH=1 $(PY) benchmarks/bench_contention.py

# Without .git (a lent device's copy of the tree: no network, no git) gpu-check runs with $(PYTHON)
# as it is, installs nothing and writes under build/ (a figure is published only from a clean commit).
ifeq ($(wildcard .git),)
gpu-check:
	$(PYTHON) benchmarks/gpu_check.py
else
gpu-check: | venv  ## figures/bench/gpu_check.csv: EMA, SPEN, Transformer (and NCCL) on CUDA; skips on a CPU
	PAPER_LIB_PUBLISH=1 $(PY) benchmarks/gpu_check.py
endif

# Experiment 2 on a lent GPU, in three steps (guide/gpu.md): prepare here, run there, publish here.
DEVICE_BUDGET_S ?= 840
DEVICE_OUT ?= build/gpu
device-prepare: | venv  ## CPU side: build/gpu/tokens.npz and SOURCES.json (the sources' commit) for the device study
	$(PY) benchmarks/device_study.py prepare --profile gpu --out $(DEVICE_OUT)

device-study:  ## GPU side, offline, with $(PYTHON) as it is: gpu_check, then 03 and 04 at gpu in DEVICE_BUDGET_S (840) s [PACK=file.tar.gz]
	$(PYTHON) benchmarks/device_study.py run --out $(DEVICE_OUT) --budget-s $(DEVICE_BUDGET_S) $(if $(PACK),--pack $(PACK))

device-publish: | venv  ## CPU side: RUN=build/gpu or the packed .tar.gz into figures/gpu/ and figures/gpu/REPORT.md
	@test -n "$(RUN)" || { echo "device-publish: say which run, e.g. make device-publish RUN=build/gpu (or the .tar.gz from PACK)"; exit 2; }
	$(PY) benchmarks/device_study.py publish $(RUN)

lint: | venv  ## ruff over paper_lib, notebooks, tests, benchmarks
	$(PY) -m ruff check paper_lib notebooks tests benchmarks

clean:  ## remove build outputs (keeps .venv, data/ caches and the committed figures)
	rm -rf build
