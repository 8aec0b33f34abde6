# The two commands of the README's quick start. Each does its own set-up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean bwrap

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/failgate demo

lint: $(STAMP)
	$(BIN)/ruff check failgate_hooks tests bench
	$(BIN)/ruff format --check failgate_hooks tests bench
	$(BIN)/zizmor --offline --quiet action.yml docs/ci/github-actions.yml

typecheck: $(STAMP)
	$(BIN)/mypy

# The sandbox tests run a real bubblewrap: installed here where it can be (.ci/bwrap).
bwrap:
	sh .ci/bwrap

# pytest exits 5 when it collected nothing: that is a failure here, never a pass.
unit: $(STAMP) bwrap
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2

test: lint typecheck unit

# The evidence cases attest in a sandbox, as CI would: a real bubblewrap here too.
bench: $(STAMP) bwrap
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) build *.egg-info
