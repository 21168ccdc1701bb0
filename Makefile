# Quickstart targets: `make demo` and `make test` do all set-up on a fresh machine
# (Python 3.10+, git and make are the only prerequisites).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test lint install clean bench fuzz
FUZZ_SECONDS ?= 60

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "tcg needs Python 3.10+ (make PYTHON=python3.x)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.test-installed: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	@$(BIN)/python -m pip install -q -e '.[fuzz]' || echo "atheris did not install: the fuzz smoke run will skip (its seeds still run)"
	@touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.test-installed
	$(BIN)/ruff check tcg tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Coverage-guided fuzzing, FUZZ_SECONDS per target (docs/reliability.md). A crash
# leaves its input as fuzz/crash-*; pin it in the target's SEEDS.
fuzz: $(VENV)/.test-installed
	@for t in fuzz/fuzz_*.py; do \
	  name=$$(basename $$t .py); mkdir -p fuzz/corpus/$$name; \
	  $(BIN)/python -c "import importlib.util as u, pathlib, sys; s=u.spec_from_file_location('t', sys.argv[1]); m=u.module_from_spec(s); s.loader.exec_module(m); [pathlib.Path(sys.argv[2], f'seed{i}').write_bytes(b) for i, b in enumerate(m.SEEDS)]" $$t fuzz/corpus/$$name || exit 1; \
	  echo "== $$name ($(FUZZ_SECONDS) s)"; \
	  TCG_FUZZ_INSTRUMENT=1 $(BIN)/python $$t -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=fuzz/crash- fuzz/corpus/$$name || exit 1; \
	done

lint: $(VENV)/.test-installed
	$(BIN)/ruff check tcg tests bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
