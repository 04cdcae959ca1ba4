# libautograph -- see README.md. `make` builds the library, the CLI and (with nvcc) the sample
# apps; `make test` runs every test (GPU ones skip without a GPU); `make bench` runs the
# benchmarks (GPU); `make install PREFIX=... DESTDIR=...`.

CUDA      ?= /usr/local/cuda
NVCC      ?= $(CUDA)/bin/nvcc
CC        ?= cc
PREFIX    ?= /usr/local
BUILD     ?= build
CFLAGS    ?= -O2 -g
VERSION   := 0.1.0

# CPPFLAGS: extra preprocessor flags for the library, the CLI and the unit tests (-DAG_DEBUG for a
# debug build, include directories for a cross build).
AG_CPPFLAGS := -I. -I$(CUDA)/include -D_GNU_SOURCE -DAG_VERSION=\"$(VERSION)\" $(CPPFLAGS)
AG_CFLAGS   := -std=c11 -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter \
               -Wno-missing-field-initializers
LIB_SRCS    := $(wildcard interpose/*.c cache/*.c policy/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB         := $(BUILD)/libautograph.so
CLI         := $(BUILD)/autograph

.PHONY: deps all lib cli apps test test-unit test-cpu test-gpu bench bench-hotpath install clean check-hooks check-layers \
        check-sanitizers fuzz demo selftime test-debug cross-aarch64
all: lib cli apps

lib: $(LIB)
cli: $(CLI)

$(BUILD)/obj/%.o: %.c $(wildcard */*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) $(AG_CFLAGS) $(CFLAGS) -c $< -o $@

# -z now: every symbol we import is bound at load, not by a lazy lookup inside a first launch.
$(LIB): $(LIB_OBJS) interpose/exports.map
	$(CC) -shared -o $@ $(LIB_OBJS) -Wl,--version-script=interpose/exports.map -Wl,-z,defs \
	    -Wl,-soname,libautograph.so -Wl,-z,now $(LDFLAGS) -ldl -lpthread

# The CLI shares the option table (policy/options.c) with the library.
$(CLI): $(wildcard cli/*.c cli/*.h) policy/options.c policy/log.c policy/faultspec.c $(wildcard policy/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter $(CFLAGS) \
	    -DAG_LIBDIR=\"$(PREFIX)/lib\" -DAG_LIBEXECDIR=\"$(PREFIX)/libexec/autograph\" \
	    $(filter-out cli/sim%.c,$(wildcard cli/*.c)) policy/options.c policy/log.c \
	    policy/faultspec.c -o $@ -ldl -lpthread -lm

include kernels/kernels.mk
include cli/sim.mk
include tests/tests.mk
include bench/bench.mk

deps:
	@scripts/install-deps.sh

# The README's test command: unit tests, the replay model's gate (cli/sim.mk), CPU integration tests (the fake-driver harness
# included), the unit tests and the harness again on a debug build, the short sanitizer and
# fuzzing runs, the aarch64 cross build (its unit tests under qemu-user), then the GPU tests
# (which skip with a reason where no GPU is visible).
test: lib cli test-unit check-hooks check-layers test-model test-cpu test-debug test-sanitizers-short cross-aarch64 \
      test-gpu

check-hooks:
	python3 tools/gen_hooks.py --check --cuda-include $(CUDA)/include

# The engine's files call and include each other in one direction only (DESIGN.md, "Layers"):
# a circle between modules of cache/, policy/ or interpose/ fails.
check-layers:
	python3 scripts/callgraph.py --check cache
	python3 scripts/callgraph.py --check policy
	python3 scripts/callgraph.py --check interpose

test-cpu: lib cli harness
	bats bats/cpu_*.bats

test-gpu: lib cli apps
	bats bats/gpu_*.bats

demo: lib cli apps
	@scripts/demo.sh

# The unit tests and bats/cpu_harness.bats on a debug build, build/debug: AG_ASSERT checks the
# engine's invariants (cache/debug.h). The bats file finds its build through
# $BATS_TEST_DIRNAME/../build, so it runs from a tree whose build/ is the debug build (as
# tests/sanitize.mk does for the sanitized builds).
DEBUG_BUILD := $(BUILD)/debug
test-debug:
	@echo "== unit tests and bats/cpu_harness.bats on the debug build $(DEBUG_BUILD)"
	@$(MAKE) --no-print-directory BUILD=$(DEBUG_BUILD) CFLAGS="-O1 -g" CPPFLAGS="-DAG_DEBUG" \
	    lib harness test-unit
	@mkdir -p $(DEBUG_BUILD)/bats-tree/bats
	@ln -sfn $(abspath bats/cpu_harness.bats) $(DEBUG_BUILD)/bats-tree/bats/cpu_harness.bats
	@ln -sfn $(abspath bats/harness.bash) $(DEBUG_BUILD)/bats-tree/bats/harness.bash
	@ln -sfn .. $(DEBUG_BUILD)/bats-tree/build
	@bats $(DEBUG_BUILD)/bats-tree/bats/cpu_harness.bats

# The library, the CLI and the unit tests cross-compiled for aarch64 with Debian's
# gcc-aarch64-linux-gnu into build/aarch64; the unit tests then run under qemu-user. Skips
# (saying so) where the cross compiler is not installed. The CUDA headers are the host's
# ($(CUDA)/include is the same on every architecture); uthash and xxhash are header-only, so
# the host's two headers serve, alone in a directory of their own (not all of /usr/include).
CROSS_AARCH64 ?= aarch64-linux-gnu-
QEMU_AARCH64  ?= qemu-aarch64
AARCH64_BUILD := $(BUILD)/aarch64
cross-aarch64:
	@if ! command -v $(CROSS_AARCH64)gcc >/dev/null; then \
	    echo "cross-aarch64: SKIPPED: $(CROSS_AARCH64)gcc is not installed" \
	         "(Debian: apt-get install gcc-aarch64-linux-gnu)"; exit 0; fi; \
	echo "== aarch64 cross build into $(AARCH64_BUILD)"; \
	mkdir -p $(AARCH64_BUILD)/include && \
	ln -sf /usr/include/uthash.h /usr/include/xxhash.h $(AARCH64_BUILD)/include/ && \
	$(MAKE) --no-print-directory BUILD=$(AARCH64_BUILD) CC=$(CROSS_AARCH64)gcc \
	    CPPFLAGS="-I$(abspath $(AARCH64_BUILD)/include)" lib cli unit-bins && \
	if command -v $(QEMU_AARCH64) >/dev/null; then \
	    echo "== unit tests on aarch64 ($(QEMU_AARCH64))"; \
	    for t in $(UNIT_TESTS); do \
	        $(QEMU_AARCH64) -L /usr/aarch64-linux-gnu $(AARCH64_BUILD)/tests/$$t || exit 1; done; \
	else \
	    echo "cross-aarch64: unit tests not run: $(QEMU_AARCH64) is not installed" \
	         "(Debian: apt-get install qemu-user)"; fi

# A development build that prints libautograph's own time per launch and per stream ordering
# point at exit (cache/selftime.h): build/selftime/libautograph.so.
selftime:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/selftime CFLAGS="$(CFLAGS) -DAG_SELFTIME" lib

install: lib cli
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libautograph.so
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/autograph

clean:
	rm -rf $(BUILD)
