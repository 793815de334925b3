# Fresh machine: Python 3.11+, pip and the package registries are all this needs.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
QUESTION ?= Which accounts have unpaid invoices older than 30 days, and who is their sales rep?

.PHONY: install demo test lint bench eval-bird clean

install: $(VENV)/.installed

# The same pip path a user takes: `pip install -e '.[test]'` (test = all extras + pytest/ruff).
# Quiet (pip still prints warnings and errors), then one line saying what was installed and how long it took.
PIP := $(BIN)/pip install -q --disable-pip-version-check
$(VENV)/.installed: pyproject.toml setup.py
	@echo "installing schemarag with all extras into $(VENV) (about a minute the first time) ..."
	@start=$$(date +%s) && $(PYTHON) -m venv $(VENV) && $(PIP) --upgrade pip && $(PIP) -e '.[test]' \
	  && echo "installed schemarag $$($(BIN)/python -c 'import schemarag; print(schemarag.__version__)')" \
	     "into $(VENV) ($$(( $$(date +%s) - start )) s)"
	@touch $@

# The main job on the bundled samples: build every index, then answer a sample question.
demo: install
	$(BIN)/schemarag build
	$(BIN)/schemarag retrieve --db b2b_saas "$(QUESTION)"
	$(BIN)/schemarag generate --db b2b_saas --prompt-only "$(QUESTION)"
	@echo
	@echo "next: $(BIN)/schemarag retrieve --db ecommerce --debug \"How many orders were placed last month?\""
	@echo "      (or 'source $(BIN)/activate' and drop the $(BIN)/ prefix; 'schemarag --help' lists every command)"

test: install
	$(BIN)/python -m pytest -q -m "not slow"

# BIRD retrieval evaluation (needs ../shared/benchmarks): import -> build -> eval, all settings.
BIRD ?= ../shared/benchmarks
EVAL := $(BIN)/schemarag eval --questions $(BIRD)/bird_dev/dev.json
eval-bird: install
	$(BIN)/schemarag import bird --tables $(BIRD)/bird_dev/dev_tables.json,$(BIRD)/bird_train/train_tables.json \
	  --descriptions $(BIRD)/bird_dev/descriptions --metadata $(BIRD)/bird_dev/dev_metadata.json \
	  --out build/bird/union --union bird_union
	$(BIN)/schemarag import bird --tables $(BIRD)/bird_dev/dev_tables.json \
	  --descriptions $(BIRD)/bird_dev/descriptions --metadata $(BIRD)/bird_dev/dev_metadata.json --out build/bird/dev
	$(BIN)/schemarag build --data build/bird/union --artifacts build/bird/artifacts
	$(BIN)/schemarag build --data build/bird/dev --artifacts build/bird/artifacts
	$(EVAL) --data build/bird/union --artifacts build/bird/artifacts --union bird_union \
	  --json reports/bird/union_question.json --predictions reports/bird/union_question.jsonl --report reports/bird/union_question
	$(EVAL) --data build/bird/dev --artifacts build/bird/artifacts --per-db --with-evidence \
	  --json reports/bird/perdb_evidence.json --predictions reports/bird/perdb_evidence.jsonl --report reports/bird/perdb_evidence
	$(EVAL) --data build/bird/union --artifacts build/bird/artifacts --union bird_union --with-evidence \
	  --json reports/bird/union_evidence.json
	$(EVAL) --data build/bird/dev --artifacts build/bird/artifacts --per-db --json reports/bird/perdb_question.json

bench: install
	$(BIN)/schemarag build
	$(BIN)/schemarag bench build --json reports/bench_build.json
	$(BIN)/schemarag bench retrieve --json reports/bench_retrieve.json --chart reports/bench_retrieve.png
	$(BIN)/schemarag bench prompt --json reports/bench_prompt.json
	$(BIN)/schemarag bench calibration --json reports/bench_calibration.json

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) artifacts/*/ .pytest_cache
