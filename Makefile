# gpuprof — one plain Makefile, out-of-tree build in build/.
#   make                       library, analyzer, wrapper (the analyzer and
#                              wrapper alone when there is no CUDA toolkit)
#   make analyzer              the analyzer and wrapper alone: reads traces, needs no CUDA
#   make test                  unit + golden + GPU tests (GPU tests SKIP without a GPU)
#   make demo                  profile a bundled program (or report a bundled trace)
#   make SAN=address,undefined test
#   make install PREFIX=/usr/local     make uninstall PREFIX=/usr/local

CUDA_HOME ?= /usr/local/cuda
PREFIX ?= /usr/local
BUILD ?= build
CC ?= cc
NVCC ?= $(CUDA_HOME)/bin/nvcc
# sm_90 (H100/H200) SASS plus PTX so newer GPUs JIT.
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wundef -Wno-format-nonliteral
CFLAGS ?= -O2 -g
WERROR ?= -Werror
BASE_CFLAGS := -std=gnu11 $(WARN) $(WERROR) -Iinclude -D_GNU_SOURCE
ifneq ($(SAN),)
SAN_FLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
# Undefined behaviour stops the program (gcc's default is to report and go on): a test that
# runs a command sees its failure, not only a line on a standard error it may not show.
comma := ,
ifneq ($(filter undefined,$(subst $(comma), ,$(SAN))),)
SAN_FLAGS += -fno-sanitize-recover=undefined
endif
endif

# zstd is linked statically into the recorder, its symbols hidden.
ZSTD_A ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib/aarch64-linux-gnu/libzstd.a /usr/lib64/libzstd.a /usr/lib/libzstd.a))
# So is PCRE2 (regular expressions); the analyzer links libpcre2-8.
PCRE2_A ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libpcre2-8.a /usr/lib/aarch64-linux-gnu/libpcre2-8.a /usr/lib64/libpcre2-8.a /usr/lib/libpcre2-8.a))

LIB := $(BUILD)/lib/libgpuprof.so
ANALYZER := $(BUILD)/bin/gpuprof-analyze
WRAPPER := $(BUILD)/bin/gpuprof
# The driver of --dask (analyzer/cmd/dask.c runs it from beside the analyzer).
DASK_DRIVER := $(BUILD)/bin/gpuprof-dask.py
# gpuprof calibrate's micro-kernels (calibrate/): built when nvcc is there.
# sm_90a for wgmma on H100/H200, sm_80 SASS, and PTX so newer GPUs JIT.
CALIBRATE := $(if $(wildcard $(NVCC)),$(BUILD)/bin/gpuprof-calibrate)
CAL_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
	-gencode arch=compute_90,code=compute_90

REC_SRC := $(wildcard preload/*.c cupti/*.c)
REC_OBJ := $(REC_SRC:%.c=$(BUILD)/obj/%.o)
# CUPTI-free recorder parts that unit tests link directly.
REC_CORE_OBJ := $(filter $(BUILD)/obj/preload/%.o,$(REC_OBJ))
REC_CORE_OBJ := $(filter-out $(BUILD)/obj/preload/entry.o,$(REC_CORE_OBJ))
ANA_SRC := $(wildcard analyzer/*.c analyzer/*/*.c)
ANA_OBJ := $(ANA_SRC:%.c=$(BUILD)/obj/%.o)
ANA_LIB_OBJ := $(filter-out $(BUILD)/obj/analyzer/main.o,$(ANA_OBJ))

UNIT_SRC := $(wildcard test/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%)
UNIT_HELP_SRC := $(filter-out $(UNIT_SRC),$(wildcard test/unit/*.c))
UNIT_HELP_OBJ := $(UNIT_HELP_SRC:%.c=$(BUILD)/obj/%.o)

APP_SRC := $(wildcard test/apps/*.cu)
APP_BIN := $(APP_SRC:test/apps/%.cu=$(BUILD)/test/apps/%)
# Fault injection preloaded by the GPU tests (test/shims/gpfault.c).
SHIM := $(BUILD)/test/shims/libgpfault.so

# Each object's dependencies under both spellings of its path, relative and
# absolute: the test scripts run make with BUILD as an absolute path, and an
# object rebuilt there must still be rebuilt by a later `make` when a header
# changes (with one spelling only, the other saw no headers at all).
DEPFLAGS = -MMD -MP -MT '$@' -MT '$(abspath $@)' -MT '$(patsubst $(CURDIR)/%,%,$(abspath $@))'
# V=1 shows full commands.
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

.PHONY: all analyzer test unit apps demo install uninstall man clean bench bench-analyzer fuzz deps
# libunwind (call stacks) is loaded at run time; a copy beside the recorder
# makes the build tree and the install work on machines that lack it.
LIBUNWIND_SO ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libunwind.so.8 /usr/lib/aarch64-linux-gnu/libunwind.so.8 /usr/lib64/libunwind.so.8))
UNWIND_COPY := $(if $(LIBUNWIND_SO),$(BUILD)/lib/libunwind.so.8)
# libdw (elfutils), which names launch-site frames, is loaded by the analyzer
# at run time; copies of it and libelf in lib/ beside bin/ name frames on
# machines without elfutils (the analyzer runs without either).
LIBDW_SO ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libdw.so.1 /lib/x86_64-linux-gnu/libdw.so.1 /usr/lib/aarch64-linux-gnu/libdw.so.1 /usr/lib64/libdw.so.1))
LIBELF_SO ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libelf.so.1 /lib/x86_64-linux-gnu/libelf.so.1 /usr/lib/aarch64-linux-gnu/libelf.so.1 /usr/lib64/libelf.so.1))
DW_COPY := $(if $(and $(LIBDW_SO),$(LIBELF_SO)),$(BUILD)/lib/libdw.so.1 $(BUILD)/lib/libelf.so.1)

# Without a CUDA toolkit (no cupti.h) make builds what reads traces: the
# analyzer and the wrapper, as make analyzer does.
HAVE_CUDA := $(wildcard $(CUDA_HOME)/include/cupti.h)
ifneq ($(HAVE_CUDA),)
all: $(LIB) $(ANALYZER) $(WRAPPER) $(DASK_DRIVER) $(UNWIND_COPY) $(DW_COPY) $(CALIBRATE)
else
all: analyzer
	@echo "gpuprof: no CUDA toolkit at $(CUDA_HOME) (set CUDA_HOME): built the analyzer and wrapper only"
endif

analyzer: $(ANALYZER) $(WRAPPER) $(DASK_DRIVER) $(DW_COPY)

$(BUILD)/lib/libunwind.so.8: $(LIBUNWIND_SO)
	@mkdir -p $(@D)
	cp -L $< $@
$(BUILD)/lib/libdw.so.1: $(LIBDW_SO)
	@mkdir -p $(@D)
	cp -L $< $@
$(BUILD)/lib/libelf.so.1: $(LIBELF_SO)
	@mkdir -p $(@D)
	cp -L $< $@

deps:
	@bash scripts/ensure-deps.sh

# The recorder is built from objects of its own: position-independent,
# hidden by default (only the entry points are exported), never with
# sanitizers (it is loaded into uninstrumented programs).
# cupti/cshim first: an empty <string> for cupti_profiler_host.h (cupti/metrics.c).
REC_FLAGS := -fPIC -fvisibility=hidden -pthread -Icupti/cshim -I$(CUDA_HOME)/include -DGP_CUDA_HOME='"$(CUDA_HOME)"'
$(BUILD)/obj/preload/%.o: preload/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(REC_FLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BUILD)/obj/cupti/%.o: cupti/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(REC_FLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(LIB): $(REC_OBJ)
	@test -n "$(ZSTD_A)" || { echo "libzstd.a not found: run 'make deps' (needs libzstd-dev)"; exit 1; }
	@test -n "$(PCRE2_A)" || { echo "libpcre2-8.a not found: run 'make deps' (needs libpcre2-dev)"; exit 1; }
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -shared -o $@ $(REC_OBJ) \
		-Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,-z,nodelete $(ZSTD_A) $(PCRE2_A) -ldl -lpthread

# The trace reader decodes chunks on a second thread.
$(BUILD)/obj/analyzer/%.o: analyzer/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Ianalyzer -pthread $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

$(ANALYZER): $(ANA_OBJ)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -pthread -o $@ $^ -lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm

$(BUILD)/obj/calibrate/kernels.o: calibrate/kernels.cu calibrate/calibrate.h
	@mkdir -p $(@D)
	$(call msg,NVCC,$@)
	$(Q)$(NVCC) -std=c++17 -O3 $(CAL_ARCH) -c $< -o $@
$(BUILD)/obj/calibrate/calibrate.o: calibrate/calibrate.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -I$(CUDA_HOME)/include $(CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BUILD)/bin/gpuprof-calibrate: $(BUILD)/obj/calibrate/calibrate.o $(BUILD)/obj/calibrate/kernels.o
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(NVCC) -o $@ $^

$(WRAPPER): scripts/gpuprof
	@mkdir -p $(@D)
	cp $< $@ && chmod +x $@

$(DASK_DRIVER): scripts/gpuprof-dask.py
	@mkdir -p $(@D)
	cp $< $@ && chmod +x $@

$(BUILD)/obj/test/unit/%.o: test/unit/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Itest/unit -Ianalyzer -Ipreload -I$(CUDA_HOME)/include -pthread $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

# Unit tests link the analyzer library objects, CUPTI-free recorder objects
# (rebuilt with sanitizers) and the test helpers.
$(BUILD)/obj/san/preload/%.o: preload/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -pthread -I$(CUDA_HOME)/include $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@
# The NVTX tool and capture ranges need no CUPTI library: unit tests drive
# them through a stand-in NVTX (cupti_api.c only binds CUPTI when asked);
# the metrics cache is plain file handling; the GPU sampler binds CUPTI's PM
# sampling with dlsym, which test_gpusample answers with test/shims/fakepm.c;
# the detach between windows calls CUPTI through gp_cu (test_detach: fakecupti.c).
REC_CUPTI_TEST_OBJ := $(patsubst %,$(BUILD)/obj/san/cupti/%.o,nvtx_tool capture cupti_api guest mcache pystack telemetry gpusample detach)
$(REC_CUPTI_TEST_OBJ): $(BUILD)/obj/san/cupti/%.o: cupti/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -pthread -Icupti/cshim -I$(CUDA_HOME)/include $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@
REC_CORE_TEST_OBJ := $(REC_CORE_OBJ:$(BUILD)/obj/%=$(BUILD)/obj/san/%) $(REC_CUPTI_TEST_OBJ)
$(BUILD)/test/test_%: $(BUILD)/obj/test/unit/test_%.o $(UNIT_HELP_OBJ) $(ANA_LIB_OBJ) $(REC_CORE_TEST_OBJ)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -pthread -o $@ $^ -lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm

$(BUILD)/test/apps/%: test/apps/%.cu test/apps/common.h
	@mkdir -p $(@D)
	$(call msg,NVCC,$@)
	$(Q)$(NVCC) $(NVCC_ARCH) -O2 -lineinfo $(shell sed -n 's|^// NVCCFLAGS: ||p' $<) -o $@ $< \
		$(shell sed -n 's|^// LIBS: ||p' $<)

# A stand-in libcupti for test_guest (test/shims/fakecupti.c).
FAKECUPTI := $(BUILD)/test/shims/libfakecupti.so
$(FAKECUPTI): test/shims/fakecupti.c test/shims/fakecupti.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -I$(CUDA_HOME)/include -fPIC -shared -fvisibility=hidden $(CFLAGS) -o $@ $<

# A stand-in for CUDA and CUPTI's PM sampling, soname libcuda.so.1, for test_gpusample.
FAKEPM := $(BUILD)/test/shims/libfakepm.so
$(FAKEPM): test/shims/fakepm.c test/shims/fakepm.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Icupti/cshim -I$(CUDA_HOME)/include -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 $(CFLAGS) -o $@ $<

# A stand-in NVML, soname libnvidia-ml.so.1, for test_gpusample.
FAKENVML := $(BUILD)/test/shims/libfakenvml.so
$(FAKENVML): test/shims/fakenvml.c test/shims/fakenvml.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libnvidia-ml.so.1 $(CFLAGS) -o $@ $<

# A libcupti in front of the real one that refuses the counters (GPU tests).
CUPTIDENY := $(BUILD)/test/shims/libcuptideny.so
$(CUPTIDENY): test/shims/cuptideny.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -I$(CUDA_HOME)/include -I$(CUDA_HOME)/extras/CUPTI/include -fPIC -shared -fvisibility=hidden $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64:$(CUDA_HOME)/extras/CUPTI/lib64 -Wl,--no-as-needed -lcupti -ldl

# Preloaded into uninstrumented programs: never built with sanitizers.
$(SHIM): test/shims/gpfault.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -shared $(CFLAGS) -o $@ $< -ldl

# The Python frame reader alone, for test/unit/test_pystack.py (ctypes).
PYPROBE := $(BUILD)/test/libgppystack.so
$(PYPROBE): cupti/pystack.c cupti/pystack.h test/unit/py/pystack_probe.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -shared $(CFLAGS) -o $@ cupti/pystack.c test/unit/py/pystack_probe.c -ldl

apps: $(APP_BIN) $(SHIM) $(CUPTIDENY)

# The same reader in a program embedding a libpython loaded RTLD_LOCAL.
PYEMBED := $(BUILD)/test/pyembed_local
$(PYEMBED): cupti/pystack.c cupti/pystack.h test/unit/py/embed_local.c test/unit/tap.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -o $@ cupti/pystack.c test/unit/py/embed_local.c -ldl

unit: $(UNIT_BIN) $(SHIM) $(FAKECUPTI) $(FAKEPM) $(FAKENVML) $(PYPROBE) $(PYEMBED)
# test and demo check the dependencies first, then build in a sub-make that
# sees what was just installed (ZSTD_A is resolved when the Makefile is read).
test:
	@bash scripts/ensure-deps.sh
	@$(MAKE) --no-print-directory all unit apps
	@bash test/run-tests.sh $(BUILD)

# The demo builds only what it runs: on a GPU the recorder and one program,
# else the analyzer alone (it reports a bundled trace); in parallel unless
# make was given -j.
DEMO_GPU = $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && echo 1)
DEMO_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
demo:
	@bash scripts/ensure-deps.sh $(if $(DEMO_GPU),,analyzer)
	@$(MAKE) --no-print-directory $(DEMO_JOBS) $(ANALYZER) $(WRAPPER) \
		$(if $(DEMO_GPU),$(LIB) $(UNWIND_COPY) $(BUILD)/test/apps/demo)
	@bash scripts/demo.sh $(BUILD)

bench: all apps
	@bash bench/overhead.sh $(BUILD)

# The analyzer against the one-thread decompress+scan floor, no GPU needed
# (bench/analyzer.py says what it measures):
#   make bench-analyzer [BENCH_RECORDS=1e7] [BENCH_BIG=1] [BENCH_RANKS=16]
#                       [BENCH_REPEAT=3] [BENCH_JOBS="1 2 0"] [BENCH_ONLY=kern,mix,nvtx,ranks]
#                       [BENCH_EXPORTS=timeline,chrome,perfetto,csv]
BENCH_RECORDS ?= 1e7
BENCH_RANKS ?= 16
BENCH_REPEAT ?= 3
BENCH_JOBS ?= 1 2 0
BENCH_ONLY ?= kern,mix,nvtx,ranks
BENCH_EXPORTS ?= timeline,chrome,perfetto,csv
BENCH_ANA := $(BUILD)/bench/synth_trace $(BUILD)/bench/synth_job $(BUILD)/bench/scan_floor
$(BUILD)/bench/synth_trace $(BUILD)/bench/synth_job: $(BUILD)/bench/%: bench/%.c test/unit/synth.c test/unit/synth.h include/gpuprof/trace.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Itest/unit $(CFLAGS) -o $@ $< test/unit/synth.c -lzstd
$(BUILD)/bench/scan_floor: bench/scan_floor.c include/gpuprof/trace.h include/gpuprof/delta.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -lzstd
bench-analyzer: $(ANALYZER) $(BENCH_ANA)
	@python3 bench/analyzer.py --build $(BUILD) --records $(BENCH_RECORDS) \
		--ranks $(BENCH_RANKS) --repeat $(BENCH_REPEAT) --jobs "$(BENCH_JOBS)" \
		--only $(BENCH_ONLY) --exports "$(BENCH_EXPORTS)" $(if $(BENCH_BIG),--big) \
		$(if $(BENCH_OUT),--out $(BENCH_OUT))

# libFuzzer campaigns, FUZZ_SECONDS each: the reader, the model and every
# view; output templates and report options; the recorder's NVTX handlers
# and capture-range values; the recorder's side of the control socket;
# summaries (read, merged, reported).
#   make fuzz FUZZ_SECONDS=600
# Needs clang with libFuzzer; the corpus starts from the golden traces (and
# their summaries, whole and, with the zstd tool, as bodies), synthetic job
# traces and test_bounds' traces of ids far up.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
# Leaks are found input by input as libFuzzer runs them; the check at exit,
# after the last input, is left out: LeakSanitizer's stop-the-world tracer
# now and then crashes there ("Tracer caught signal 11", google/sanitizers
# issue 1353), which libFuzzer reports as a crash on an empty input.
FUZZ_RUN = ASAN_OPTIONS="$${ASAN_OPTIONS:+$$ASAN_OPTIONS:}leak_check_at_exit=0"
fuzz: $(ANALYZER) $(BUILD)/bench/synth_trace $(BUILD)/bench/synth_job $(BUILD)/test/test_bounds
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang with libFuzzer (apt-get install clang)"; exit 1; }
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ianalyzer -pthread -o $(BUILD)/fuzz/fuzz_reader \
		test/fuzz/fuzz_reader.c $(filter-out analyzer/main.c,$(ANA_SRC)) -lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ianalyzer -Ipreload -pthread -o $(BUILD)/fuzz/fuzz_options \
		test/fuzz/fuzz_options.c $(filter-out analyzer/main.c,$(ANA_SRC)) preload/config.c preload/log.c \
		-lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ipreload -I$(CUDA_HOME)/include -pthread \
		-o $(BUILD)/fuzz/fuzz_nvtx test/fuzz/fuzz_nvtx.c cupti/nvtx_tool.c cupti/capture.c \
		cupti/cupti_api.c $(filter-out preload/entry.c,$(wildcard preload/*.c)) -lzstd -ldl
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ianalyzer -pthread -o $(BUILD)/fuzz/fuzz_symbolize \
		test/fuzz/fuzz_symbolize.c $(filter-out analyzer/main.c,$(ANA_SRC)) -lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm -ldl
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ipreload -pthread -o $(BUILD)/fuzz/fuzz_control \
		test/fuzz/fuzz_control.c preload/ctlserver.c preload/log.c -ldl
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Ianalyzer -pthread -o $(BUILD)/fuzz/fuzz_summary \
		test/fuzz/fuzz_summary.c $(filter-out analyzer/main.c,$(ANA_SRC)) -lzstd -lpcre2-8 -lsqlite3 -lz -lstdc++ -lm
	cp test/golden/*.gpuprof $(BUILD)/fuzz/corpus/
	for f in test/golden/*/*.gpuprof; do cp "$$f" "$(BUILD)/fuzz/corpus/$$(basename "$$(dirname "$$f")")-$$(basename "$$f")"; done
	@# Ranges announced open (GP_REC_NVTX_OPEN): steps, and a range around everything;
	@# NCCL's ranges beside the steps (ranges that do not nest).
	$(BUILD)/bench/synth_job --open 3000 $(BUILD)/fuzz/corpus/announced.gpuprof >/dev/null
	$(BUILD)/bench/synth_job --nccl --autograd 3000 $(BUILD)/fuzz/corpus/nccl.gpuprof >/dev/null
	@# Steps on 12 threads: the fold's threads by map, their readiness read once a run.
	$(BUILD)/bench/synth_job --threads 12 6000 $(BUILD)/fuzz/corpus/threads.gpuprof >/dev/null
	@# Every id far up (test_bounds' far1, far2): strings, correlation, stacks, graphs, NVTX.
	rm -rf $(BUILD)/fuzz/bounds && mkdir -p $(BUILD)/fuzz/bounds
	$(BUILD)/test/test_bounds --write $(BUILD)/fuzz/bounds
	cp $(BUILD)/fuzz/bounds/far1.gpuprof $(BUILD)/fuzz/bounds/far2.gpuprof $(BUILD)/fuzz/corpus/
	rm -rf $(BUILD)/fuzz/bounds
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=1048576 -rss_limit_mb=4096 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus
	@mkdir -p $(BUILD)/fuzz/corpus-options
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_options -max_total_time=$(FUZZ_SECONDS) -max_len=512 -rss_limit_mb=4096 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus-options
	@mkdir -p $(BUILD)/fuzz/corpus-nvtx
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_nvtx -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -rss_limit_mb=4096 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus-nvtx
	@mkdir -p $(BUILD)/fuzz/corpus-symbolize
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_symbolize -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus-symbolize
	@mkdir -p $(BUILD)/fuzz/corpus-control
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_control -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -rss_limit_mb=4096 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus-control
	@mkdir -p $(BUILD)/fuzz/corpus-summary
	@cp test/summary/v4-demo.sum $(BUILD)/fuzz/corpus-summary/
	@! command -v zstd >/dev/null || { printf '\001'; tail -c +33 test/summary/v4-demo.sum | zstd -dcq; } \
		>$(BUILD)/fuzz/corpus-summary/v4-demo.body
	@for g in test/golden/*.gpuprof test/golden/ranks_nccl/*.gpuprof; do \
		n=$(BUILD)/fuzz/corpus-summary/$$(basename $$g .gpuprof); \
		$(ANALYZER) summarize -o $$n.sum $$g 2>/dev/null || continue; \
		! command -v zstd >/dev/null || { printf '\000'; tail -c +33 $$n.sum | zstd -dcq; } >$$n.body; done
	@# A trace of more busy intervals than a summary carries: its rows' busy time and span instead.
	@$(BUILD)/bench/synth_trace --same 9000 $(BUILD)/fuzz/gappy.gpuprof 2>/dev/null && \
		$(ANALYZER) summarize -o $(BUILD)/fuzz/corpus-summary/gappy.sum $(BUILD)/fuzz/gappy.gpuprof && \
		{ ! command -v zstd >/dev/null || { printf '\000'; tail -c +33 $(BUILD)/fuzz/corpus-summary/gappy.sum | \
		zstd -dcq; } >$(BUILD)/fuzz/corpus-summary/gappy.body; }
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_summary -max_total_time=$(FUZZ_SECONDS) -max_len=1048576 -rss_limit_mb=2048 \
		-timeout=10 -close_fd_mask=2 -artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus-summary

# Man pages, one per command, made from the --help texts (scripts/mkman.sh);
# the commands are those gpuprof --help lists (calibrate when it is built).
GP_VERSION = $(shell sed -n 's/^\#define GA_VERSION "\(.*\)"/\1/p' analyzer/version.h)
MAN_CMDS = $(filter-out $(if $(CALIBRATE),,calibrate),$(shell bash scripts/gpuprof --help | \
	sed -n '/^Commands:/,/^$$/p' | awk '/^  [a-z]/ { print $$1 }'))
MAN_PAGES = $(BUILD)/man/gpuprof.1 $(MAN_CMDS:%=$(BUILD)/man/gpuprof-%.1)
man: $(ANALYZER) $(WRAPPER) $(CALIBRATE) scripts/mkman.sh
	@mkdir -p $(BUILD)/man
	$(call msg,MAN,$(BUILD)/man)
	$(Q)bash scripts/mkman.sh $(BUILD)/man/gpuprof.1 gpuprof $(GP_VERSION) $(WRAPPER)
	$(Q)for c in $(MAN_CMDS); do \
		bash scripts/mkman.sh $(BUILD)/man/gpuprof-$$c.1 gpuprof-$$c $(GP_VERSION) \
			$(WRAPPER) $$c || exit 1; \
	done

# Installed: the programs in bin/; the recorder and every library gpuprof
# copies (libunwind, libdw, libelf) in lib/gpuprof/, where the loader never
# looks for other programs (the recorder finds libunwind beside itself, the
# analyzer libdw in ../lib/gpuprof/, the wrapper the recorder there); man
# pages, bash completion and the documentation under share/.
GP_LIBDIR = $(PREFIX)/lib/gpuprof
MANDIR = $(PREFIX)/share/man/man1
DOCDIR = $(PREFIX)/share/doc/gpuprof
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
INSTALL_LIBS = $(if $(HAVE_CUDA),$(LIB) $(UNWIND_COPY)) $(DW_COPY)
install: all man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(if $(strip $(INSTALL_LIBS)),$(DESTDIR)$(GP_LIBDIR))
	install -m 755 $(ANALYZER) $(WRAPPER) $(DASK_DRIVER) $(CALIBRATE) $(DESTDIR)$(PREFIX)/bin/
	$(if $(strip $(INSTALL_LIBS)),install -m 755 $(INSTALL_LIBS) $(DESTDIR)$(GP_LIBDIR)/)
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -m 644 scripts/gpuprof-completion.bash $(DESTDIR)$(BASHCOMPDIR)/gpuprof

# Removes what install put there (and lib/libgpuprof.so, where earlier
# versions put the recorder), then the directories it leaves empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,gpuprof gpuprof-analyze gpuprof-calibrate gpuprof-dask.py)
	rm -f $(DESTDIR)$(PREFIX)/lib/libgpuprof.so
	rm -rf $(DESTDIR)$(GP_LIBDIR) $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(MANDIR)/gpuprof.1 $(DESTDIR)$(MANDIR)/gpuprof-*.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/gpuprof
	-rmdir --ignore-fail-on-non-empty $(addprefix $(DESTDIR)$(PREFIX)/,bin lib share/man/man1 \
		share/man share/doc share/bash-completion/completions share/bash-completion share) \
		2>/dev/null

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
