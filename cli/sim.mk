# The replay model: build/autograph-sim, which `autograph simulate` execs (docs/MODEL.md).
# The engine (cache/, policy/) is compiled a second time with -DAG_SIM into $(BUILD)/sim/obj:
# its clock is the simulator's, and the hold watchdog and the worker are the simulator's
# (cache/watchdog.c and cache/worker.c are left out: cli/simworker.c). Included by the top Makefile.

SIM_BUILD        := $(BUILD)/sim
SIM_ENGINE_SRCS  := $(filter-out cache/watchdog.c cache/worker.c,$(wildcard cache/*.c policy/*.c))
SIM_ENGINE_OBJS  := $(SIM_ENGINE_SRCS:%.c=$(SIM_BUILD)/obj/%.o)
SIM_CLI_SRCS     := cli/simulate.c cli/simdrv.c cli/simtrace.c cli/traceread.c cli/simcost.c \
                    cli/simworker.c
SIM              := $(BUILD)/autograph-sim
SIM_COSTDIR      := $(PREFIX)/share/autograph/costs
SIM_LIBEXECDIR   := $(PREFIX)/libexec/autograph
MKTRACE          := $(BUILD)/tests/mktrace

.PHONY: sim
all: sim
sim: $(SIM)

$(SIM_BUILD)/obj/%.o: %.c $(wildcard */*.h) Makefile cli/sim.mk
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -DAG_SIM $(AG_CFLAGS) $(CFLAGS) -c $< -o $@

$(SIM): $(SIM_ENGINE_OBJS) $(SIM_CLI_SRCS) cli/json.c $(wildcard cli/*.h) Makefile cli/sim.mk
	@mkdir -p $(dir $@)
	$(CC) $(AG_CPPFLAGS) -DAG_SIM -std=c11 -Wall -Wextra -Wno-unused-parameter \
	    -Wno-missing-field-initializers $(CFLAGS) -DAG_COSTDIR=\"$(SIM_COSTDIR)\" \
	    $(SIM_CLI_SRCS) cli/json.c $(SIM_ENGINE_OBJS) -o $@ -lpthread

# Synthetic traces (tests/progs/mktrace.c): the patterns of tests/traces/.
$(MKTRACE): tests/progs/mktrace.c cache/tracefmt.h
	@mkdir -p $(dir $@)
	$(CC) -I. -std=c11 -Wall -Wextra $(CFLAGS) $< -o $@ -lm

# The CI gate (issue 18, item 4): every trace of bench/traces (recorded on a GPU) and
# tests/traces (synthetic) replayed; fails when a predicted ratio eager/autograph is below 0.98
# or more than 3% below its baseline (scripts/model_gate.py; docs/MODEL.md).
.PHONY: test-model
test-model: cli sim
	python3 scripts/model_gate.py

install: install-sim
.PHONY: install-sim
install-sim: sim
	install -d $(DESTDIR)$(SIM_LIBEXECDIR) $(DESTDIR)$(SIM_COSTDIR)
	install -m 0755 $(SIM) $(DESTDIR)$(SIM_LIBEXECDIR)/autograph-sim
	install -m 0644 $(wildcard bench/costs/*.json) $(DESTDIR)$(SIM_COSTDIR)/

# Regenerates the synthetic traces of tests/traces/ (committed, so the gate needs no
# generator; gzip -n: no name or time in the files).
SYNTH_PATTERNS := launch gpu gap irregular long
.PHONY: synthetic-traces
synthetic-traces: $(MKTRACE)
	@mkdir -p tests/traces
	set -e; for p in $(SYNTH_PATTERNS); do \
	    $(MKTRACE) $$p $(BUILD)/tests/$$p.agt; \
	    gzip -n -9 -c $(BUILD)/tests/$$p.agt > tests/traces/$$p.agt.gz; done

# bats/cpu_model.bats (part of make test-cpu) needs the simulator and the generator.
test-cpu: sim $(MKTRACE)
