# Two commands do all set-up on a fresh machine:
#   make demo   - create .venv, install, and run the main job
#   make test   - create .venv, install, and run the test suite (what CI runs)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: the CPU wheel of 2.13.0 is on these machines (pip find-links).
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# ARGS: extra overrides, e.g. make demo ARGS="threads=2 runs_root=/tmp/runs"
demo: $(STAMP)
	$(PY) run.py task=ner elmo.position=both profile=quick source=local $(ARGS)

# -n auto: one test process per core (pytest-xdist), each on one torch thread so they do not fight over cores;
# --durations: the slowest tests, printed so that the CI time (target: under 15 min) can be watched
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n auto --durations=15 tests

bench: $(STAMP)
	$(PY) -m benchmarks.bilm_speed

# the activation cache (.cache/activations, GBs at full scale) and fine-tuned biLMs; rebuilt on demand
clean-cache:
	rm -rf .cache/activations .cache/finetuned

clean: clean-cache
	rm -rf $(VENV) outputs multirun .pytest_cache
