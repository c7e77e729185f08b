# cmlx developer entry points.  Every target installs what is missing first
# (scripts/setup.sh is idempotent and fast when everything is present).
SHELL := /bin/bash
.DEFAULT_GOAL := build

VENV       := $(CURDIR)/.venv
PY         := $(VENV)/bin/python
JOBS       := $(shell nproc 2>/dev/null || echo 2)
PYTEST_ARGS ?=
BUILD      := build
CUDA_BUILD := build-cuda
# The CUDA toolkit (nvcc, cuBLASLt, NVRTC headers): /usr/local/cuda unless set.
CUDA_HOME  ?= /usr/local/cuda
ASAN_BUILD := build-asan
# MLX's own test suite (not part of a user's clone) and the ids of its tests
# that must keep passing; FILES="test_ops.py ..." runs some files only.
CONFORMANCE_DIR ?= $(CURDIR)/../shared/mlx-conformance
RATCHET    := tests/conformance/ratchet.txt
FILES      ?=

CMAKE_COMMON := -G Ninja -DCMLX_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(PY) --log-level=WARNING

# Sanitizer runtimes to preload into the (uninstrumented) Python interpreter.
ASAN_PRELOAD   = $(shell gcc -print-file-name=libasan.so) $(shell gcc -print-file-name=libubsan.so)
UBSAN_ENV      := UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# PYTHONMALLOC=malloc routes Python's small-object allocations through ASan
# as well, so use-after-free of Python objects held by the extension is caught.
PY_ASAN_ENV    = LD_PRELOAD="$(ASAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 $(UBSAN_ENV) PYTHONMALLOC=malloc

# $(call configure,DIR,EXTRA_ARGS): (re)configure DIR with Ninja; a build dir made
# with another generator is wiped first.
define configure
	@if [ -f $(1)/CMakeCache.txt ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$$' $(1)/CMakeCache.txt; then \
	  echo "make: $(1)/ was configured with another generator; wiping it"; rm -rf $(1); fi
	@cmake -S . -B $(1) $(CMAKE_COMMON) $(2)
endef

# $(call pytest,ENV,PKGDIR): run tests/python (extra args: PYTEST_ARGS="-k name");
# exit code 5 (no tests collected) is success.
define pytest
	@rc=0; $(1) PYTHONPATH=$(2) $(PY) -m pytest -q $(PYTEST_ARGS) tests/python || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected (treated as success)"; rc=0; fi; \
	exit $$rc
endef

.PHONY: all setup configure build wheel test-wheel bench-readme bench-llm test test-c test-python api-diff test-large build-cuda test-cuda conformance conformance-ratchet ecosystem dist-suite demo bench fuzz asan asan-c asan-python format-check clean distclean

all: build

# The Python requirements a target installs first: make demo only the demo's
# (requirements-demo.txt, a few hundred MB); every other target also the
# references the tests and benchmarks compare with (requirements-dev.txt).
SETUP_LEVEL ?= test
demo: SETUP_LEVEL = demo

setup:
	@bash scripts/setup.sh $(SETUP_LEVEL)

configure: setup
	$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Runs both suites and the API comparison even when one fails; fails if
# any failed.
test: build
	@rc=0; \
	$(MAKE) --no-print-directory test-c || rc=1; \
	$(MAKE) --no-print-directory test-python || rc=1; \
	$(MAKE) --no-print-directory api-diff || rc=1; \
	exit $$rc

test-c:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	$(call pytest,,$(BUILD)/pkg)

# The installed MLX wheel's Python names and signatures against cmlx's
# (scripts/api_diff.py): fails on a gap not in the allowlist of known ones;
# says so and succeeds where MLX is not installed.
API_ALLOW := scripts/api/api_diff_allow.txt
api-diff:
	PYTHONPATH=$(BUILD)/pkg $(PY) scripts/api_diff.py --check $(API_ALLOW)

# Multi-GB files through every format (tests/python/test_io_large.py: about
# three minutes, 5 GB of memory and 8 GB of disk at peak); not in make test.
test-large: build
	CMLX_TEST_LARGE=1 PYTHONPATH=$(BUILD)/pkg $(PY) -m pytest -q -rs tests/python/test_io_large.py

# $(call conformance,EXTRA_ARGS): build, then MLX's suite through its run.py
# with the ratchet (fails when a ratchet test does not pass); skipped, with
# success, where the suite is absent. The strict-subtests plugin reports a test
# with failed subTest blocks as FAILED (pytest 9 alone reports it PASSED).
# CI is unset: the suite skips a few slow tests when it is set, and
# expected.txt (tests that pass on MLX) was made without it.
define conformance
	@if [ ! -f "$(CONFORMANCE_DIR)/run.py" ]; then \
	  echo "conformance: $(CONFORMANCE_DIR) not found (set CONFORMANCE_DIR); skipping"; exit 0; fi; \
	$(MAKE) --no-print-directory build || exit $$?; \
	env -u CI PYTEST_PLUGINS=cmlx_strict_subtests $(PY) "$(CONFORMANCE_DIR)/run.py" --python $(PY) \
	  --pythonpath $(BUILD)/pkg:tests/conformance/plugins --ratchet $(RATCHET) $(1) $(FILES)
endef

conformance:
	$(call conformance,)

# Runs the suite, then appends every expected test that passed to the ratchet
# (never removes one); fails, after adding, if a ratchet test did not pass.
conformance-ratchet:
	@rm -f $(BUILD)/conformance.json
	$(call conformance,--json $(BUILD)/conformance.json) || rc=$$?; \
	if [ -f $(BUILD)/conformance.json ]; then \
	  $(PY) scripts/conformance_ratchet.py $(RATCHET) "$(CONFORMANCE_DIR)/expected.txt" \
	    $(BUILD)/conformance.json && rm -f $(BUILD)/conformance.json || exit $$?; fi; \
	exit $${rc:-0}

# mlx-lm's own test suite (../shared/mlx-lm-suite, not part of a user's clone)
# on cmlx, against tests/ecosystem/ratchet.txt: fails when a ratchet test does
# not pass, and appends the expected tests that newly pass (never removes one).
# Its runner exits 1 while any MLX-passing test fails on cmlx, so the ratchet
# decides here; skipped where the suite is absent.  Then tests/ecosystem (every
# architecture of the pip-installed mlx-lm on cmlx against real MLX: about two
# minutes; it skips where mlx-lm or MLX is absent), mlx-whisper, mlx-vlm
# and mlx-embeddings (test_mlx_packages.py) and the mlx-examples programs
# (test_mlx_examples.py: a checkout in CMLX_MLX_EXAMPLES or
# ../shared/mlx-examples, else skipped).  Installs the dependencies first.
ECOSYSTEM_DIR ?= $(CURDIR)/../shared/mlx-lm-suite
ECOSYSTEM_RATCHET := tests/ecosystem/ratchet.txt
ecosystem: build
	@$(PY) -c "import importlib.util as u, sys; import transformers, tokenizers, pytest_timeout; \
	  sys.exit(any(u.find_spec(m) is None for m in ('mlx_lm', 'mlx_whisper', 'mlx_vlm', 'mlx_embeddings')))" \
	  2>/dev/null || \
	  $(PY) -m pip install -q -r tests/ecosystem/requirements.txt || exit $$?; \
	rc=0; \
	if [ ! -f "$(ECOSYSTEM_DIR)/run.py" ]; then \
	  echo "ecosystem: $(ECOSYSTEM_DIR) not found (set ECOSYSTEM_DIR); mlx-lm's suite skipped"; \
	else \
	  rm -f $(BUILD)/ecosystem.json; \
	  env -u CI $(PY) "$(ECOSYSTEM_DIR)/run.py" --python $(PY) --pythonpath $(CURDIR)/$(BUILD)/pkg \
	    --json $(CURDIR)/$(BUILD)/ecosystem.json | tail -n 1; \
	  if [ -f $(BUILD)/ecosystem.json ]; then \
	    $(PY) scripts/conformance_ratchet.py --check $(ECOSYSTEM_RATCHET) "$(ECOSYSTEM_DIR)/expected.txt" \
	      $(BUILD)/ecosystem.json || rc=1; \
	  else echo "ecosystem: the suite wrote no results"; rc=1; fi; \
	fi; \
	prc=0; PYTHONPATH=$(BUILD)/pkg $(PY) -m pytest -q -rs -p no:cacheprovider $(PYTEST_ARGS) tests/ecosystem || prc=$$?; \
	if [ $$prc -ne 0 ] && [ $$prc -ne 5 ]; then rc=1; fi; \
	exit $$rc

# MLX's distributed suites through cmlx.launch: ring on 2 and 4 ranks (also
# in make test) and the MPI suite on the 8 ranks it asserts (about a minute).
# The CUDA build (src/backend/cuda, -DCMLX_CUDA=ON) in $(CUDA_BUILD)/: the
# library, the Python package ($(CUDA_BUILD)/pkg) and the tests.  It needs
# the CUDA toolkit, not a GPU.
build-cuda: setup
	@if [ ! -x "$(CUDA_HOME)/bin/nvcc" ]; then \
	  echo "build-cuda: no CUDA toolkit at $(CUDA_HOME) (set CUDA_HOME)"; exit 1; fi
	$(call configure,$(CUDA_BUILD),-DCMAKE_BUILD_TYPE=Release -DCMLX_CUDA=ON -DCUDAToolkit_ROOT=$(CUDA_HOME))
	@cmake --build $(CUDA_BUILD) -j $(JOBS)

# The CUDA build's tests.  Its C tests always run (tests/cuda compile every
# generated kernel with NVRTC, on any machine).  With a GPU, the Python
# suite runs with the GPU as the default device (CMLX_TEST_DEVICE=gpu: the
# same values as the CPU, NumPy being the reference) and MLX's suite too;
# the GPU tests that pass are kept in tests/cuda/gpu_ratchet.txt.  Without
# one it says so and runs the Python suite on the CPU of the CUDA build.
# scripts/cuda_suites.py runs the GPU suites and keeps their ratchet.
test-cuda: build-cuda
	@rc=0; ctest --test-dir $(CUDA_BUILD) --output-on-failure -j $(JOBS) || rc=1; \
	if PYTHONPATH=$(CUDA_BUILD)/pkg $(PY) -c "import cmlx.core as mx, sys; sys.exit(0 if mx.cuda.is_available() else 1)"; then \
	  echo "test-cuda: a CUDA device is present: the Python suite on the GPU"; \
	  $(PY) scripts/cuda_suites.py --pythonpath $(CUDA_BUILD)/pkg --out $(CUDA_BUILD)/gpu-results \
	    --mlx-suite $(CONFORMANCE_DIR) || rc=1; \
	else \
	  echo "test-cuda: no CUDA device is present: GPU tests skipped; the CPU tests of the CUDA build follow"; \
	  PYTHONPATH=$(CUDA_BUILD)/pkg $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) tests/python || rc=1; \
	fi; exit $$rc

# A self-contained wheel in dist/ (scripts/wheel.sh: pip wheel ., then
# auditwheel bundles OpenBLAS, KISS FFT and the rest), and the check that it
# installs and runs, from Python and from C, in a bare Debian 12 root made
# with debootstrap (scripts/test_wheel_clean.sh; root, a few minutes the
# first time, build/clean-root is kept).
wheel: setup
	@bash scripts/wheel.sh

test-wheel: wheel
	@bash scripts/test_wheel_clean.sh

dist-suite: build
	CMLX_DIST_SUITE=1 PYTHONPATH=$(BUILD)/pkg $(PY) -m pytest -q tests/python/test_launch.py \
	  -k "suite" -rs
	CMLX_DIST_SUITE=1 PYTHONPATH=$(BUILD)/pkg $(PY) -m pytest -q tests/python/test_multihost.py -rs

demo: build
	@if [ -f examples/demo.py ]; then \
	  echo "== examples/demo.py"; PYTHONPATH=$(BUILD)/pkg $(PY) examples/demo.py || exit $$?; \
	else echo "demo: examples/demo.py does not exist yet"; fi
	@for x in $(BUILD)/example_*; do \
	  [ -f "$$x" ] && [ -x "$$x" ] || continue; echo "== $$x"; "$$x" || exit $$?; done

bench: build
	@if [ -f benchmarks/run.py ]; then PYTHONPATH=$(BUILD)/pkg $(PY) benchmarks/run.py \
	  --markdown $(BUILD)/bench-summary.md; \
	else echo "bench: benchmarks/run.py does not exist yet"; fi

# make bench, then its per-family table (with date and machine) into the
# README's Speed section: run it on a quiet machine (load under 1).
bench-readme: build
	PYTHONPATH=$(BUILD)/pkg $(PY) benchmarks/run.py --readme

# Language-model inference: cmlx+mlx-lm, llama.cpp, PyTorch and MLX in one run
# (benchmarks/bench_llm.py; minutes, and a 2 GB model per size in build/bench-llm).
BENCH_LLM_ARGS ?= --sizes 1b --formats f16,q4,q8 --impls cmlx,llama,torch
bench-llm: build
	$(PY) benchmarks/bench_llm.py $(BENCH_LLM_ARGS)

# libFuzzer targets for the file parsers (tests/fuzz), FUZZ_SECONDS each
# (default 30), in build-fuzz/ with clang, ASan and UBSan; fails on a crash.
FUZZ_SECONDS ?= 30
fuzz: setup
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(FUZZ_TARGETS)

asan: setup
	$(call configure,$(ASAN_BUILD),-DCMLX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g")
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@rc=0; \
	$(MAKE) --no-print-directory asan-c || rc=1; \
	$(MAKE) --no-print-directory asan-python || rc=1; \
	exit $$rc

asan-c:
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 $(UBSAN_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

asan-python:
	$(call pytest,$(PY_ASAN_ENV),$(ASAN_BUILD)/pkg)

# Lines over the .clang-format column limit in src/ and python/src/ (report
# only; STRICT=1 fails when there are any).  Needs python3, not clang-format.
format-check:
	@python3 scripts/check_line_length.py $(if $(STRICT),--strict)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz dist

# Also removes the virtualenv (slow to recreate).
distclean: clean
	rm -rf $(VENV)
