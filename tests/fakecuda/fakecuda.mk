# The CPU test harness: a fake CUDA driver (build/fakecuda/libcuda.so.1, soname libcuda.so.1)
# and the harness programs linked against it (build/harness/*), which bats/cpu_harness.bats
# runs with libautograph preloaded. Included by the top Makefile through tests/tests.mk; alone:
#     make -f Makefile -f tests/fakecuda/fakecuda.mk harness
# Uses $(CC), $(BUILD), $(CUDA) and $(CFLAGS) of the top Makefile.

FAKECUDA_DIR   := $(BUILD)/fakecuda
HARNESS_DIR    := $(BUILD)/harness
FAKECUDA_LIB   := $(FAKECUDA_DIR)/libcuda.so.1
FAKECUDA_SRCS  := $(wildcard tests/fakecuda/*.c)
FAKECUDA_HDRS  := $(wildcard tests/fakecuda/*.h)
HARNESS_COMMON := tests/harness/harness.c
HARNESS_SRCS   := $(filter-out $(HARNESS_COMMON),$(wildcard tests/harness/*.c))
HARNESS_BINS   := $(HARNESS_SRCS:tests/harness/%.c=$(HARNESS_DIR)/%)
FAKECUDA_FLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -I$(CUDA)/include -Itests/fakecuda

.PHONY: harness
harness: $(FAKECUDA_LIB) $(FAKECUDA_DIR)/libcuda.so $(HARNESS_BINS)

$(FAKECUDA_LIB): $(FAKECUDA_SRCS) $(FAKECUDA_HDRS) tests/fakecuda/fakecuda.mk
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_FLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -shared \
	    -Wl,-soname,libcuda.so.1 -Wl,-z,defs -o $@ $(FAKECUDA_SRCS) -lpthread

$(FAKECUDA_DIR)/libcuda.so: $(FAKECUDA_LIB)
	ln -sf libcuda.so.1 $@

$(HARNESS_DIR)/%: tests/harness/%.c $(HARNESS_COMMON) tests/harness/harness.h \
                  tests/fakecuda/fakecuda.h $(FAKECUDA_DIR)/libcuda.so tests/fakecuda/fakecuda.mk
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_FLAGS) -Itests/harness $(CFLAGS) -o $@ $< $(HARNESS_COMMON) \
	    -L$(FAKECUDA_DIR) -lcuda -Wl,-rpath,$(abspath $(FAKECUDA_DIR)) -ldl -lpthread
