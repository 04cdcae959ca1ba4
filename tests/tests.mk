# Unit tests of the library's pure parts (no GPU, no driver): `make test-unit`.
UNIT_TESTS := test_learn test_benefit test_pieces test_options test_layout test_report \
              test_traceread test_watch test_nap
UNIT_BINS  := $(UNIT_TESTS:%=$(BUILD)/tests/%)
UNIT_CFLAGS := $(AG_CPPFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter \
               -Wno-missing-field-initializers -g -O1 $(UNIT_SANITIZE)
POLICY_BASE := policy/options.c policy/log.c policy/faultspec.c

$(BUILD)/tests/test_learn: tests/test_learn.c cache/learn.c cache/shape.c cache/spare.c policy/stats.c \
                           $(POLICY_BASE)
$(BUILD)/tests/test_benefit: tests/test_benefit.c policy/benefit.c policy/log.c
$(BUILD)/tests/test_pieces: tests/test_pieces.c policy/pieces.c
$(BUILD)/tests/test_options: tests/test_options.c $(POLICY_BASE)
$(BUILD)/tests/test_report: tests/test_report.c cli/json.c cli/json.h policy/stats.c $(POLICY_BASE)
$(BUILD)/tests/test_traceread: tests/test_traceread.c cli/traceread.c cli/traceread.h
$(BUILD)/tests/test_watch: tests/test_watch.c
$(BUILD)/tests/test_nap: tests/test_nap.c
$(BUILD)/tests/test_layout: tests/test_layout.c cache/params.c cache/shape.c cache/spare.c \
                            policy/filter.c \
                            policy/stats.c $(POLICY_BASE)

$(UNIT_BINS): tests/check.h $(wildcard cache/*.h policy/*.h) tests/tests.mk
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(filter %.c,$^) -o $@ -lpthread

.PHONY: unit-bins
unit-bins: $(UNIT_BINS)

test-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do $$t; done

-include tests/fakecuda/fakecuda.mk

# Small programs for the CPU integration tests (bats/cpu_*.bats).
PROGS := $(BUILD)/tests/nocuda $(BUILD)/tests/next_main
$(BUILD)/tests/nocuda: tests/progs/nocuda.c
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall $< -o $@ -ldl
$(BUILD)/tests/libnext_a.so: tests/progs/next_a.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -fPIC -shared $< -o $@ -ldl
$(BUILD)/tests/libnext_b.so: tests/progs/next_b.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -fPIC -shared $< -o $@
$(BUILD)/tests/next_main: tests/progs/next_main.c $(BUILD)/tests/libnext_a.so $(BUILD)/tests/libnext_b.so
	$(CC) -std=c11 -Wall $< -o $@ -L$(BUILD)/tests -Wl,--no-as-needed -lnext_a -lnext_b -Wl,-rpath,'$$ORIGIN' -ldl
progs: $(PROGS)
test-cpu: progs
$(BUILD)/tests/probe: tests/progs/probe.c
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall $< -o $@ -L$(CUDA)/lib64/stubs -lcuda
progs: $(BUILD)/tests/probe
$(BUILD)/tests/procaddr: tests/progs/procaddr.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall $< -o $@ -L$(BUILD)/fakecuda -lcuda \
	    -Wl,-rpath,$(abspath $(BUILD)/fakecuda) -ldl
progs: $(BUILD)/tests/procaddr
$(BUILD)/tests/resident: tests/progs/resident.c $(FAKECUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -std=c11 -Wall $< -o $@ -L$(BUILD)/fakecuda -lcuda \
	    -Wl,-rpath,$(abspath $(BUILD)/fakecuda) -ldl
progs: $(BUILD)/tests/resident
$(BUILD)/tests/libfmtcount.so: tests/progs/fmtcount.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -fPIC -shared $< -o $@
progs: $(BUILD)/tests/libfmtcount.so

-include tests/sanitize.mk
