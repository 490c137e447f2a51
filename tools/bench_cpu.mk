# tools/bench_cpu.mk - `make bench-cpu`: every CPU variant against the reference and OpenCV
# (python3-opencv), per op and for the chain, on one photo scaled to CPU_BENCH_MP megapixels,
# at 1 thread and at every core (tools/bench_cpu.py). Results: tools/results/cpu-DATE-Nt.md.
# CPU-only: `make bench-cpu BUILD=build-cpu NVCC=` works on a machine without CUDA.

CPU_BENCH_PHOTO   ?= assets/seeding_by_Clements_Engelhardt.jpg
CPU_BENCH_MP      ?= 16
CPU_BENCH_REPEATS ?= 7
CPU_BENCH_THREADS ?= 1 $(shell nproc 2>/dev/null || echo 1)
CPU_BENCH_PYTHON  ?= /usr/bin/python3

$(BUILD)/bench_cpu: $(BUILD)/tools/bench_cpu.o $(BUILD)/libtessera.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

.PHONY: bench-cpu
bench-cpu: $(BUILD)/bench_cpu
	@for t in $(sort $(CPU_BENCH_THREADS)); do \
	  $(CPU_BENCH_PYTHON) tools/bench_cpu.py $(BUILD)/bench_cpu $(CPU_BENCH_PHOTO) \
	    $(RESULTS)/cpu-$$(date -u +%Y-%m-%d)-$${t}t.md --threads $$t --mp $(CPU_BENCH_MP) \
	    --repeats $(CPU_BENCH_REPEATS) || exit 1; \
	done
