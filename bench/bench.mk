# `make bench` (GPU machine): every workload eager / libautograph / hand-written graph.
BENCH_ARGS ?=
bench: lib apps
	python3 bench/run.py --build $(BUILD) $(BENCH_ARGS)

# `make bench-hotpath` (any machine, valgrind): the library's own instructions per launch, by
# state, on the CPU harness: deterministic, so commits compare exactly (bench/hotpath.py).
bench-hotpath: lib harness
	python3 bench/hotpath.py --build $(BUILD)
