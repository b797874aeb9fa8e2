# make demo  — build maestro.pyz and walk through it in a throw-away HOME (offline, seconds)
# make test  — install the dev tools into .venv, build, run the suite on the source tree
#              (with coverage) and again against the built dist/maestro.pyz
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYZ := dist/maestro.pyz

.PHONY: build test test-source test-pyz bench demo clean

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

build: $(VENV)/.installed
	$(PY) build.py --output $(PYZ)

test: build test-source test-pyz

test-source: $(VENV)/.installed
	$(PY) -m coverage erase
	$(PY) -m coverage run -m pytest -q
	$(PY) -m coverage report --include='maestro/hooks/*,maestro/install/*' --fail-under=90
	$(PY) -m coverage report

test-pyz: build
	MAESTRO_TEST_TARGET=pyz MAESTRO_TEST_PYZ=$(CURDIR)/$(PYZ) $(PY) -m pytest -q -m "not source_only and not stress"

bench: build
	$(PY) bench/hooks.py --pyz $(PYZ)
	$(PY) bench/digest.py --pyz $(PYZ)
	$(PY) bench/session_start.py --pyz $(PYZ)

demo: build
	bash docs/demo.sh $(PYZ)

clean:
	rm -rf dist .coverage .coverage.* htmlcov .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
