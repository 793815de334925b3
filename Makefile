# Fresh machine: Python 3.11+, pip and the package registries are all this needs.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
QUESTION ?= Which accounts have unpaid invoices older than 30 days, and who is their sales rep?

.PHONY: install demo test lint bench eval-bird eval-history-coded eval-history-flat eval-warehouse check-base-install check-distributed clean

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
	$(BIN)/python -m pytest -q -m "not slow and not distributed"

# BIRD retrieval evaluation (needs ../shared/benchmarks): import -> build -> eval, all settings.
# Settings (README "Retrieval quality on BIRD"): bird_union_schema = symmetric, schema only (the
# headline); bird_union = the bar's setting, schema + BIRD descriptions of the 11 dev databases
# (asymmetric: the 69 train databases have none); bird_union_meta = + dev metadata (asymmetric);
# bird_union_nofk / bird_union_inferred = bird_union with every declared FK removed, without and
# with FKs inferred from names. Knobs are chosen by leave-one-database-out (--cross-validate).
BIRD ?= ../shared/benchmarks
BT := $(BIRD)/bird_dev/dev_tables.json,$(BIRD)/bird_train/train_tables.json
DESC := --descriptions $(BIRD)/bird_dev/descriptions
IMPORT := $(BIN)/schemarag import bird
EVAL := nice $(BIN)/schemarag eval --questions $(BIRD)/bird_dev/dev.json --artifacts build/bird/artifacts
R := reports/bird
eval-bird: install
	$(IMPORT) --tables $(BT) --out build/bird/union_schema --union bird_union_schema
	$(IMPORT) --tables $(BT) $(DESC) --out build/bird/union_desc --union bird_union
	$(IMPORT) --tables $(BT) $(DESC) --metadata $(BIRD)/bird_dev/dev_metadata.json --out build/bird/union_meta --union bird_union_meta
	$(IMPORT) --tables $(BT) $(DESC) --strip-foreign-keys --out build/bird/union_nofk --union bird_union_nofk
	$(IMPORT) --tables $(BT) $(DESC) --strip-foreign-keys --infer-joins --out build/bird/union_inferred --union bird_union_inferred
	$(IMPORT) --tables $(BIRD)/bird_dev/dev_tables.json $(DESC) --metadata $(BIRD)/bird_dev/dev_metadata.json --out build/bird/dev
	for d in dev union_desc union_schema union_meta union_nofk union_inferred; do \
	  nice $(BIN)/schemarag build --data build/bird/$$d --artifacts build/bird/artifacts || exit 1; done
	$(EVAL) --data build/bird/dev --per-db --budgets 15 --no-baselines --cross-validate columns --out $(R)/perdb_question.json
	$(EVAL) --data build/bird/dev --per-db --budgets 15 --no-baselines --cross-validate columns --with-evidence --out $(R)/perdb_evidence.json
	$(EVAL) --data build/bird/union_schema --union bird_union_schema --cross-validate routing --no-baselines --out $(R)/union_schema_question.json
	$(EVAL) --data build/bird/union_schema --union bird_union_schema --cross-validate hedging --no-baselines --no-eval \
	  --scored-cache build/bird/scored_union_schema.pkl --out $(R)/union_schema_hedging.json
	$(EVAL) --data build/bird/union_desc --union bird_union --cross-validate routing \
	  --out $(R)/union_question.json --predictions $(R)/union_question.jsonl --report $(R)/union_question
	$(EVAL) --data build/bird/union_desc --union bird_union --no-baselines --cross-validate hedging --no-eval \
	  --scored-cache build/bird/scored_union_desc.pkl --out $(R)/union_hedging.json
	$(EVAL) --data build/bird/union_desc --union bird_union --no-baselines --cross-validate adaptive --no-eval \
	  --scored-cache build/bird/scored_union_desc.pkl --out $(R)/union_adaptive.json
	$(EVAL) --data build/bird/union_desc --union bird_union --no-baselines --no-hedging --out $(R)/union_nohedge.json
	$(EVAL) --data build/bird/union_schema --union bird_union_schema --no-baselines --no-hedging --out $(R)/union_schema_nohedge.json
	$(EVAL) --data build/bird/union_meta --union bird_union_meta --no-baselines --out $(R)/union_meta_question.json
	$(EVAL) --data build/bird/union_nofk --union bird_union_nofk --no-baselines --out $(R)/union_nofk_question.json
	$(EVAL) --data build/bird/union_inferred --union bird_union_inferred --no-baselines --out $(R)/union_inferred_question.json

# The query-history folds (issue 38) on a stand-in for a key-less warehouse with coded names
# (docs/query-history.md "Coded names"): BIRD with every table and column a code, the words in a
# data dictionary, every FK removed, the gold SQL (and so the history) in codes. Per database and
# as one 597-table union, and per database as a warehouse exports them (INFORMATION_SCHEMA with
# comments: the dictionary's table names as short table comments) through `import catalog`; 5 folds, SQL only, knobs
# leave-one-database-out. About 45 minutes.
CODED := build/coded
CODED_EVAL := nice $(BIN)/schemarag eval --questions $(CODED)/src/questions.json \
  --no-baselines --budgets 5,10,20 --query-log-folds 5
CODED_SRC := $(BIN)/python -m schemarag.tools.evaluation.coded_names --tables $(BT) $(DESC) \
  --questions $(BIRD)/bird_dev/dev.json --dev-only $(CODED)/src/dev_tables.json --out $(CODED)/src --flat coded_flat
eval-history-coded: install
	$(CODED_SRC)
	$(IMPORT) --tables $(CODED)/src/dev_tables.json --descriptions $(CODED)/src/descriptions \
	  --strip-foreign-keys --out $(CODED)/dev_nofk
	$(IMPORT) --tables $(CODED)/src/tables.json --descriptions $(CODED)/src/descriptions \
	  --strip-foreign-keys --out $(CODED)/union_nofk --union coded_union
	nice $(BIN)/schemarag build --data $(CODED)/dev_nofk --artifacts $(CODED)/artifacts
	nice $(BIN)/schemarag build --data $(CODED)/union_nofk --artifacts $(CODED)/artifacts
	$(CODED_EVAL) --artifacts $(CODED)/artifacts --data $(CODED)/dev_nofk --per-db --folds-work build/folds/coded_perdb --out reports/coded/perdb.json
	$(CODED_EVAL) --artifacts $(CODED)/artifacts --data $(CODED)/union_nofk --union coded_union --folds-work build/folds/coded_union \
	  --out reports/coded/union.json
	$(BIN)/python -m schemarag.tools.evaluation.catalog_of --data $(CODED)/dev_nofk --out $(CODED)/catalog_export
	for d in $(CODED)/catalog_export/*/; do $(BIN)/schemarag import catalog -q --columns $$d/columns.csv \
	  --tables $$d/tables.csv --database $$(basename $$d) --dialect sqlite --out $(CODED)/catalog || exit 1; done
	nice $(BIN)/schemarag build --data $(CODED)/catalog --artifacts $(CODED)/artifacts_catalog
	$(CODED_EVAL) --artifacts $(CODED)/artifacts_catalog --data $(CODED)/catalog --per-db \
	  --folds-work build/folds/coded_catalog --out reports/coded/catalog_perdb.json

# The same coded set as one flat database of 597 key-less tables (docs/query-history.md "One flat
# database"): nothing routes a question to its source database, as nothing does in a warehouse
# of hundreds of tables in one schema. Per-question rows in reports/coded/flat_predictions.jsonl,
# and CR@B by the number of tables a question joins (printed, and as a chart).
# About 30 minutes.
eval-history-flat: install
	$(CODED_SRC)
	$(IMPORT) --tables $(CODED)/src/flat/tables.json --descriptions $(CODED)/src/flat/descriptions \
	  --strip-foreign-keys --out $(CODED)/flat
	nice $(BIN)/schemarag build --data $(CODED)/flat --artifacts $(CODED)/artifacts_flat
	nice $(BIN)/schemarag eval --questions $(CODED)/src/flat/questions.json --no-baselines --budgets 5,10,20 \
	  --query-log-folds 5 --artifacts $(CODED)/artifacts_flat --data $(CODED)/flat --per-db \
	  --folds-work build/folds/coded_flat --out reports/coded/flat.json \
	  --predictions reports/coded/flat_predictions.jsonl
	$(BIN)/python -m schemarag.tools.evaluation.by_join_size reports/coded/flat_predictions.jsonl \
	  --chart reports/coded/flat_by_join_size.png

# Warehouse retrieval evaluation (issue 25) on Spider 2.0-lite's catalog exports: every database
# imported with `schemarag import catalog` (shards collapsed as exported), built (niced; cached
# under build/warehouse, so a rerun re-imports and rebuilds only what changed), then CR@B and
# table recall@B at 5/10/20 per engine and on nontrivial questions, question only, with the
# knobs chosen by leave-one-database-out. Prints the per-engine import/build table first.
# Subsets for fast iteration: make eval-warehouse WH_ARGS="--engines sqlite" (or --dbs a,b).
WAREHOUSE ?= ../shared/benchmarks/spider2_lite
WH_CV ?= joins
WH_ARGS ?=
eval-warehouse: install
	nice $(BIN)/schemarag eval --warehouse $(WAREHOUSE) --work build/warehouse --cross-validate $(WH_CV) \
	  --out reports/warehouse/eval.json --chart reports/warehouse/recall_vs_budget.png \
	  --predictions reports/warehouse/predictions.jsonl $(WH_ARGS)

bench: install
	$(BIN)/schemarag build
	$(BIN)/schemarag bench build --out reports/bench_build.json
	$(BIN)/schemarag bench retrieve --out reports/bench_retrieve.json --chart reports/bench_retrieve.png
	$(BIN)/schemarag bench prompt --out reports/bench_prompt.json
	$(BIN)/schemarag bench calibration --out reports/bench_calibration.json

# `pip install .` (no extras) into a fresh venv: pip check, size <= 450 MB, import time, an
# offline search on an index built here, one-line missing-extra errors (tools/check_base_install.sh).
check-base-install: install
	FULL_PYTHON=$(BIN)/python PYTHON=$(PYTHON) tools/check_base_install.sh

# The build on Dagster's Celery executor with real workers (docs/scale-out.md): moto S3, two
# `schemarag worker` processes with their own folders and caches, `schemarag build --executor celery`
# of the samples + a three-schema database, compared with a local build; then the fault tests (a
# worker killed mid-step). Needs a broker: Redis on 127.0.0.1:6379 (.ci/run starts Debian's), or
# SCHEMARAG_CELERY_BROKER. A few minutes; one summary line per part.
check-distributed: install
	$(BIN)/python tools/check_distributed.py
	$(BIN)/python -m pytest -q -m distributed tests/pipelines/test_celery_faults.py

# The Dockerfile's lines replayed without Docker (COPY, WORKDIR, ENV, RUN in a fresh venv, then the
# CMD queried over HTTP with a key): tools/check_dockerfile.py.
check-dockerfile: install
	$(BIN)/python tools/check_dockerfile.py --python $(PYTHON) --full-python $(BIN)/python

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) artifacts/*/ .pytest_cache
