# `make bench` (GPU machine): every workload eager / libautograph / hand-written graph.
BENCH_ARGS ?=
bench: lib apps
	python3 bench/run.py --build $(BUILD) $(BENCH_ARGS)
