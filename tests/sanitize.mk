# tests/sanitize.mk -- sanitizer builds and fuzzing, included at the end of tests/tests.mk.
#
#   make check-sanitizers       the library, the fake driver, the harness programs and the unit
#                               tests built twice -- with ThreadSanitizer (build/san-thread) and
#                               with AddressSanitizer + UBSan (build/san-address) -- then every
#                               unit test and every scenario of bats/cpu_harness.bats on each
#   make test-sanitizers-short  the cheap version for CI: the unit tests and a few scenarios
#                               (bats/cpu_sanitizers.bats) on both builds, then fuzz-short
#   make fuzz                   libFuzzer (clang) on the option parser and the profile loader,
#                               FUZZ_RUNS (10^6) executions each
#   make fuzz-short             the same, FUZZ_SHORT_RUNS (2*10^4) executions each
#
# Any sanitizer report fails the run (the *_OPTIONS below). No report of libautograph's own code
# is suppressed; two of its files, the loader glue, are built without instrumentation (see the
# end of this file for why). tests/fuzz/README.md has more: what each fuzz target checks, how
# to replay a crash, the suppressions.

SAN_KINDS := thread address
.PHONY: test-sanitizers-short fuzz-short \
        $(foreach step,build unit harness short,$(SAN_KINDS:%=san-$(step)-%))

# ---- the two sanitized builds -------------------------------------------------------------
#
# Each is the normal build (the rules of the top Makefile, tests/tests.mk and
# tests/fakecuda/fakecuda.mk) made again by a sub-make with BUILD=$(BUILD)/san-<kind> and
# AG_SAN=<kind>; with AG_SAN set, the second half of this file only changes the flags. gcc, so
# that the runtime is the shared libtsan/libasan that -print-file-name finds.
SAN_CC            ?= gcc
SAN_thread_FLAGS  := -fsanitize=thread
SAN_address_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
SAN_thread_RT      = $(shell $(SAN_CC) -print-file-name=libtsan.so)
SAN_address_RT     = $(shell $(SAN_CC) -print-file-name=libasan.so)

# Every report is fatal and exits non-zero. LSan (part of ASan) is on: the library keeps what
# it retires reachable on purpose (DESIGN.md, "Threads and locks"), so only real leaks show;
# tests/fuzz/{tsan,lsan}.supp list (with reasons) reports of the test programs, none of
# libautograph's own code.
SAN_TSAN := halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=4
# ($\ at a line end joins the two lines without a space)
SAN_ASAN := halt_on_error=1:exitcode=67:detect_leaks=1:strict_string_checks=1:$\
            check_initialization_order=1:detect_stack_use_after_return=1
SAN_ENV  := TSAN_OPTIONS=$(SAN_TSAN):suppressions=$(abspath tests/fuzz/tsan.supp) \
            ASAN_OPTIONS=$(SAN_ASAN) \
            LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp):print_suppressions=0 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=68

ifeq ($(AG_SAN),)

# The scenarios of the short run: stress with a small count (more in bats/cpu_sanitizers.bats).
SAN_STRESS ?= 2000

$(SAN_KINDS:%=san-build-%): san-build-%:
	@echo "== building with $(SAN_$*_FLAGS) into $(BUILD)/san-$*"
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/san-$* AG_SAN=$* CC=$(SAN_CC) \
	    UNIT_SANITIZE="$(SAN_$*_FLAGS)" lib harness unit-bins

$(SAN_KINDS:%=san-unit-%): san-unit-%: san-build-%
	@echo "== unit tests on $(BUILD)/san-$*"
	@set -e; for t in $(UNIT_TESTS); do env $(SAN_ENV) $(BUILD)/san-$*/tests/$$t; done

# bats/cpu_harness.bats finds everything through $BATS_TEST_DIRNAME/../build, so it runs
# unchanged from a tree whose bats/cpu_harness.bats is a link to the real one and whose build/
# is the sanitized build; HARNESS_LIB (the LD_PRELOAD value) gets the sanitizer runtime first
# -- the runtime must be the first object loaded, before libautograph.
$(SAN_KINDS:%=san-harness-%): san-harness-%: san-build-%
	@mkdir -p $(BUILD)/san-$*/bats-tree/bats
	@ln -sfn $(abspath bats/cpu_harness.bats) $(BUILD)/san-$*/bats-tree/bats/cpu_harness.bats
	@ln -sfn $(abspath bats/harness.bash) $(BUILD)/san-$*/bats-tree/bats/harness.bash
	@ln -sfn .. $(BUILD)/san-$*/bats-tree/build
	@echo "== bats/cpu_harness.bats on $(BUILD)/san-$*"
	@env $(SAN_ENV) HARNESS_LIB=$(SAN_$*_RT):$(abspath $(BUILD)/san-$*/libautograph.so) \
	    bats $(BUILD)/san-$*/bats-tree/bats/cpu_harness.bats

$(SAN_KINDS:%=san-short-%): san-short-%: san-build-%
	@echo "== bats/cpu_sanitizers.bats on $(BUILD)/san-$*"
	@env $(SAN_ENV) SAN_BUILD=$(abspath $(BUILD)/san-$*) SAN_RUNTIME=$(SAN_$*_RT) \
	    SAN_STRESS=$(SAN_STRESS) bats bats/cpu_sanitizers.bats

# One kind at a time (its build, then its tests), thread first. Every part runs even when an
# earlier one failed (make -k, then the combined status), so one run shows every finding.
check-sanitizers:
	@rc=0; \
	$(MAKE) -k --no-print-directory san-unit-thread san-harness-thread || rc=1; \
	$(MAKE) -k --no-print-directory san-unit-address san-harness-address || rc=1; \
	exit $$rc

test-sanitizers-short:
	@rc=0; \
	$(MAKE) -k --no-print-directory san-unit-thread san-short-thread || rc=1; \
	$(MAKE) -k --no-print-directory san-unit-address san-short-address || rc=1; \
	$(MAKE) -k --no-print-directory fuzz-short || rc=1; \
	exit $$rc

# ---- fuzzing --------------------------------------------------------------------------------
#
# libFuzzer targets (tests/fuzz/fuzz_*.c), clang only. Each starts from its seed corpus
# (tests/fuzz/corpus/<target>, left untouched) and the inputs that once crashed it
# (tests/fuzz/reproducers/<target>: replayed first, every time), and writes what it finds to
# $(BUILD)/fuzz/work/<target>, kept for the next run; crashes land in $(BUILD)/fuzz/artifacts/.
# FUZZ_ARGS: more libFuzzer options. Without clang or its libFuzzer runtime (Debian:
# libclang-rt-dev, scripts/install-deps.sh) `make fuzz` says so and succeeds.
FUZZ_CC         ?= clang
FUZZ_DIR        := $(BUILD)/fuzz
FUZZ_FLAGS      := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                   -fno-omit-frame-pointer
FUZZ_TARGETS    := options profile
FUZZ_RUNS       ?= 1000000
FUZZ_SHORT_RUNS ?= 20000
FUZZ_ARGS       ?=
FUZZ_MAXLEN_options := 256
FUZZ_MAXLEN_profile := 4096
FUZZ_ENV        := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 \
                   UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Links an empty fuzz target: fails without clang or without its libFuzzer runtime.
FUZZ_PROBE      := printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) {return 0;}' \
                   | $(FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o /dev/null - \
                   >/dev/null 2>&1

# The option parser, with the fault-spec parser behind AUTOGRAPH_FAULT.
$(FUZZ_DIR)/fuzz_options: tests/fuzz/fuzz_options.c policy/options.c policy/log.c policy/faultspec.c
# The profile loader and saver. fuzz_profile.c #includes cache/profile.c (it needs the file's
# statics to free what was loaded between inputs) and stubs the stream registry.
$(FUZZ_DIR)/fuzz_profile: tests/fuzz/fuzz_profile.c cache/shape.c policy/stats.c \
                          policy/options.c policy/log.c policy/faultspec.c cache/profile.c

$(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%): $(wildcard cache/*.h policy/*.h) tests/sanitize.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(AG_CPPFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter $(FUZZ_FLAGS) \
	    $(filter-out cache/profile.c,$(filter %.c,$^)) -o $@ -lpthread

fuzz:       FUZZ_N = $(FUZZ_RUNS)
fuzz-short: FUZZ_N = $(FUZZ_SHORT_RUNS)
fuzz fuzz-short:
	@if command -v $(FUZZ_CC) >/dev/null && $(FUZZ_PROBE); then \
	    $(MAKE) -k --no-print-directory $(FUZZ_TARGETS:%=fuzz-run-%) FUZZ_N=$(FUZZ_N); \
	else \
	    echo "fuzz: SKIPPED: $(FUZZ_CC) with its libFuzzer runtime is not available" \
	         "(Debian: apt-get install clang libclang-rt-dev)"; \
	fi

.PHONY: $(FUZZ_TARGETS:%=fuzz-run-%)
# One target, FUZZ_N executions. Prints libFuzzer's "Done N runs in T second(s)" and the
# coverage reached; on a crash, the report with the reproducer's path, and fails.
$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p $(FUZZ_DIR)/work/$* $(FUZZ_DIR)/artifacts
	@env $(FUZZ_ENV) $< -runs=$(FUZZ_N) -max_len=$(FUZZ_MAXLEN_$*) -dict=tests/fuzz/$*.dict \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$*- -print_final_stats=1 $(FUZZ_ARGS) \
	    $(FUZZ_DIR)/work/$* tests/fuzz/corpus/$* $(wildcard tests/fuzz/reproducers/$*) \
	    >$(FUZZ_DIR)/$*.log 2>&1 || { \
	    tail -n 60 $(FUZZ_DIR)/$*.log; \
	    echo "fuzz_$*: FAILED; log: $(FUZZ_DIR)/$*.log; replay the reproducer: $< FILE"; \
	    exit 1; }
	@echo "fuzz_$*: $$(grep -m1 '^Done ' $(FUZZ_DIR)/$*.log)" \
	     "($$(grep -o 'cov: [0-9]*' $(FUZZ_DIR)/$*.log | tail -n1)," \
	     "corpus $$(ls $(FUZZ_DIR)/work/$* | wc -l) inputs)"

else
# ---- inside the sub-make of a sanitized build (AG_SAN=thread|address) -----------------------
#
# `override`: these win over a CFLAGS given to the outer make (it reaches the sub-make as a
# command-line variable). -O1 -g: the usual for sanitizers (usable stacks, tolerable speed).
SAN_FLAGS := $(SAN_$(AG_SAN)_FLAGS)
override CFLAGS        := -O1 -g $(SAN_FLAGS)
# The library's link line has LDFLAGS, not CFLAGS. (The unit tests get the flags through
# UNIT_SANITIZE, tests/tests.mk's hook, which must come from the command line above: tests.mk
# expands it before this file is read.)
override LDFLAGS       := $(SAN_FLAGS)

# Not instrumented: interpose/dlsym.c and interpose/real.c. The sanitizer runtimes resolve
# their interceptors with dlsym(RTLD_NEXT, ...) while they initialise, and the preloaded
# libautograph exports dlsym, so this code runs inside the runtime's own initialisation:
# instrumented, it touches the runtime's state before there is any (ASan: shadow memory not
# mapped yet; TSan: no thread state) and crashes at start. -O2, as in the normal build: dlsym
# must stay a tail call into glibc's for RTLD_NEXT to be relative to its caller (DESIGN.md).
# real.c's pthread_once is replaced by tests/fuzz/san_once.c (equally uninstrumented): TSan
# intercepts pthread_once and its interceptor, too, crashes before TSan is initialised.
SAN_GLUE_CFLAGS := -O2 -g
SAN_ONCE_OBJ    := $(BUILD)/obj/tests/fuzz/san_once.o
$(BUILD)/obj/interpose/dlsym.o: override CFLAGS := $(SAN_GLUE_CFLAGS)
$(BUILD)/obj/interpose/real.o:  override CFLAGS := $(SAN_GLUE_CFLAGS) -Dpthread_once=ag_san_once
$(SAN_ONCE_OBJ):                override CFLAGS := $(SAN_GLUE_CFLAGS)
$(LIB): $(SAN_ONCE_OBJ)
LIB_OBJS += $(SAN_ONCE_OBJ)

# Everything of a sanitized build is rebuilt when the flags here change.
$(LIB_OBJS) $(UNIT_BINS) $(FAKECUDA_LIB) $(HARNESS_BINS): tests/sanitize.mk

endif
