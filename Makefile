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

AG_CPPFLAGS := -I. -I$(CUDA)/include -D_GNU_SOURCE -DAG_VERSION=\"$(VERSION)\"
AG_CFLAGS   := -std=c11 -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter \
               -Wno-missing-field-initializers
LIB_SRCS    := $(wildcard interpose/*.c cache/*.c policy/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB         := $(BUILD)/libautograph.so
CLI         := $(BUILD)/autograph

.PHONY: deps all lib cli apps test test-unit test-cpu test-gpu bench install clean check-hooks \
        check-sanitizers fuzz demo selftime
all: lib cli apps

lib: $(LIB)
cli: $(CLI)

$(BUILD)/obj/%.o: %.c $(wildcard */*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) $(AG_CFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS) interpose/exports.map
	$(CC) -shared -o $@ $(LIB_OBJS) -Wl,--version-script=interpose/exports.map -Wl,-z,defs \
	    -Wl,-soname,libautograph.so $(LDFLAGS) -ldl -lpthread

# The CLI shares the option table (policy/options.c) with the library.
$(CLI): $(wildcard cli/*.c cli/*.h) policy/options.c policy/log.c policy/faultspec.c $(wildcard policy/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter $(CFLAGS) \
	    -DAG_LIBDIR=\"$(PREFIX)/lib\" $(wildcard cli/*.c) policy/options.c policy/log.c \
	    policy/faultspec.c -o $@ -ldl -lpthread

include kernels/kernels.mk
include tests/tests.mk
include bench/bench.mk

deps:
	@scripts/install-deps.sh

# The README's test command: unit tests, CPU integration tests (the fake-driver harness
# included), the short sanitizer and fuzzing runs, then the GPU tests (which skip with a
# reason where no GPU is visible).
test: lib cli test-unit check-hooks test-cpu test-sanitizers-short test-gpu

check-hooks:
	python3 tools/gen_hooks.py --check --cuda-include $(CUDA)/include

test-cpu: lib cli harness
	bats bats/cpu_*.bats

test-gpu: lib cli apps
	bats bats/gpu_*.bats

demo: lib cli apps
	@scripts/demo.sh

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
