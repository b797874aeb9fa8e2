# make demo  — build maestro.pyz and walk through it in a throw-away HOME (offline, seconds)
# make test  — install the dev tools into .venv, build, run the suite on the source tree
#              (hooks and installer with coverage), again against the built dist/maestro.pyz, and the stress trials
# make mutants — the planted-bug score of the safety-critical code (bench/mutants.py; slow)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYZ := dist/maestro.pyz

.PHONY: build test test-source test-source-covered test-source-rest test-pyz test-stress bench mutants demo clean

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

build: $(VENV)/.installed
	$(PY) build.py --output $(PYZ)

# Three jobs side by side on CI's 2 cores: the built archive without the memory tests (the longest single
# run); the source tree without the hooks and installer; and the stress trials, the hooks and installer
# with coverage, then the memory tests against the archive (the shorter runs in one job, so that no job is
# left running alone at the end: the archive run did, for ~90 s). Each job gets its own pytest temp root so
# no run cleans up another's dirs; their reports follow the source run's. The archive is built once (the
# archive runs call pytest directly: a second `build` would race on its temp file); the source-tree runs
# install it (MAESTRO_TEST_BUILT_PYZ, tests/conftest.py) instead of building their own.
PYZ_TEST = MAESTRO_TEST_TARGET=pyz MAESTRO_TEST_PYZ=$(CURDIR)/$(PYZ) $(PY) -m pytest -q -m "not source_only and not stress"

test: build
	@rm -f .test-pyz.log .test-stress.log; mkdir -p "$${TMPDIR:-/tmp}/maestro-test-pyz" "$${TMPDIR:-/tmp}/maestro-test-stress"
	@PYTEST_DEBUG_TEMPROOT="$${TMPDIR:-/tmp}/maestro-test-pyz" $(PYZ_TEST) --ignore=tests/memory \
		> .test-pyz.log 2>&1 & pyz=$$!; \
	export MAESTRO_TEST_BUILT_PYZ=$(CURDIR)/$(PYZ); \
	(export PYTEST_DEBUG_TEMPROOT="$${TMPDIR:-/tmp}/maestro-test-stress"; \
		$(MAKE) --no-print-directory test-stress; stress_rc=$$?; \
		$(MAKE) --no-print-directory test-source-covered; covered_rc=$$?; \
		echo "--- the memory tests against the built archive ($(PYZ)) ---"; \
		$(PYZ_TEST) tests/memory; memory_rc=$$?; \
		test $$stress_rc -eq 0 && test $$covered_rc -eq 0 && test $$memory_rc -eq 0) > .test-stress.log 2>&1 & stress=$$!; \
	$(MAKE) --no-print-directory test-source-rest; source_rc=$$?; \
	wait $$pyz; pyz_rc=$$?; wait $$stress; stress_rc=$$?; \
	echo "--- against the built archive ($(PYZ)), the memory tests below ---"; cat .test-pyz.log; \
	echo "--- stress trials, the hooks and the installer with coverage (source tree), the memory tests (archive) ---"; \
	cat .test-stress.log; \
	test $$source_rc -eq 0 && test $$pyz_rc -eq 0 && test $$stress_rc -eq 0

# Coverage is measured where it gates something: the hooks and the installer by their own tests (≥ 90%).
# The rest of the suite runs without the tracer, which costs it about a third of its CPU time (CI is
# bounded at 10 minutes on 2 cores).
test-source: test-source-covered test-source-rest

test-source-covered: $(VENV)/.installed
	$(PY) -m coverage erase
	$(PY) -m coverage run -m pytest -q -m "not stress" tests/hooks tests/install
	$(PY) -m coverage report --include='maestro/hooks/*,maestro/install/*' --fail-under=90

test-source-rest: $(VENV)/.installed
	$(PY) -m pytest -q -m "not stress" --ignore=tests/hooks --ignore=tests/install

test-pyz: build
	$(PYZ_TEST)

test-stress: $(VENV)/.installed
	$(PY) -m pytest -q -m stress

bench: build
	$(PY) bench/hooks.py --pyz $(PYZ)
	$(PY) bench/digest.py --pyz $(PYZ)
	$(PY) bench/checkpoint.py
	$(PY) bench/session_start.py --pyz $(PYZ)
	$(PY) bench/memory_scale.py --pyz $(PYZ)
	$(PY) bench/coding_memory.py
	$(PY) bench/locomo.py --pyz $(PYZ)

# Planted-bug score of the safety-critical code (bench/mutants.py): one mutant at a time on a
# private copy of the tree, its covering tests on the source target. Slow (tens of minutes); not part of `test`.
mutants: $(VENV)/.installed
	$(PY) bench/mutants.py

demo: build
	bash docs/demo.sh $(PYZ)

clean:
	rm -rf dist .coverage .coverage.* htmlcov .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
