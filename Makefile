# tessera - build, test and run. `make run` and `make test` are the two commands of the README.
#
# Finds nvcc on PATH or in /usr/local/cuda (CPU-only build without it, said once), stb in
# /usr/include/stb (override STB_INC=...), libjpeg-turbo, libspng and libdeflate through
# pkg-config, SDL2 through sdl2-config (viewer left out without it).
# Build outputs go to build/; header dependencies come from -MMD.

BUILD   ?= build

# Every core by default (nvcc takes minutes over the kernel files, each one a job); -jN or -j1 on
# the command line still decides. Only at the top: a sub-make (make run, make asan) shares the
# top's job slots, and a -j of its own would make it warn and leave the jobserver.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
JOBS = $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS)))
CC      ?= cc
CUDA    ?= /usr/local/cuda
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA)/bin/nvcc && echo $(CUDA)/bin/nvcc; })
STB_INC ?= /usr/include/stb
SDL_CONFIG ?= $(shell command -v sdl2-config 2>/dev/null)
CPU_ONLY_WHY ?= nvcc not found (PATH, $(CUDA)/bin)

# sm_90 machine code plus PTX that the driver compiles for older GPUs: compute_80 for Ampere and
# Ada (the driver picks the newest PTX a GPU can take: with compute_75 alone, an sm_80 GPU would
# get the kernels built without their sm_80 paths: mma, cp.async), compute_75 (nvcc 13's floor)
# for Turing.
GENCODE_ALL = -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80 \
              -gencode arch=compute_75,code=compute_75
GENCODE ?= $(GENCODE_ALL)
# The same targets with one device compile (cicc) per file and virtual arch instead of one per
# target: for most files cicc writes the same PTX for compute_75, 80 and 90 (only the .target
# line differs), and ptxas makes the same sm_90 code from either. So most files compile one
# compute_75 PTX, embedded as it is and turned into sm_90 by ptxas; files with sm_80 code paths
# (`#if __CUDA_ARCH__ >= 800`: mma.sync, cp.async: SM80_CU) one compute_80 PTX for sm_90 and
# for Ampere and Ada, plus a compute_75 one (their sm_80 kernels are empty there: cheap); files
# with sm_90 paths (thread block clusters), or whose compute_75 PTX gives other sm_90 code
# (geom.cu: cicc orders its shared-memory stores differently for compute_90), compile for
# compute_90 as before (SM90_CU). `python3 tools/sass_diff.py` between a build with
# PTX80_EVERYWHERE=1 and one without says whether a changed file needs to move to SM90_CU.
# A GENCODE given on the command line applies to every file as it is, and so does GENCODE_ALL
# with PTX80_EVERYWHERE=1.
SM80_CU = kernels/conv_pipe.cu kernels/conv_runsum.cu kernels/resize_mma.cu kernels/resize_mmai.cu $(wildcard kernels/conv_mma_k*.cu kernels/conv_mmapipe_k*.cu kernels/conv_mmasep_k*.cu kernels/conv_mmasep2.cu)
SM90_CU = kernels/hist.cu kernels/geom.cu kernels/clahe.cu kernels/clahe_cluster.cu kernels/hist_eq16_cluster.cu
ifeq ($(GENCODE)$(PTX80_EVERYWHERE),$(GENCODE_ALL))
  GENCODE_SM80 = -gencode arch=compute_80,code=sm_90 -gencode arch=compute_80,code=compute_80 \
                 -gencode arch=compute_75,code=compute_75
  GENCODE_SM90 = -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75
  GENCODE_PTX75 = -gencode arch=compute_75,code=sm_90 -gencode arch=compute_75,code=compute_75
else
  GENCODE_SM80 = $(GENCODE)
  GENCODE_SM90 = $(GENCODE)
  GENCODE_PTX75 = $(GENCODE)
endif
gencode_of = $(if $(filter $(SM80_CU),$1),$(GENCODE_SM80),$(if $(filter $(SM90_CU),$1),$(GENCODE_SM90),$(GENCODE_PTX75)))

WARN    = -Wall -Wextra -Wshadow -Wvla -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
override CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(WARN) -MMD -MP \
           -Ikernels $(APP_DIRS:%=-I%) -isystem $(STB_INC) $(CODEC_CFLAGS) $(HAVE_FORMATS) -pthread
# -lineinfo (source lines in compute-sanitizer's reports and Nsight Compute's source view) costs
# about 4% of the device compile and changes no machine code: tools/gpu_check.sh asks for it.
NVFLAGS ?= -O3
override NVFLAGS += -std=c++17 -Ikernels -MMD -MP -Xcompiler -Wall,-Wextra,-Wno-unused-parameter
# JPEG (libjpeg-turbo's libjpeg API) and PNG (libspng on zlib decodes; app/codec/png_write.c encodes
# with libdeflate, and with zlib for the largest images): `make deps` installs them.
CODEC_PKGS ?= libjpeg spng zlib libdeflate
# Photos: WebP (libwebp, its demux and mux libraries) and TIFF (libtiff).
PHOTO_PKGS ?= libwebp libwebpdemux libwebpmux libtiff-4
override CODEC_PKGS += $(PHOTO_PKGS)
# HEIC/HEIF and AVIF (libheif), JPEG XL (libjxl): optional; without them those files are refused
# as "not supported (built without ...)". `make deps` installs them.
ifneq ($(origin CODEC_LIBS),command line)
  ifeq ($(shell pkg-config --exists libheif 2>/dev/null && echo y),y)
    override CODEC_PKGS += libheif
    HAVE_FORMATS += -DTS_HAVE_HEIF
  endif
  ifeq ($(shell pkg-config --exists libjxl 2>/dev/null && echo y),y)
    override CODEC_PKGS += libjxl
    HAVE_FORMATS += -DTS_HAVE_JXL
  endif
endif
# CODEC_CFLAGS and CODEC_LIBS given on the command line replace pkg-config's answer (a machine
# without the -dev packages, with headers and libraries carried: tools/README.md).
CODEC_CFLAGS := $(shell pkg-config --cflags $(CODEC_PKGS) 2>/dev/null)
CODEC_LIBS := $(shell pkg-config --libs $(CODEC_PKGS) 2>/dev/null)
LDLIBS  = $(CODEC_LIBS) -lm -pthread -ldl
JPEG_LIBS ?=
ifeq ($(WERROR),1)
override CFLAGS  += -Werror
override NVFLAGS += -Werror all-warnings
endif
ifeq ($(VERBOSE_PTXAS),1)
override NVFLAGS += -Xptxas -v
endif

KERNEL_C = kernels/core.c kernels/ops.c kernels/filter.c kernels/ref.c kernels/registry.c kernels/pipeline.c \
           kernels/ref_resize.c kernels/ref_clahe.c $(CPU_C)
# The fast CPU variants: -O3 (GCC vectorizes at -O3; -O2 only the cheapest loops) and
# -fno-math-errno (sqrt as one instruction, vectorized: nothing reads errno), after CFLAGS so
# that it wins over the default -O2 (a sanitizer build's -O1 too: they are checked as they ship).
CPU_C    = kernels/cpu_pool.c kernels/cpu_conv.c kernels/cpu_geom.c kernels/cpu_hist.c kernels/cpu_resize.c
APP_DIRS = app app/common app/codec app/batch app/viewer
APP_C    = $(filter-out app/main.c,$(wildcard $(APP_DIRS:%=%/*.c)))
TEST_C   = $(wildcard tests/test_*.c) tests/tst.c tests/testutil.c tests/stb_png.c tests/jpeg_ref.c

ifneq ($(NVCC),)
  HAVE_CUDA = 1
  # the longest nvcc jobs first (make starts them in this order), so that the build does not end
  # waiting for one of them on a single core
  CU_FIRST = kernels/conv_mmapipe_k7.cu kernels/conv_roll.cu kernels/conv_pipe.cu \
             kernels/conv_mmapipe_k5.cu kernels/conv_mmapipe_k3.cu
  KERNEL_CU = $(wildcard $(CU_FIRST)) $(filter-out $(CU_FIRST),$(wildcard kernels/*.cu))
  override CFLAGS += -DTS_HAVE_CUDA -isystem $(CUDA)/include
  CUDA_LIBS = -L$(CUDA)/lib64 -lcudart_static -ldl -lrt -lstdc++
  # nvJPEG (app/codec/gpu_jpeg.c): the toolkit's header, else the one `make deps` unpacks from PyPI's
  # nvidia-nvjpeg wheel into .deps/nvjpeg; the library itself is loaded at run time (dlopen).
  NVJPEG_H := $(firstword $(wildcard $(CUDA)/include/nvjpeg.h $(CURDIR)/.deps/nvjpeg/include/nvjpeg.h))
  ifneq ($(NVJPEG_H),)
    override CFLAGS += -DTS_HAVE_NVJPEG -isystem $(dir $(NVJPEG_H)) \
      -DTS_NVJPEG_DIRS='"$(CUDA)/lib64:$(CURDIR)/.deps/nvjpeg/lib"'
  endif
else
  KERNEL_C += kernels/gpu_none.c
endif

ifneq ($(SDL_CONFIG),)
  override CFLAGS += -DTS_HAVE_SDL $(shell $(SDL_CONFIG) --cflags)
  SDL_LIBS = $(shell $(SDL_CONFIG) --libs)
endif

KOBJ = $(KERNEL_CU:%.cu=$(BUILD)/%.cu.o) $(KERNEL_C:%.c=$(BUILD)/%.o)
AOBJ = $(APP_C:%.c=$(BUILD)/%.o)
TOBJ = $(TEST_C:%.c=$(BUILD)/%.o)
LIBS = $(SDL_LIBS) $(CUDA_LIBS) $(LDLIBS)

.PHONY: app all deps run test test-gpu clean check-cuda asan fuzz memcheck install uninstall
# `make` builds the program (app); `make all` also the test binaries (make test, make asan and
# the GPU scripts build them through all). The kernel objects first: the nvcc jobs are the long
# ones, so make starts them before the C files.
.DEFAULT_GOAL := app
app: check-cuda $(KOBJ) $(BUILD)/tessera
all: app $(BUILD)/test_unit $(BUILD)/mkimage

check-cuda:
ifeq ($(HAVE_CUDA),)
	@echo "tessera: $(CPU_ONLY_WHY): building the CPU-only version" >&2
else
	@test -f $(BUILD)/libtessera.a || echo "tessera: the CUDA build (nvcc) takes a few minutes;" \
	  "make runs $(or $(JOBS),all) jobs at once (-jN to change)" >&2
endif
	@test -f $(STB_INC)/stb_image.h || { echo "tessera: $(STB_INC)/stb_image.h missing: run 'make deps' (libstb-dev)" >&2; exit 1; }
ifeq ($(origin CODEC_LIBS),file)
	@pkg-config --exists $(CODEC_PKGS) || { echo "tessera: libjpeg-turbo, libspng, libdeflate, libwebp or libtiff missing: run 'make deps' (libjpeg62-turbo-dev libspng-dev libdeflate-dev libwebp-dev libtiff-dev)" >&2; exit 1; }
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The unit that compiles stb_image: automatic variables start zeroed, so that a palette index past
# what a BMP defines reads black, never stack bytes (gcc >= 12; clang spells it with an extra flag).
STB_ZERO_INIT ?= $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),-ftrivial-auto-var-init=zero -enable-trivial-auto-var-init-zero-knowing-it-will-be-removed-from-clang,-ftrivial-auto-var-init=zero)
$(BUILD)/app/codec/image_io.o: override CFLAGS += $(STB_ZERO_INIT)

$(CPU_C:%.c=$(BUILD)/%.o): override CFLAGS += -O3 -fno-math-errno

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(call gencode_of,$<) -c $< -o $@

$(BUILD)/libtessera.a: $(KOBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tessera: $(BUILD)/app/main.o $(AOBJ) $(BUILD)/libtessera.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# `make check` style: tests link every source but main.c.
# tests/test_gpu_jpeg.c writes and decodes its JPEGs with libjpeg(-turbo) as the reference.
$(BUILD)/test_unit: $(TOBJ) $(AOBJ) $(BUILD)/libtessera.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JPEG_LIBS)

$(BUILD)/mkimage: $(BUILD)/tests/mkimage.o $(AOBJ) $(BUILD)/libtessera.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# Installs what is missing from Debian/Ubuntu packages (as root, through sudo, or prints the line).
deps:
	@sh tools/deps.sh

# Slurm (Debian's packages) and Ray Data (PyPI, into .deps/venv) for engines-check, which runs a
# real one-node Slurm job array and a local Ray over tessera (tests/engines.sh; each part skips
# where its engine is missing).
.PHONY: engines-deps engines-check
engines-deps:
	@sh tools/deps.sh --engines
engines-check: all
	@sh tests/engines.sh $(BUILD)

# deps before the build (make runs prerequisites in parallel), the build with every core.
run: deps
	@$(MAKE) --no-print-directory all
	@BIN=$(BUILD)/tessera sh tools/run.sh

test: all
	@sh tests/run_all.sh $(BUILD)

# GPU tests alone (on a machine with a GPU): fails instead of skipping when none is usable.
test-gpu: all
	TESSERA_REQUIRE_GPU=1 $(BUILD)/test_unit gpu

clean:
	rm -rf $(BUILD) out

# make install PREFIX=DIR (default /usr/local; DESTDIR for packaging): the binary, and the manual
# page that the binary prints from its own option and key tables (tessera --help-man).
PREFIX ?= /usr/local
install: app
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/tessera $(DESTDIR)$(PREFIX)/bin/tessera
	$(BUILD)/tessera --help-man >$(DESTDIR)$(PREFIX)/share/man/man1/tessera.1
	@echo "tessera: installed $(DESTDIR)$(PREFIX)/bin/tessera and its man page (man tessera)"
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tessera $(DESTDIR)$(PREFIX)/share/man/man1/tessera.1

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The benchmark and profiling rules live beside their tool.
-include $(wildcard tools/*.mk)

# ---- sanitizers and fuzzing (CPU code; see tests/fuzz/)
# make asan: every CPU test (unit, CLI, viewer) under AddressSanitizer + UBSan, CPU-only build.
# The viewer renders with SDL's software renderer there: SDL's default under X11 is OpenGL, whose
# Mesa driver (swrast_dri.so) leaks a block and is unloaded before LeakSanitizer reports it, so no
# suppression can name it (seen with Debian 12's Mesa, 2026-11-23).
ASAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
# use_sigaltstack=0: GCC 12's libasan reports a stack-buffer-overflow inside its own sigaltstack
# call when a worker thread exits (glibc 2.36's TSD teardown; seen in the full unit run at
# test_resize; the same before the HEIF/JXL libraries were linked): a sanitizer bug, not tessera's.
asan:
	$(MAKE) BUILD=build-asan NVCC= CPU_ONLY_WHY="make asan checks the host code" CFLAGS="$(ASAN_FLAGS)" all
	SDL_RENDER_DRIVER=software \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:use_sigaltstack=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$(CURDIR)/tests/ubsan.supp \
	sh tests/run_all.sh build-asan

# make fuzz: libFuzzer targets (clang, ASan + UBSan with every UB report fatal) for each decoder
# path (load: the whole loader; jpeg, png: the libjpeg-turbo and libspng paths; bmp tga gif psd
# pnm: stb's formats behind their guards; tiff webp exif ...), --ops and kernel files: load, tiff,
# webp, ops and kernel FUZZ_SECONDS each, the others a third of it (tests/fuzz/run.sh). The
# system's libjpeg-turbo and libspng are not instrumented: the targets check tessera's use of them.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11 \
             -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Ikernels $(APP_DIRS:%=-I%) -isystem $(STB_INC) \
             $(CODEC_CFLAGS) $(HAVE_FORMATS)
FUZZ_SRC = kernels/core.c kernels/ops.c kernels/filter.c kernels/ref.c kernels/ref_resize.c kernels/ref_clahe.c \
           kernels/registry.c kernels/pipeline.c $(CPU_C) \
           kernels/gpu_none.c app/codec/codec.c app/codec/image_io.c app/codec/image_save.c \
           app/codec/codec_jpeg.c app/codec/codec_png.c app/codec/png_write.c app/codec/codec_guard.c \
           app/common/util.c
FUZZ_OBJ = $(FUZZ_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
.SECONDARY: $(FUZZ_OBJ)
FUZZ_TARGETS = load jpeg png bmp tga gif psd pnm ops kernel
# WebP and TIFF decoders and the EXIF reader (the loader calls them too)
FUZZ_SRC += app/codec/exif.c app/codec/photo.c app/codec/codec_table.c app/codec/jpeg_meta.c app/codec/codec_webp.c app/codec/codec_tiff_write.c \
            app/codec/codec_heif.c app/codec/heif_coded.c app/codec/codec_jxl.c \
            app/codec/codec_tiff.c
FUZZ_TARGETS += exif webp tiff heif jxl
# Objects once for every target (instrumented, not linked with libFuzzer's main).
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS:-fsanitize=fuzzer,%=-fsanitize=fuzzer-no-link,%) $(FUZZ_EXTRA) -c -o $@ $<
$(BUILD)/fuzz/obj/app/codec/image_io.o: FUZZ_EXTRA = -ftrivial-auto-var-init=zero \
    -enable-trivial-auto-var-init-zero-knowing-it-will-be-removed-from-clang
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_format.h $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_OBJ) $(CODEC_LIBS) -lm -pthread
fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%) $(BUILD)/mkimage $(BUILD)/test_unit
	sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# make memcheck: valgrind on a headless batch over the assets (CPU-only build, cheap ops).
memcheck:
	$(MAKE) BUILD=build-cpu NVCC= CPU_ONLY_WHY="make memcheck checks the host code" all
	valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	  build-cpu/tessera --headless -q --force --backend cpu -j 2 -o $$(mktemp -d) \
	  --ops "sharpen,equalize,rotate:90,flip" assets
