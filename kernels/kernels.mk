# kernels/kernels.mk -- the self-checking sample CUDA apps (see kernels/README.md), included by
# the top-level Makefile.  `make apps` builds them all into $(BUILD)/kernels/; without nvcc it
# says so and succeeds.

KERNELS_OUT   := $(BUILD)/kernels
KERNELS_OBJ   := $(KERNELS_OUT)/obj
KERNELS_NVCC  := $(shell command -v $(NVCC) 2>/dev/null)

# sm_90 machine code plus compute_90 PTX for the driver to JIT on anything newer.
KERNELS_ARCH    ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
KERNELS_FLAGS   ?= -O2 -std=c++17 -Xcompiler -Wall,-Wextra,-pthread
KERNELS_LDFLAGS ?= -Xcompiler -pthread
# Shared CUDA libraries (libcudart.so, libcublas.so) are found without LD_LIBRARY_PATH.
KERNELS_RPATH   := -Xlinker -rpath=$(CUDA)/lib64
KERNELS_DEPS    := $(wildcard kernels/*.h) kernels/kernels.mk

# Apps linked against the static cudart (nvcc's default), one object each (thrust_loop: Thrust is
# header-only, CUDA's CCCL).
KERNELS_STATIC := tiny tiny-ptsz launch_ex multistream app_graphs capture_worker threads threads-ptsz spin graph_first \
                  heavy irregular lifetime solver pdl_decode grow_grid pipeline50 multigpu thrust_loop
# Driver API only (host C++, no cudart), and the apps linked with cuBLAS.
KERNELS_DRIVER := driver_api driver_api-ptsz first_launch modcopies
KERNELS_CUBLAS := cublas_loop cublas_async cublas_once
KERNELS_APPS   := $(KERNELS_STATIC) tiny-shared $(KERNELS_DRIVER) $(KERNELS_CUBLAS)
# bench/costs.cu: the replay model's cost table (docs/MODEL.md), cudart + the driver API.
KERNELS_BINS   := $(addprefix $(KERNELS_OUT)/,$(KERNELS_APPS)) \
                  $(KERNELS_OUT)/driver_kernels.fatbin $(KERNELS_OUT)/costs $(KERNELS_OUT)/attr_probe \
                  $(KERNELS_OUT)/node_update

.PHONY: apps

ifeq ($(KERNELS_NVCC),)
apps:
	@echo "apps: nvcc not found, sample apps not built"
else
apps: $(KERNELS_BINS)

$(KERNELS_OBJ)/%.o: kernels/%.cu $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(KERNELS_FLAGS) $(KERNELS_ARCH) -c $< -o $@

# The same sources built with per-thread default-stream semantics (stream 0 = per-thread).
$(KERNELS_OBJ)/%-ptsz.o: kernels/%.cu $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(KERNELS_FLAGS) $(KERNELS_ARCH) --default-stream per-thread -c $< -o $@

$(addprefix $(KERNELS_OUT)/,$(KERNELS_STATIC)): $(KERNELS_OUT)/%: $(KERNELS_OBJ)/%.o
	$(NVCC) $(KERNELS_ARCH) -cudart static $< -o $@ $(KERNELS_LDFLAGS)

$(KERNELS_OUT)/tiny-shared: $(KERNELS_OBJ)/tiny.o
	$(NVCC) $(KERNELS_ARCH) -cudart shared $< -o $@ $(KERNELS_LDFLAGS) $(KERNELS_RPATH)

$(addprefix $(KERNELS_OUT)/,$(KERNELS_CUBLAS)): $(KERNELS_OUT)/%: $(KERNELS_OBJ)/%.o
	$(NVCC) $(KERNELS_ARCH) -cudart static $< -o $@ $(KERNELS_LDFLAGS) $(KERNELS_RPATH) -lcublas

# Driver API only: host C++ (no cudart at all), libcuda's stub for linking only; at run time the
# driver's libcuda.so.1 is used.  The kernels are a fatbin loaded with cuModuleLoadData.
$(KERNELS_OBJ)/%.o: kernels/%.cpp $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(KERNELS_FLAGS) -c $< -o $@

$(KERNELS_OBJ)/driver_api-ptsz.o: kernels/driver_api.cpp $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(KERNELS_FLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -c $< -o $@

$(addprefix $(KERNELS_OUT)/,$(KERNELS_DRIVER)): $(KERNELS_OUT)/%: $(KERNELS_OBJ)/%.o
	$(NVCC) -cudart none $< -o $@ $(KERNELS_LDFLAGS) -L$(CUDA)/lib64/stubs -lcuda

$(KERNELS_OBJ)/costs.o: bench/costs.cu $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(KERNELS_FLAGS) $(KERNELS_ARCH) -c $< -o $@

$(KERNELS_OUT)/costs: $(KERNELS_OBJ)/costs.o
	$(NVCC) $(KERNELS_ARCH) -cudart static $< -o $@ $(KERNELS_LDFLAGS) -L$(CUDA)/lib64/stubs -lcuda

# kernels/attr_probe.cu: what the driver does with function attributes around graphs.
$(KERNELS_OUT)/attr_probe: $(KERNELS_OBJ)/attr_probe.o
	$(NVCC) $(KERNELS_ARCH) -cudart static $< -o $@ $(KERNELS_LDFLAGS) -L$(CUDA)/lib64/stubs -lcuda

# kernels/node_update.cu: what updating kernel nodes of an exec costs, by how a node names its
# kernel (CUfunction or CUkernel), and the graph launch after it.
$(KERNELS_OUT)/node_update: $(KERNELS_OBJ)/node_update.o
	$(NVCC) $(KERNELS_ARCH) -cudart static $< -o $@ $(KERNELS_LDFLAGS) -L$(CUDA)/lib64/stubs -lcuda

$(KERNELS_OUT)/driver_kernels.fatbin: kernels/driver_kernels.cu $(KERNELS_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(KERNELS_ARCH) -fatbin $< -o $@
endif
