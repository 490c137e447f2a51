# tools/bench.mk - the benchmark's make rules, included by the main Makefile (its last line).
# Nothing in `make all` depends on them; they reuse its variables (CUDA, NVCC, NVFLAGS, CFLAGS,
# BUILD, STB_INC...), so whatever is passed to make on the command line reaches them too.
#
#   make build/bench        build the benchmark (nvcc; links build/libtessera.a)
#   make bench              full run: tools/results/<device>.md, .csv and .png (with
#                           torchvision's equalize appended by tools/bench_torch.py)
#   make bench-quick        --quick run: tools/results/<device>-quick.md, .csv and .png
#   make profile OP=transpose VARIANT=padded [SIZE=8k] [FORMAT=rgba8]
#                           Nsight Compute on the timed runs of one variant
#
# Vendor baselines are detected here, never required: cuDNN (cudnn.h and libcudnn) defines
# TS_HAVE_CUDNN, NPP (npp.h and the five libraries below) TS_HAVE_NPP; CUB is header-only in CUDA.
# Override the search with CUDNN_INC/CUDNN_LIB, NPP_INC/NPP_LIB, or turn one off: CUDNN=0, NPP=0.

BENCH        := $(BUILD)/bench
BENCH_CU     := $(wildcard tools/bench*.cu)
BENCH_C      := $(filter-out tools/bench_cpu.c,$(wildcard tools/bench*.c))
BENCH_OBJ    := $(BENCH_CU:%.cu=$(BUILD)/%.cu.o) $(BENCH_C:%.c=$(BUILD)/%.o)
RESULTS      ?= tools/results
PYTHON       ?= python3
BENCH_ARGS   ?=
NCU          ?= $(or $(shell command -v ncu 2>/dev/null),$(wildcard $(CUDA)/bin/ncu))
NCU_METRICS  ?= l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum
SIZE         ?= 8k
BENCH_TRIPLE := $(shell $(CC) -dumpmachine 2>/dev/null)

# A library file: the development link (libX.so) or, without the -dev package, the versioned one.
bench_lib = $(firstword $(wildcard $(addsuffix /lib$(1).so,$(2))) \
                        $(wildcard $(addsuffix /lib$(1).so.[0-9]*,$(2))))

ifneq ($(CUDNN),0)
  CUDNN_INC ?= $(patsubst %/,%,$(dir $(firstword $(wildcard $(CUDA)/include/cudnn.h \
                 /usr/include/cudnn.h /usr/include/$(BENCH_TRIPLE)/cudnn.h))))
  CUDNN_SO  := $(call bench_lib,cudnn,$(or $(CUDNN_LIB),$(CUDA)/lib64 $(CUDA)/lib \
                 /usr/lib/$(BENCH_TRIPLE) /usr/lib64 /usr/lib))
endif
ifneq ($(NPP),0)
  NPP_INC   ?= $(CUDA)/include
  NPP_LIB   ?= $(CUDA)/lib64
  NPP_SOS   := $(foreach l,nppc nppidei nppif nppig nppist,$(call bench_lib,$(l),$(NPP_LIB)))
endif

BENCH_DEFS :=
BENCH_LIBS :=
ifneq ($(and $(CUDNN_INC),$(CUDNN_SO)),)
  BENCH_DEFS += -DTS_HAVE_CUDNN -isystem $(CUDNN_INC)
  BENCH_LIBS += $(CUDNN_SO) -Xlinker -rpath,$(dir $(CUDNN_SO))
endif
ifeq ($(and $(wildcard $(NPP_INC)/npp.h),$(word 5,$(NPP_SOS))),)
else
  BENCH_DEFS += -DTS_HAVE_NPP -isystem $(NPP_INC)
  BENCH_LIBS += $(NPP_SOS) -Xlinker -rpath,$(NPP_LIB)
endif

.PHONY: bench bench-quick profile bench-info

# The objects are built by the main Makefile's pattern rules, with these flags added.
$(BENCH_OBJ): NVFLAGS += -Itools -Iapp/common $(BENCH_DEFS)
$(BENCH_OBJ): CFLAGS += -Itools
# The rpath is an old-style DT_RPATH (--disable-new-dtags below): the dynamic linker also uses it
# for the sub-libraries that libcudnn loads with dlopen, which a DT_RUNPATH would not reach.
# A change of what was detected must rebuild the vendor files.
$(BUILD)/tools/bench.flags: FORCE_BENCH_FLAGS
	@mkdir -p $(dir $@)
	@echo '$(BENCH_DEFS) $(BENCH_LIBS)' | cmp -s - $@ || echo '$(BENCH_DEFS) $(BENCH_LIBS)' > $@
$(BENCH_CU:%.cu=$(BUILD)/%.cu.o): $(BUILD)/tools/bench.flags
.PHONY: FORCE_BENCH_FLAGS

ifneq ($(HAVE_CUDA),)
$(BENCH): $(BENCH_OBJ) $(BUILD)/app/common/kernel_file.o $(BUILD)/libtessera.a
	$(NVCC) -o $@ $(BENCH_OBJ) $(BUILD)/app/common/kernel_file.o $(BUILD)/libtessera.a $(BENCH_LIBS) -ldl -lrt -lm -lpthread \
	  -Xlinker --disable-new-dtags
else
$(BENCH):
	@echo "bench: needs nvcc (PATH or $(CUDA)/bin): the benchmark is CUDA" >&2; exit 1
endif

bench-info:
	@echo "bench: cuDNN: $(if $(findstring TS_HAVE_CUDNN,$(BENCH_DEFS)),$(CUDNN_INC) $(CUDNN_SO),not found)"
	@echo "bench: NPP: $(if $(findstring TS_HAVE_NPP,$(BENCH_DEFS)),$(NPP_INC) $(NPP_SOS),not found)"

# The device's name makes the file names, so results of several GPUs can sit side by side.
bench: $(BENCH) bench-info
	@mkdir -p $(RESULTS)
	@slug=$$($(BENCH) --slug) || exit 1; \
	echo "$(BENCH) --md $(RESULTS)/$$slug.md --csv $(RESULTS)/$$slug.csv $(BENCH_ARGS)"; \
	$(BENCH) --md $(RESULTS)/$$slug.md --csv $(RESULTS)/$$slug.csv $(BENCH_ARGS) || exit $$?; \
	$(PYTHON) tools/bench_torch.py --csv $(RESULTS)/$$slug.csv --md $(RESULTS)/$$slug.md || \
	  echo "bench: tools/bench_torch.py failed: no torchvision rows" >&2; \
	$(PYTHON) tools/chart.py $(RESULTS)/$$slug.csv -o $(RESULTS)/$$slug.png

bench-quick: $(BENCH) bench-info
	@mkdir -p $(RESULTS)
	@slug=$$($(BENCH) --slug)-quick || exit 1; \
	echo "$(BENCH) --quick --md $(RESULTS)/$$slug.md --csv $(RESULTS)/$$slug.csv $(BENCH_ARGS)"; \
	$(BENCH) --quick --md $(RESULTS)/$$slug.md --csv $(RESULTS)/$$slug.csv $(BENCH_ARGS) || exit $$?; \
	$(PYTHON) tools/bench_torch.py --sizes 8k,1080p --csv $(RESULTS)/$$slug.csv \
	  --md $(RESULTS)/$$slug.md || echo "bench: tools/bench_torch.py failed: no torchvision rows" >&2; \
	$(PYTHON) tools/chart.py $(RESULTS)/$$slug.csv -o $(RESULTS)/$$slug.png

# Only the timed runs are profiled (the NVTX range ts_timed/), not the check, the warm-up or the
# L2 flush; --clock-control none leaves the clocks as the benchmark saw them.
profile: $(BENCH)
	@test -n "$(OP)" -a -n "$(VARIANT)" || { echo "usage: make profile OP=op VARIANT=name [SIZE=8k] [FORMAT=rgba8]" >&2; exit 2; }
	@test -n "$(NCU)" || { echo "profile: ncu not found (PATH, $(CUDA)/bin)" >&2; exit 1; }
	$(NCU) --clock-control none --nvtx --nvtx-include "ts_timed/" --metrics $(NCU_METRICS) \
	  $(BENCH) --op $(OP) --variant $(VARIANT) --size $(SIZE) $(if $(FORMAT),--format $(FORMAT)) \
	  --runs 1 --no-vendor

# ---- make bench-batch (GPU machine): batch conversion against OpenCV and torchvision, and the
# nvJPEG module alone (build/nvjpeg_bench). The corpus: tools/bench_batch_corpus.py makes it from
# Debian's lomiri-wallpapers-16.04 into .carry/corpus (see tools/bench_batch.sh).
BATCH_OUT ?= out/bench-batch
ifneq ($(HAVE_CUDA),)
$(BUILD)/nvjpeg_bench: $(BUILD)/tools/nvjpeg_bench.o $(BUILD)/tests/jpeg_ref.o \
                       $(BUILD)/app/codec/gpu_jpeg.o $(BUILD)/app/codec/gpu_jpeg_decode.o \
                       $(BUILD)/app/codec/gpu_jpeg_warm.o \
                       $(BUILD)/app/codec/jpeg_meta.o $(BUILD)/app/codec/codec.o \
                       $(BUILD)/app/common/kernel_file.o $(BUILD)/libtessera.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JPEG_LIBS)
else
$(BUILD)/nvjpeg_bench:
	@echo "nvjpeg_bench: needs nvcc (PATH or $(CUDA)/bin): it measures nvJPEG on the GPU" >&2; exit 1
endif
.PHONY: bench-batch
bench-batch: all $(BUILD)/nvjpeg_bench
	BUILD=$(BUILD) PYTHON=$(PYTHON) sh tools/bench_batch.sh $(BATCH_OUT)
