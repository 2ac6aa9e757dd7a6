# billops: `make demo` runs the main job on embedded defaults; `make test` runs the suite from nothing.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: help install demo test soak fuzz bench lint format typecheck sandbox constraints browser-deps clean contract-tools lint-contract

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install billops with the exact tested packages

browser-deps: ## install Debian's chromium for the browser tests, where this machine allows it
	@bash scripts/install-chromium.sh

demo: $(STAMP) ## the main job on embedded defaults: sandbox, OAuth login, import, nightly, reports
	$(VENV)/bin/billops demo

test: $(STAMP) browser-deps contract-tools ## the whole suite but the slow tests (what CI runs)
	$(PY) -m pytest

soak: $(STAMP) ## the slow tests only (the chaos soak prints its counts: -rP shows them)
	$(PY) -m pytest -m slow -rP

fuzz: $(STAMP) ## schemathesis against the sandbox: every phase, stateful links included (0 failures)
	$(PY) scripts/fuzz.py --examples $${BILLOPS_FUZZ_EXAMPLES:-100}

CODEGEN_STAMP := .venv-codegen/.installed-stamp
SPECTRAL := tools/spectral/node_modules/.bin/spectral

$(CODEGEN_STAMP): constraints-codegen.txt
	$(PYTHON) -m venv .venv-codegen
	.venv-codegen/bin/pip install --quiet -r constraints-codegen.txt
	touch $(CODEGEN_STAMP)

$(SPECTRAL): tools/spectral/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix tools/spectral --no-audit --no-fund --silent \
		&& touch $(SPECTRAL); else echo "npm not found: the contract lint test will skip"; fi

contract-tools: $(CODEGEN_STAMP) $(SPECTRAL) ## openapi-python-client (.venv-codegen) and Spectral (tools/spectral) for the contract tests

lint-contract: contract-tools ## Spectral (spectral:oas) on the contract; the intentional warning is listed in its description
	$(SPECTRAL) lint -r tools/spectral/ruleset.yaml billing_api/openapi.yaml

bench: $(STAMP) ## the benchmarks (ratios against a floor measured in the same run)
	@ls bench/bench_*.py >/dev/null 2>&1 && for b in bench/bench_*.py; do $(PY) $$b; done \
		|| echo "no benchmarks yet"

lint: $(STAMP) ## ruff lint and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP) ## apply ruff's formatting and safe fixes
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

typecheck: $(STAMP) ## mypy (strict) on every package
	$(VENV)/bin/mypy

sandbox: $(STAMP) ## serve the sandbox on 127.0.0.1:8765
	$(VENV)/bin/billops sandbox serve

constraints: ## re-resolve the exact package set from pyproject.toml's ranges
	rm -rf .venv-resolve && $(PYTHON) -m venv .venv-resolve
	.venv-resolve/bin/pip install --quiet --upgrade pip
	.venv-resolve/bin/pip install --quiet '.[test]'
	{ sed -n '/^#/p' constraints.txt; .venv-resolve/bin/pip freeze --exclude billops; } > constraints.new
	mv constraints.new constraints.txt && rm -rf .venv-resolve

clean: ## remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
