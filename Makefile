# emr-lineage: every workflow is a make target. `make help` lists them.
#   make setup            install everything (idempotent; a second run takes seconds)
#   make test             run the whole test suite
#   make synth ENV=prod   synthesize one environment (no AWS credentials needed)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ENV ?= dev
# The Python of the virtualenvs: requirements.lock is resolved for 3.11 (its header), the only one tested.
PYTHON_VERSION := 3.11
PYTHON ?= python$(PYTHON_VERSION)
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# checkov pins libraries requirements.lock cannot share (boto3, networkx, packaging): its own virtualenv.
CHECKOV_VENV := .venv-checkov
CHECKOV := $(CURDIR)/$(CHECKOV_VENV)/bin/checkov
CDK := $(CURDIR)/node_modules/.bin/cdk
STAMPS := .make
CDK_OUT := cdk.out/$(ENV)
# Extra arguments for pytest, e.g. make test PYTEST_ARGS="-k network"
PYTEST_ARGS ?=
TEST_SELECTION ?=
# Third-party reference data (tests; the offline source of the OpenLineage schemas): never committed here.
REFERENCE ?= $(or $(EMR_LINEAGE_REFERENCE),$(abspath $(CURDIR)/../shared/reference))
# pytest-xdist workers: one per core (the suite is CPU-bound: synth, Spark, bootstrap sandboxes).
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
# Where `make demo` writes events and the report, and its size (default: the command's).
DEMO_OUT ?= demo-out
ROWS ?=
# Extra arguments for emr-lineage e2e, e.g. E2E_ARGS="--marquez http://localhost:5080"
E2E_ARGS ?=

export PATH := $(BIN):$(CURDIR)/node_modules/.bin:$(PATH)
# Node 20 makes jsii print an end-of-life banner on every call.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true
CDK_FLAGS := --no-notices -c env=$(ENV)

# Debian packages installed when missing: headless Chromium (HTML report test), Debian's default JRE (Spark
# 3.5 supports 17, Debian 12's; Debian 13 has 21, which Spark 3.5 supports as a preview: the demo runs on it),
# Maven (the OpenLineage listener jar), GnuPG (its signature), curl (the reference data) and python3-venv
# (Debian ships venv support separately).

# $(call check_python,INTERPRETER,NAME,FIX): one error line naming NAME and the variable FIX, and exit 2, unless
# INTERPRETER runs and is $(PYTHON_VERSION) (requirements.lock is resolved for it).
check_python = found=$$("$(1)" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || found=""; \
  if [ "$$found" != "$(PYTHON_VERSION)" ]; then \
    is=$$([ -n "$$found" ] && echo "is Python $$found" || echo "is not found"); \
    echo "error: make setup needs Python $(PYTHON_VERSION) and $(2) $$is: $($(3))" >&2; \
    exit 2; \
  fi
INSTALL_PYTHON := install Python $(PYTHON_VERSION) (Debian 12: apt-get install python$(PYTHON_VERSION)-venv; Debian 13 has \
  no package of it: uv python install $(PYTHON_VERSION), or pyenv), then run make setup PYTHON=/path/to/python$(PYTHON_VERSION)
REMAKE_VENV := remove it, then run make setup again (PYTHON=/path/to/python$(PYTHON_VERSION) unless python$(PYTHON_VERSION) \
  is on PATH)

.PHONY: help python-check setup reference schemas gateway-packages listener trino test test-fast format synth lint diff deploy destroy lock clean stage-listener e2e demo

help: ## List the targets
	@echo "emr-lineage make targets (ENV=$(ENV); choose with ENV=dev|prod):"
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | sort | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  %-16s %s\n", $$1, $$2}'

setup: $(STAMPS)/apt $(VENV)/.installed $(CHECKOV_VENV)/.installed node_modules/.installed reference schemas gateway-packages listener trino ## Install venv, pinned Python deps (checkov in its own venv), pinned CDK CLI, apt packages, the tests' reference data, the gateway Lambda's packages, the pinned listener jar and Iceberg runtime, and the tests' Trino (idempotent)
	@echo "setup complete: $$($(BIN)/python --version), cdk $$($(CDK) --version | cut -d' ' -f1)"

# Every make setup, before anything is installed: the virtualenvs there are, and the Python that makes the others.
python-check:
	@for venv in $(VENV) $(CHECKOV_VENV); do \
	  if [ -x "$$venv/bin/python" ]; then $(call check_python,$$venv/bin/python,$$venv,REMAKE_VENV); \
	  else $(call check_python,$(PYTHON),PYTHON=$(PYTHON),INSTALL_PYTHON); fi; \
	done

$(STAMPS)/apt $(VENV)/.installed $(CHECKOV_VENV)/.installed: | python-check

$(STAMPS)/apt: Makefile
	@mkdir -p $(STAMPS)
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v java >/dev/null || missing="$$missing default-jre-headless"; \
	command -v gpg >/dev/null || missing="$$missing gnupg"; \
	command -v curl >/dev/null || missing="$$missing curl"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	test -x $(BIN)/python || "$(PYTHON)" -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@touch $@

$(VENV)/.installed: requirements.lock pyproject.toml
	@test -x $(BIN)/python || "$(PYTHON)" -m venv $(VENV)
# --use-pep517: Debian 12's pip (23.0) builds pyspark's sdist the deprecated way otherwise, and warns
	$(BIN)/pip install --quiet --disable-pip-version-check --use-pep517 -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

$(CHECKOV_VENV)/.installed: requirements-checkov.lock
	@test -x $(CHECKOV_VENV)/bin/python || "$(PYTHON)" -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-checkov.lock
	@touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Idempotent by itself: files already there with their pinned SHA-256 are kept.
reference: $(STAMPS)/apt ## Fetch the tests' third-party reference data (OpenLineage schemas and fixtures, Marquez replies) at pinned commits into REFERENCE (default ../shared/reference), unless every file is there
	@EMR_LINEAGE_REFERENCE="$(REFERENCE)" PYTHON=$$(test -x $(BIN)/python && echo $(BIN)/python || echo python3) \
	  .github/fetch-reference.sh

schemas: reference $(VENV)/.installed ## Put the pinned OpenLineage JSON schemas in the user cache (openlineage.io, else the reference copy)
	@mkdir -p $(STAMPS)
	@if $(BIN)/emr-lineage schemas fetch --if-missing --timeout 20 2>$(STAMPS)/schemas.err; then :; \
	elif [ -d "$(REFERENCE)/openlineage/spec" ]; then \
	  echo "$$(sed 's/^error: //' $(STAMPS)/schemas.err); copying them from $(REFERENCE)/openlineage/spec instead"; \
	  $(BIN)/emr-lineage schemas fetch --from-dir "$(REFERENCE)/openlineage/spec"; \
	else \
	  echo "warning: OpenLineage schemas not installed: $$(sed 's/^error: //' $(STAMPS)/schemas.err)" >&2; \
	  echo "warning: event checks stay structural (and --strict fails) until \`emr-lineage schemas fetch\` succeeds" >&2; \
	fi
	@rm -f $(STAMPS)/schemas.err

# Idempotent by itself: wheels already in the cache are not fetched again.
gateway-packages: $(VENV)/.installed ## Download the gateway Lambda's packages (the event checks' wheels for its Python and architecture) into the user cache
	@$(BIN)/python -m stacks.gateway.packages

# Idempotent by itself: a jar already in the cache with the pinned SHA-256 is checked (hashed) and
# used, Maven is not run (about half a second); a missing or different jar is fetched with Maven.
# No stamp file: it would outlive a cleared cache, the command's own check does not.
listener: $(STAMPS)/apt $(VENV)/.installed ## Fetch the pinned OpenLineage listener jar and Iceberg runtime with Maven into the user cache and verify them; local Spark's class archive for them (once)
	@$(BIN)/emr-lineage listener fetch --class-archive

# Idempotent by itself: a marker in the unpacked server's folder; missing, Maven fetches the pinned server.
trino: $(STAMPS)/apt $(VENV)/.installed ## Fetch the pinned Trino server (the engine of Athena's engine version 3) with Maven for the named queries' test, and unpack its libraries and Hive plugin into the user cache
	@$(BIN)/python -m tests.trino install

lock: ## Re-resolve pyproject.toml's dependencies (with the spark extra) and requirements.in into requirements.lock, and requirements-checkov.in into requirements-checkov.lock (then run make setup)
	$(BIN)/pip-compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links --extra spark \
	  -o requirements.lock pyproject.toml requirements.in
	$(BIN)/pip-compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links \
	  -o requirements-checkov.lock requirements-checkov.in

# Some machines set PYTHONDONTWRITEBYTECODE: then every worker and every CLI process the tests start
# compiles this repository's modules (and pytest rewrites each test module) again, about 10 s each.
test: export PYTHONDONTWRITEBYTECODE :=
test: ## ruff (lint + format check), then all tests in parallel (CDK synth, cdk-nag, cfn-lint, checkov, the tools, Spark, Trino, Chromium, bootstrap)
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup $(TEST_SELECTION) $(PYTEST_ARGS)

# The same target with the tests marked heavy left out (tests/conftest.py); a variable of its own, so that
# PYTEST_ARGS given on make's command line (which overrides the makefile's own) adds to it.
test-fast: TEST_SELECTION := -m "not heavy"
test-fast: test ## ruff, then the tests that need no Spark, Trino, browser, CDK synth, Maven, bootstrap sandbox or other JVM (marker heavy: tests/conftest.py)

format: ## Format the code and apply ruff's safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

synth: ## Synthesize ENV's stacks into cdk.out/ENV (cdk-nag runs as part of synth)
	$(CDK) synth $(CDK_FLAGS) --output $(CDK_OUT) --quiet
	@echo "templates in $(CDK_OUT)/"

lint: synth ## cfn-lint and checkov on the synthesized templates of ENV, shellcheck the bootstrap scripts
	$(BIN)/cfn-lint --non-zero-exit-code warning -- $(CDK_OUT)/*.template.json
	$(CHECKOV) --config-file .checkov.yaml -f $(CDK_OUT)/*.template.json
	@if compgen -G "bootstrap/*.sh" >/dev/null; then $(BIN)/shellcheck bootstrap/*.sh; fi
	@echo "lint clean for $(ENV)"

diff: ## Show what a deploy of ENV would change (needs AWS credentials)
	$(CDK) diff $(CDK_FLAGS) --output $(CDK_OUT) --all

deploy: ## Deploy all stacks of ENV (needs AWS credentials and a bootstrapped account)
	$(CDK) deploy $(CDK_FLAGS) --output $(CDK_OUT) --all --require-approval $(if $(filter prod,$(ENV)),broadening,never)

destroy: ## Delete all stacks of ENV (what it leaves: docs/deploy.md, Operations)
	$(CDK) destroy $(CDK_FLAGS) --output $(CDK_OUT) --all

stage-listener: ## Fetch the pinned OpenLineage listener (Maven), verify its SHA-256, upload it to ENV's artifacts bucket
	$(BIN)/emr-lineage listener stage --env $(ENV)

demo: setup ## Run the sample pipeline on local Spark with the real OpenLineage listener; events + report in DEMO_OUT (ROWS=N)
	$(BIN)/emr-lineage demo --out-dir $(DEMO_OUT) $(if $(ROWS),--rows $(ROWS))

e2e: ## Run the sample pipeline on an ephemeral EMR cluster of ENV and validate its lineage in Marquez (AWS credentials)
	$(BIN)/emr-lineage e2e --env $(ENV) $(E2E_ARGS)

clean: ## Remove build output (keeps .venv and node_modules)
	rm -rf cdk.out .pytest_cache
