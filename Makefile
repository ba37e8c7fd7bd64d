# The two commands: `make lab` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
LAB_OPTS ?=

LESSONS   = $(sort $(wildcard notebooks/*.ipynb))
SOLUTIONS = $(sort $(wildcard solutions/*.ipynb))
EXERCISES = $(sort $(wildcard exercises/*.ipynb))
NBVAL = --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg --nbval-cell-timeout=60 -p no:cacheprovider

.PHONY: lab test lint test-code test-notebooks outputs exercises bench clean

# Reinstall only when the dependency list changes, so a second `make lab` starts in seconds.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(LAB_OPTS)

test: lint test-code test-notebooks

# The linter (its rules are in pyproject.toml) before any test runs.
lint: $(STAMP)
	$(VENV)/bin/ruff check .

test-code: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile tests

test-notebooks: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile --nbval $(NBVAL) $(LESSONS) $(SOLUTIONS)
	$(if $(EXERCISES),$(PY) -m pytest -n 2 --dist loadfile --nbval-lax $(NBVAL) $(EXERCISES))

# Re-executes the lessons and solutions and stores their outputs (the nbval expectations).
outputs: $(STAMP)
	$(PY) scripts/refresh_outputs.py $(LESSONS) $(SOLUTIONS)

# Regenerates the learner versions in exercises/ from solutions/.
exercises: $(STAMP)
	$(PY) scripts/make_exercises.py

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache
