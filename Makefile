# courseops — the two commands are `make run` and `make test`; everything else is optional.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# requirements.lock: what a server needs (production installs only this);
# requirements-dev.lock: that plus tests, linters, browser driver and load tool (make run/test).
STAMP := $(VENV)/.installed-$(shell cat requirements-dev.lock | cksum | cut -d' ' -f1)
# uv installs the same lock files as pip, in parallel and with progress; its own version is pinned
# in requirements-dev.lock like everything else.
UV_PIN := $(shell grep -m1 '^uv==' requirements-dev.lock)
COURSE_FILE ?= courses/ee290-sp26.yaml
HOST ?= 127.0.0.1
PORT ?= 8000
# make run's links (e-mails, the calendar feed) point where it serves: PORT=8722 make run too.
export SITE_URL ?= http://$(HOST):$(PORT)
# Production settings only for the deploy check; the key is a throwaway, never used to sign.
DEPLOY_CHECK_ENV := DJANGO_SETTINGS_MODULE=courseops.settings.production \
	SECRET_KEY=deploy-check-$(shell date +%s)-not-a-real-key-0123456789abcdefghijklmnop \
	ALLOWED_HOSTS=courseops.example.edu SITE_URL=https://courseops.example.edu

.PHONY: run test lint fmt worker bench lock migrate demo check-python clean docs screenshots cluster-test

$(STAMP): requirements.lock requirements-dev.lock
	@$(MAKE) --no-print-directory check-python
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "== first run: installing the pinned packages into $(VENV) with uv (once; about a minute)"
	@if $(PY) -m pip install -qq --disable-pip-version-check "$(UV_PIN)"; then \
		$(BIN)/uv pip install --python $(PY) -r requirements-dev.lock; \
	else \
		echo "== uv could not be installed: pip instead (about 4 minutes on a 2-core machine)"; \
		$(PY) -m pip install --disable-pip-version-check --progress-bar on -r requirements-dev.lock; \
	fi
	@echo "== installed; next: migrate, load the EE 290 course and its demo, serve"
	@rm -f $(VENV)/.installed-*
	@touch $@

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "courseops needs Python 3.11 or newer (found " + sys.version.split()[0] + "); set PYTHON=python3.11")'

## make run: install on first use, then in one process check, migrate, load the EE 290 course
## and its demo (first_look), serve http://$(HOST):$(PORT)
run: $(STAMP)
	$(PY) manage.py first_look $(COURSE_FILE) --serve $(HOST):$(PORT)

## make test: the whole suite, exactly what CI runs (one pytest process per core: PYTEST_WORKERS)
PYTEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy apps courseops
	$(PY) manage.py makemigrations --check --dry-run
	$(DEPLOY_CHECK_ENV) $(PY) manage.py check --deploy --fail-level WARNING
	$(BIN)/sphinx-build -q -W --keep-going -b html docs docs/_build/html
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)
	@echo "== the first look on SQLite, the database make run uses"
	DATABASE_URL=sqlite:///:memory: $(BIN)/pytest -q -p no:cacheprovider tests/core/test_first_look.py

## make docs: the documentation site (docs/*.md, Sphinx + MyST + furo) → docs/_build/html/index.html
docs: $(STAMP)
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html
	@echo "== open docs/_build/html/index.html"

## make screenshots: the guides' pictures, taken from the demo in Chromium (1280 and 390 px)
screenshots: $(STAMP)
	$(PY) docs/screenshots.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy apps courseops

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## make worker: a Celery worker with beat embedded (run more workers elsewhere with `make worker-only`)
worker: $(STAMP)
	$(BIN)/celery -A courseops worker --beat --loglevel=INFO --concurrency=2

worker-only: $(STAMP)
	$(BIN)/celery -A courseops worker --loglevel=INFO

## make cluster-test: only the many-hosts tests (root; part of make test): seven network namespaces,
## links cut under a grading pass and reminder e-mails (deploy/cluster/cluster.sh); two beats, one
## killed; a PostgreSQL primary failed over to its synchronous replica under writes
cluster-test: $(STAMP)
	$(BIN)/pytest -p no:cacheprovider -q -s tests/cluster/

# Each bench BENCH_REPEAT times under one BENCH_RUN id; figures and floors go to bench/results.json
# and the summary (min / median / max of each figure and its ratio to the floor) is printed last.
BENCH_REPEAT ?= 3
BENCH_RUN ?= $(shell date -u +%Y%m%d-%H%M)-$(shell git rev-parse --short HEAD)
bench: $(STAMP)
	@export BENCH_RUN=$(BENCH_RUN); for i in $$(seq $(BENCH_REPEAT)); do \
		for f in bench/bench_*.py; do echo "== $$f ($$i of $(BENCH_REPEAT))"; $(PY) $$f || exit 1; done; \
		echo "== bench/load.py (gunicorn + wrk, 2,000 students)"; $(PY) bench/load.py || exit 1; \
	done
	@echo "== bench/term.py (a whole term through the services, 2,000 students)"; $(PY) bench/term.py
	@$(PY) bench/results.py $(BENCH_RUN)

## make lock: re-resolve pyproject.toml's ranges into requirements.lock (runtime) and
## requirements-dev.lock (runtime + dev, the runtime pins held as constraints)
lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/python -c 'import tomllib; d = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(x.split("#")[0].strip() for x in d["dependencies"]))' > .lockenv/runtime.txt
	.lockenv/bin/python -c 'import tomllib; d = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(x.split("#")[0].strip() for x in d["optional-dependencies"]["dev"]))' > .lockenv/dev.txt
	.lockenv/bin/pip install --quiet -r .lockenv/runtime.txt
	(echo '# Runtime: exact versions a server installs. Generated by `make lock` from pyproject.toml; do not edit by hand.'; .lockenv/bin/pip freeze) > requirements.lock
	.lockenv/bin/pip install --quiet -r .lockenv/dev.txt -c requirements.lock
	(echo '# Runtime + development (tests, lint, browser driver, load tool): what make run and make test install. Generated by `make lock`; do not edit by hand.'; .lockenv/bin/pip freeze) > requirements-dev.lock
	rm -rf .lockenv

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm .pytest_cache .mypy_cache .ruff_cache docs/_build
