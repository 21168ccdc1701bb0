# Quickstart targets: `make demo` and `make test` do all set-up on a fresh machine
# (Python 3.10+, git and make are the only prerequisites).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test lint install clean bench

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "tcg needs Python 3.10+ (make PYTHON=python3.x)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.test-installed: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.test-installed
	$(BIN)/ruff check tcg tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.test-installed
	$(BIN)/ruff check tcg tests bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
