# hybridscope build. `make` builds build/hybridscope; `make test` runs every test;
# `make test SAN=1` runs them under ASan+UBSan (separate build dir).

CC      ?= gcc
SAN     ?= 0
OPT     ?= -O2
BUILD   := build
ifeq ($(SAN),1)
BUILD   := build-san
OPT     := -O1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

PKGS_CORE := libcjson openblas
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS_CORE) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS_CORE) 2>/dev/null)

# UI libraries: used when present (views need cairo; gui needs SDL2; tui needs ncursesw).
HAVE_CAIRO := $(shell pkg-config --exists cairo && echo 1)
HAVE_SDL2  := $(shell pkg-config --exists sdl2 && echo 1)
HAVE_NCURSES := $(shell pkg-config --exists ncursesw && echo 1)

CFLAGS  := -std=c11 $(OPT) -g -Wall -Wextra -Werror -D_GNU_SOURCE -fopenmp -I. -Iengine -Ikernels $(PKG_CFLAGS) $(SANFLAGS)
LDLIBS  := $(PKG_LIBS) -lm -lpthread -ldl -fopenmp $(SANFLAGS)

ENGINE_SRC := $(wildcard engine/*.c)
KERNEL_SRC := $(wildcard kernels/cpu/*.c)
VIEWS_SRC  := $(wildcard views/*.c)
APP_SRC    := $(wildcard app/*.c)
TEST_SRC   := $(wildcard tests/*.c)

UI_CFLAGS :=
UI_LIBS   :=
ifeq ($(HAVE_CAIRO),1)
UI_CFLAGS += -DHS_HAVE_CAIRO $(shell pkg-config --cflags cairo)
UI_LIBS   += $(shell pkg-config --libs cairo)
endif
ifeq ($(HAVE_SDL2),1)
UI_CFLAGS += -DHS_HAVE_SDL2 $(shell pkg-config --cflags sdl2)
UI_LIBS   += $(shell pkg-config --libs sdl2)
endif
ifeq ($(HAVE_NCURSES),1)
UI_CFLAGS += -DHS_HAVE_NCURSES $(shell pkg-config --cflags ncursesw)
UI_LIBS   += $(shell pkg-config --libs ncursesw)
endif

# CUDA backend: a plugin (build/libhs_cuda.so) that the program dlopens at run time, so the
# binary starts (and says "no CUDA device") where the CUDA libraries are missing.
NVCC ?= $(shell command -v nvcc 2>/dev/null)
CUDA_SRC := $(strip $(wildcard kernels/cuda/*.cu) $(wildcard engine/cuda/*.cu))
# (sm_90a: the machine code with Hopper's wgmma, used by kernels/cuda/attention_wg.cu only)
# (-Werror all-warnings: nvcc's own front-end warnings, e.g. #179-D, fail the build as the host's do)
NVCCFLAGS := -O3 -std=c++17 -Werror all-warnings -Xcompiler -fPIC,-Wall,-Wextra,-Werror -I. -Iengine -Ikernels \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a \
             -gencode arch=compute_90,code=compute_90
CUDA_LIB := $(BUILD)/libhs_cuda.so
ifneq ($(NVCC),)
ifneq ($(CUDA_SRC),)
BACKENDS := cpu cuda
CUDA_TARGET := $(CUDA_LIB)
else
BACKENDS := cpu
endif
else
BACKENDS := cpu
endif

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(KERNEL_SRC:%.c=$(BUILD)/%.o)
VIEWS_OBJ  := $(VIEWS_SRC:%.c=$(BUILD)/%.o)
APP_OBJ    := $(APP_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all test deps clean bench bench-cpu bench-gpu fuzz test-gpu
all: $(BUILD)/hybridscope $(CUDA_TARGET)
	@echo "hybridscope: built backends: $(BACKENDS) ($(BUILD)/hybridscope)"

# Objects remember the configuration they were compiled with (compiler, flags, the UI libraries
# found): a build/ made where ncurses exists and built again where it does not (carried to the
# GPU machine) recompiles rather than linking objects that call ncurses without -lncursesw.
HS_CONFIG := $(CC) $(CFLAGS) $(UI_CFLAGS) | $(LDLIBS) $(UI_LIBS)
$(BUILD)/config.stamp: FORCE
	@mkdir -p $(BUILD); echo '$(HS_CONFIG)' | cmp -s - $@ || echo '$(HS_CONFIG)' > $@
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/config.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(UI_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/hybridscope: $(APP_OBJ) $(VIEWS_OBJ) $(ENGINE_OBJ)
	$(CC) -o $@ $^ $(LDLIBS) $(UI_LIBS)

# Unit tests also link the app's library code (the explorer's controller...), not its commands.
TEST_APP_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(filter-out app/main.c app/cmd_%.c,$(APP_SRC)))

$(BUILD)/hs_tests: $(TEST_OBJ) $(TEST_APP_OBJ) $(VIEWS_OBJ) $(ENGINE_OBJ)
	$(CC) -o $@ $^ $(LDLIBS) $(UI_LIBS)

$(CUDA_LIB): $(CUDA_SRC) $(wildcard kernels/cuda/*.cuh) $(wildcard engine/cuda/*.cuh) $(wildcard engine/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -shared -Xlinker -z,defs -o $@ $(CUDA_SRC) -lcublas -lcublasLt

# T=pattern runs only tests whose name contains pattern.
test: $(BUILD)/hybridscope $(BUILD)/hs_tests $(CUDA_TARGET)
	@HS_BUILD=$(BUILD) HS_SAN=$(SAN) bash tests/run.sh $(T)

deps:
	@bash .ci/deps.sh

bench: bench-cpu

bench-cpu: $(BUILD)/hybridscope
	@bash tests/bench/bench_cpu.sh $(BUILD)

bench-gpu: $(BUILD)/hybridscope $(CUDA_TARGET)
	@bash tests/bench/bench_gpu.sh $(BUILD)

FUZZ_SECONDS ?= 60
fuzz:
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-san build-fuzz

-include $(ENGINE_OBJ:.o=.d) $(VIEWS_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_OBJ:.o=.d)
