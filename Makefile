# The two quick-start targets: `make run` (the main job on the embedded SQLite log) and
# `make test` (lint, types and the whole test suite). Both set up .venv on first use:
# `make run` installs only what running needs; `make test` adds the dev extras (pytest,
# ruff, mypy, ArcadeDB with its own Java runtime for the graph tests, and both embedders).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEV    := $(VENV)/.dev-extras
DEMO   := var/demo.db
PEERS  := tests/peers/node_modules/.bin/mcp-inspector
DESK_JS := gate/desk/static/vendor/cytoscape.min.js
WG     := $(BIN)/writegate --db $(DEMO) --as demo-operator
# torch's CPU build, before the dev extras, so writegate[minilm]'s torch>=2.2 takes nothing
# more (this machine holds its file; elsewhere add --index-url https://download.pytorch.org/whl/cpu)
TORCH  ?= torch==2.13.0
TEST_WORKERS ?= 3  # pytest-xdist workers: the suite waits on servers and processes as much as it computes

.PHONY: run test lint bench docs clean postgres chromium desk-vendor

$(BIN)/writegate: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEV): $(BIN)/writegate
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# $(call refused,ARGS,WHY): a write the gate must refuse, shown with its refusal and why it
# is intended; make stops if the gate accepts it
refused = @echo '$(WG) $(subst ','"'"',$(1))'; if $(WG) $(1); then \
	echo 'the gate accepted it: make run expected a refusal' >&2; exit 1; \
	else echo 'refused, as intended: $(2)'; fi

run: $(BIN)/writegate
	@mkdir -p var && rm -f $(DEMO) $(DEMO)-wal $(DEMO)-shm var/demo-*
	$(WG) init --schema fixtures/schema.yaml
	$(WG) write batch fixtures/demo_writes.jsonl
	$(WG) write node 'user_profile:name=Grace Hopper' -p role=director --source hr.csv --method parsed --reliability 0.95
	$(WG) write relationship WORKS_AT 'Person:name=Grace Hopper' Company:name=Initech --merge-endpoints --source https://example.org/about --method llm --reliability 0.7
	$(call refused,write node Person:name=Mallory -p confidence=1.0 --source me --method llm,a writer may not set the confidence the gate computes)
	$(call refused,write node 'Person:name=grace hopper' --source meeting-notes.md --method llm,probably Grace Hopper again)
	$(call refused,write relationship DIRECTED Person:name=Ada Person:name=Alan --source me --method llm,DIRECTED is no type of the schema)
	$(WG) log
	$(WG) verify
	$(WG) --config fixtures/demo.toml replay snapshot
	$(WG) --config fixtures/demo.toml replay provenance
	$(WG) --config fixtures/demo.toml status

# MCP programs nobody here wrote (the Inspector CLI, the official memory server), pinned
$(PEERS): tests/peers/package.json tests/peers/package-lock.json
	npm ci --prefix tests/peers --no-audit --no-fund --loglevel=error
	touch $@

# the desk's graph drawing (cytoscape, MIT), pinned in gate/desk/vendor/package.json and
# committed into the package with its licence, so every install has it (a wheel, pipx, make
# run) and the desk serves it itself, nothing from a CDN; after changing the pin, refresh it:
desk-vendor:
	npm ci --prefix gate/desk/vendor --no-audit --no-fund --loglevel=error
	mkdir -p $(dir $(DESK_JS))
	cp gate/desk/vendor/node_modules/cytoscape/dist/cytoscape.min.js $(DESK_JS)
	cp gate/desk/vendor/node_modules/cytoscape/LICENSE $(dir $(DESK_JS))cytoscape.LICENSE

# the desk's browser tests drive Debian's Chromium (no browser is downloaded)
chromium:
	@command -v chromium >/dev/null 2>&1 || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# the tests start their own PostgreSQL from Debian's packages (tests/postgres.py)
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql)

test: $(DEV) $(PEERS) postgres chromium lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# the generated parts of docs/ (tests/test_docs.py fails when they are stale)
docs: $(DEV)
	$(BIN)/cog -I docs -r docs/cli.md docs/mcp-tools.md docs/errors.md docs/python-api.md

# mypy reads the package through links in build/typing (it follows no import hooks)
lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/python -m tests.typing_tree >/dev/null
	$(BIN)/mypy

# bench_recall.py reads LoCoMo's file from var/bench-data/, brought once (bench/recall_data.py)
bench: $(DEV) $(PEERS) postgres
	$(BIN)/python bench/bench_gate.py
	$(BIN)/python bench/bench_mcp.py
	$(BIN)/python bench/bench_projections.py
	$(BIN)/python bench/bench_import.py
	$(BIN)/python bench/bench_startup.py
	$(BIN)/python bench/bench_backends.py
	$(BIN)/python bench/bench_follow_pg.py
	$(BIN)/python bench/bench_scale.py
	$(BIN)/python bench/bench_concurrency.py
	$(BIN)/python bench/bench_mcp_floor.py
	$(BIN)/python bench/bench_search.py
	$(BIN)/python bench/bench_search_floor.py
	$(BIN)/python bench/bench_search_scale.py
	$(BIN)/python bench/bench_query.py
	$(BIN)/python bench/bench_query_mcp.py
	$(BIN)/python bench/bench_resolution_evidence.py
	$(BIN)/python bench/bench_recall.py
	$(BIN)/python bench/bench_embeddings.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis tests/peers/node_modules
	rm -rf gate/desk/vendor/node_modules gate/desk/static/vendor
