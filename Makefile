# cuprobe - one Makefile for the shim, the analyzer, the fake driver and tests.
#
#   make            build everything into build/
#   make test       build, then run the quick tier of the CI tests (make check-long: the long one)
#   make demo       run a bundled program on the fake driver and print a report
#   make install PREFIX=/usr/local     make uninstall PREFIX=/usr/local
#   make wheel      dist/cuprobe-VERSION-py3-none-PLATFORM.whl (pip install it)
#   make help       every target, from the "## target: what" comments below
#   make SAN=address,undefined   or   make SAN=thread   (sanitizer builds into build-san-*/)
#   V=1             show commands (libunwind's build too)
#   DEBUG=1         -Werror (CI sets it); a user's CFLAGS are appended, never replaced
#   LTO=0           link the shim and the analyzer without link-time optimisation (quicker relinks)

# The version of the shim, the analyzer and the front end: here only.
VERSION := 0.1.0

PREFIX  ?= /usr/local
CC      ?= gcc
Q       := $(if $(filter 1,$(V)),,@)
SAN     ?=
B       ?= $(if $(SAN),build-san-$(subst $(comma),-,$(SAN)),build)
comma   := ,

# -Werror only when asked (CI, DEBUG=1): a newer gcc's new warning must not
# break a user's build.
WERROR  := $(if $(filter 1,$(DEBUG)),-Werror,)
WARN    := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-missing-field-initializers
OPT     ?= -O2 -g
# Link-time optimisation of the shim and the analyzer (never in sanitizer
# builds); LTO=0 turns it off.
LTO     ?= 1
SANFLAGS:= $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer,)
override CFLAGS := -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -Iinclude \
           -DCP_VERSION='"$(VERSION)"' $(SANFLAGS) $(EXTRA_CFLAGS) $(CFLAGS)
DEPFLAGS = -MMD -MP
QUIET   := $(if $(filter 1,$(V)),,>/dev/null)

# --- vendored libunwind, built position-independent so it can live inside
# --- libcuprobe.so (Debian's libunwind.a is not PIC).
UNW_VER := 1.6.2
UNW_DIR := $(B)/libunwind-$(UNW_VER)
UNW_LIB := $(UNW_DIR)/src/.libs/libunwind.a
UNW_INC := $(UNW_DIR)/include
ZSTD_A  := $(shell $(CC) -print-file-name=libzstd.a)

# Sources live in one folder per stage (interpose/hooks, analyzer/checks...);
# each side sees its own folders and include/, never the other side's.
SHIM_DIRS := $(sort $(dir $(wildcard interpose/*/*.c)))
SHIM_INC  := $(patsubst %/,-I%,$(SHIM_DIRS))
# The analyzer's folders, lowest first.  A file sees the headers of its own
# folder, of the folders before it and of include/, so a lower stage cannot
# reach into a higher one; analyzer/*.c (the top, ".") sees every folder.
# doctor/ stands beside the stages and sees util/ only.  tests/sh/layering.sh
# reads these two lines and checks every #include and call against them.
ANA_ORDER  := util symbols decode model checks render
ANA_DOCTOR := util
ana_upto    = $(if $(2),$(firstword $(2)) $(if $(filter $(1),$(firstword $(2))),,$(call ana_upto,$(1),$(wordlist 2,99,$(2)))))
ana_sees    = $(if $(filter doctor,$(1)),$(ANA_DOCTOR) doctor,$(if $(filter .,$(1)),$(ANA_ORDER) doctor .,$(call ana_upto,$(1),$(ANA_ORDER))))
# The folder of analyzer source $(1): "checks", or "." for analyzer/*.c.
ana_dir     = $(if $(filter %.c,$(word 2,$(subst /, ,$(1)))),.,$(word 2,$(subst /, ,$(1))))
ana_inc     = $(patsubst %,-Ianalyzer/%,$(call ana_sees,$(1)))
ANA_INC    := $(call ana_inc,.)
SHIM_SRC := $(wildcard interpose/*/*.c)
SHIM_OBJ := $(patsubst %.c,$(B)/%.o,$(SHIM_SRC))
ANA_SRC  := $(wildcard analyzer/*.c analyzer/*/*.c)
ANA_OBJ  := $(patsubst %.c,$(B)/%.o,$(ANA_SRC))
FAKE_SRC := $(filter-out tests/fakecuda/fakenvml.c,$(wildcard tests/fakecuda/*.c))
FAKE_OBJ := $(patsubst %.c,$(B)/%.o,$(FAKE_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
PROG_SRC := $(wildcard tests/progs/*.c) $(wildcard tests/scenarios/*.c) $(wildcard bench/*.c)
PROG_BIN := $(patsubst %.c,$(B)/%,$(PROG_SRC))

SHIM     := $(B)/libcuprobe.so
ANALYZER := $(B)/cuprobe-analyze
FRONT    := $(B)/cuprobe
FAKECUDA := $(B)/fakecuda/libcuda.so.1
# The fake NVML, in a directory of its own: only the tests that ask see one.
FAKENVML := $(B)/fakenvml/libnvidia-ml.so.1

# -fno-plt: libc calls go through their GOT slot, next to the TLS offsets an
# event reads anyway, not a PLT stub and a .got.plt slot of their own: fewer
# cache lines of shim code an event touches.
SHIM_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-plt \
               -fno-omit-frame-pointer -I$(UNW_INC) -DUNW_LOCAL_ONLY $(SHIM_INC)
SHIM_LIBS   := -Wl,--exclude-libs,ALL $(UNW_LIB) $(ZSTD_A) -ldl -lpthread \
               -Wl,--version-script=interpose/exports.map -Wl,-Bsymbolic-functions \
               -Wl,-z,nodelete -Wl,--no-undefined

.PHONY: all
## all: build the shim, the analyzer, the front end, the fake driver and tests
all: $(SHIM) $(ANALYZER) $(FRONT) $(FAKECUDA) $(FAKENVML) $(UNIT_BIN) $(PROG_BIN)

# Our changes to it, applied in order (each says why at its top).
UNW_PATCHES := $(sort $(wildcard third_party/libunwind-*.patch))

$(UNW_LIB): $(UNW_PATCHES)
	$(Q)mkdir -p $(B)
	$(Q)rm -rf $(UNW_DIR)
	$(Q)tar xzf third_party/libunwind_$(UNW_VER).orig.tar.gz -C $(B)
	$(Q)for p in $(UNW_PATCHES); do patch -s -p1 -d $(UNW_DIR) <$$p || exit 1; done
	$(Q)cd $(UNW_DIR) && ./configure --quiet --disable-shared --enable-static \
	    --disable-minidebuginfo --disable-zlibdebuginfo --disable-coredump \
	    --disable-ptrace --disable-setjmp --disable-tests --disable-documentation \
	    CC="$(CC)" CFLAGS="-O2 -g -fPIC -fvisibility=hidden -DNDEBUG" $(QUIET)
	$(Q)$(MAKE) $(if $(filter 1,$(V)),,-s) -C $(UNW_DIR)/src libunwind.la $(QUIET)
	@echo "  UNWIND  $@"

# The shim is linked with link-time optimisation too (not in sanitizer
# builds; LTO=0 turns it off): a wrapper, its hook, the recorder and the
# interval map live in different files, and inlining across them takes
# calls, spills and reloads off every allocation, free and launch.  Fat
# objects, so unit tests link them as before; the link gets the compile
# flags (TLS model, frame pointers).
LTO_FLAG   := $(if $(SAN)$(filter 0,$(LTO)),,-flto=auto)
LTO_TAG    := $(if $(LTO_FLAG),on,off)
# The stamps are named after the compile flags too (a checksum), so that a
# flag changed here rebuilds the objects it compiles (-fno-plt did not).
FLAGS_SUM   = $(word 1,$(shell echo $(1) | cksum))
SHIM_STAMP := $(B)/interpose/.lto-$(LTO_TAG)-$(call FLAGS_SUM,$(SHIM_CFLAGS))

$(B)/interpose/%.o: interpose/%.c $(SHIM_STAMP) | $(UNW_LIB)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(SHIM_CFLAGS) $(if $(LTO_FLAG),$(LTO_FLAG) -ffat-lto-objects) $(DEPFLAGS) -c $< -o $@

$(SHIM): $(SHIM_OBJ) $(UNW_LIB) interpose/exports.map
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(SANFLAGS) $(if $(LTO_FLAG),$(SHIM_CFLAGS) $(LTO_FLAG)) -o $@ $(SHIM_OBJ) $(SHIM_LIBS)

# The analyzer is linked with link-time optimisation (not in sanitizer
# builds): a record's way through the reader, the model and the checks
# crosses files, and inlining across them takes calls and frames off every
# record.  The objects are fat, so unit tests that link some of them need
# no LTO step.
# LTO=0 turns it off (quicker relinks while iterating on the analyzer).
# Objects built before LTO was on (or off) are rebuilt once: they depend on
# a stamp named after the setting.  Making one removes the other, so that
# switching back finds its stamp missing (an old one would be older than
# the objects just built the other way, and nothing would be rebuilt).
# The shim's objects (above) the same way.
ANA_STAMP := $(B)/analyzer/.lto-$(LTO_TAG)-$(call FLAGS_SUM,$(CFLAGS) $(ANA_ORDER) / $(ANA_DOCTOR))
$(SHIM_STAMP) $(ANA_STAMP):
	@mkdir -p $(dir $@)
	$(Q)rm -f $(dir $@).lto-*
	$(Q)touch $@

$(B)/analyzer/%.o: analyzer/%.c $(ANA_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(if $(LTO_FLAG),$(LTO_FLAG) -ffat-lto-objects) $(call ana_inc,$(call ana_dir,$<)) $(DEPFLAGS) -c $< -o $@

$(ANALYZER): $(ANA_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(SANFLAGS) $(LTO_FLAG) -o $@ $(ANA_OBJ) $(ZSTD_A) -ldw -lelf -ldl -lpthread -lm

# The front end (frontend/): plain C on libc, include/ only.
FRONT_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard frontend/*.c))
$(B)/frontend/%.o: frontend/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FRONT): $(FRONT_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(SANFLAGS) -o $@ $(FRONT_OBJ)

$(B)/tests/fakecuda/%.o: tests/fakecuda/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -fPIC $(DEPFLAGS) -c $< -o $@

$(FAKECUDA): $(FAKE_OBJ) tests/fakecuda/fakecuda.map
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(SANFLAGS) -Wl,-soname,libcuda.so.1 \
	    -Wl,--version-script=tests/fakecuda/fakecuda.map -o $@ $(FAKE_OBJ) -ldl -lpthread
	$(Q)ln -sf libcuda.so.1 $(B)/fakecuda/libcuda.so

$(FAKENVML): tests/fakecuda/fakenvml.c tests/fakecuda/fk_ids.h include/cp_nvml.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

# Unit tests: one file each, linked with the objects named in a
# "// link: ..." comment on their first lines (e.g. build/interpose/hooks/cp_imap.o).
.SECONDEXPANSION:
LINK_SED := s|^// link: ||p
$(B)/tests/unit/%: tests/unit/%.c $$(shell sed -n '$$(LINK_SED)' tests/unit/$$*.c | sed 's|build/|$(B)/|g') | $(UNW_LIB)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(shell sed -n 's|^// cflags: ||p' $<) -I$(UNW_INC) $(SHIM_INC) $(ANA_INC) -o $@ $< \
	    $(shell sed -n 's|^// link: ||p' $< | sed 's|build/|$(B)/|g') $(UNW_LIB) $(ZSTD_A) -ldw -lelf -ldl -lpthread -lm

# Helper objects for unit tests (tests/unit/*.c that are not test_*).
$(B)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(shell sed -n 's|^// cflags: ||p' $<) $(SHIM_INC) -c $< -o $@

# Programs run under the shim: linked against the fake driver like a real
# CUDA program links against libcuda (-lcuda), unless they say "// nolink".
$(B)/tests/progs/% $(B)/tests/scenarios/% $(B)/bench/%: CUDALINK = $(if $(shell grep -l '^// nolink' $<),,-L$(B)/fakecuda -lcuda)
$(PROG_BIN): $(B)/%: %.c $(FAKECUDA)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -Itests/fakecuda -fno-omit-frame-pointer -o $@ $< $(CUDALINK) -ldl -lpthread

.PHONY: test
## test: build and run the quick tier of the CI tests (tests/README.md), as many at a time as
##   there are CPUs (JOBS=N); the last line is "N passed, N failed, N skipped"
test: all
	$(Q)B=$(B) sh tests/run.sh

.PHONY: check-long
## check-long: the long tier of the CI tests (timed fuzzing, the kill-window bench, the selftime
##   build: "# tier: long" in tests/sh/), then check-san; CI runs it and `make test`
check-long: all
	$(Q)B=$(B) TIER=long sh tests/run.sh
	$(Q)$(MAKE) --no-print-directory check-san

.PHONY: docs
## docs: regenerate the record table of docs/trace-format.md from include/cp_records.h
docs: $(B)/tests/unit/test_records_doc
	$(Q)$< gen >$(B)/records.md.tmp
	$(Q)awk -v gen=$(B)/records.md.tmp '/^<!-- records:begin/ { while ((getline l < gen) > 0) print l; skip = 1; next } \
	    /^<!-- records:end/ { skip = 0; next } !skip' docs/trace-format.md >$(B)/trace-format.md.tmp
	$(Q)mv $(B)/trace-format.md.tmp docs/trace-format.md && rm -f $(B)/records.md.tmp

.PHONY: check-san
## check-san: ASan+UBSan and TSan builds (build-san-*/): unit and fake-driver tests under both,
##   the fuzz regression corpus and the shim tests under ASan+UBSan (the shim preloaded behind
##   the ASan runtime), the parallel report under TSan
check-san:
	$(Q)$(MAKE) -s SAN=address,undefined all
	$(Q)B=build-san-address-undefined TESTS=unit ASAN_OPTIONS=detect_leaks=0 sh tests/run.sh
	$(Q)B=build-san-address-undefined TESTS=fake ASAN_OPTIONS=detect_leaks=0 sh tests/run.sh
	$(Q)B=build-san-address-undefined TESTS=fuzz_replay sh tests/run.sh
	$(Q)B=build-san-address-undefined TESTS=shim_ TESTS_SKIP="shim_safety shim_cudart" \
	    CUPROBE_TEST_PRELOAD=$$($(CC) -print-file-name=libasan.so) \
	    ASAN_OPTIONS=detect_leaks=0:handle_segv=0 sh tests/run.sh
	$(Q)B=build-san-address-undefined TESTS=report_scenarios \
	    CUPROBE_TEST_PRELOAD=$$($(CC) -print-file-name=libasan.so) \
	    ASAN_OPTIONS=detect_leaks=0:handle_segv=0 sh tests/run.sh
	$(Q)$(MAKE) -s SAN=thread all
	$(Q)B=build-san-thread TESTS=unit TSAN_OPTIONS=halt_on_error=1 sh tests/run.sh
	$(Q)B=build-san-thread TESTS=report_parallel TSAN_OPTIONS=halt_on_error=1 sh tests/run.sh

.PHONY: demo
## demo: trace a bundled program on the fake driver and print the report
demo: all
	$(Q)B=$(B) sh scripts/demo.sh

.PHONY: gpulib
## gpulib: copy the analyzer's shared libraries (elfutils) and a zstd binary with its own into
##   $(B)/gpulib, for a GPU machine that lacks them (the scripts of tests/gpu/)
gpulib: $(ANALYZER)
	$(Q)mkdir -p $(B)/gpulib
	$(Q)cp -L "$$(command -v zstd)" $(B)/gpulib/zstd
	$(Q)ldd $(ANALYZER) $(B)/gpulib/zstd | awk '$$2 == "=>" && $$3 ~ /^\// && $$1 !~ /^lib(c|m|dl|pthread|rt)\.so/ {print $$3}' | \
	    sort -u | while read -r l; do cp -L "$$l" $(B)/gpulib/; done
	$(Q)ls $(B)/gpulib

.PHONY: install
## selftime: a benchmark build of the shim into $(B)/st/bin (with scripts/python beside it) whose
##   wrappers time each call and the recording path's parts (-DCP_SELFTIME; bench/gpu_steps.py
##   toggle TOGGLE_SELFTIME=1); shares $(B)'s libunwind
.PHONY: selftime
selftime: $(UNW_LIB)
	$(Q)$(MAKE) --no-print-directory B=$(B)/st UNW_DIR=$(abspath $(UNW_DIR)) \
	    EXTRA_CFLAGS="$(EXTRA_CFLAGS) -DCP_SELFTIME" $(B)/st/libcuprobe.so $(B)/st/cuprobe
	$(Q)mkdir -p $(B)/st/bin $(B)/st/scripts && cp $(B)/st/libcuprobe.so $(B)/st/cuprobe $(B)/st/bin/
	$(Q)rm -rf $(B)/st/scripts/python && cp -r scripts/python $(B)/st/scripts/

## install: install into $(PREFIX) (bin/, lib/cuprobe/, share/cuprobe/); builds only those
install: $(SHIM) $(ANALYZER) $(FRONT)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/cuprobe $(DESTDIR)$(PREFIX)/share/cuprobe
	install -m 0755 $(SHIM) $(DESTDIR)$(PREFIX)/lib/cuprobe/libcuprobe.so
	install -m 0755 $(ANALYZER) $(DESTDIR)$(PREFIX)/lib/cuprobe/cuprobe-analyze
	install -m 0755 $(FRONT) $(DESTDIR)$(PREFIX)/bin/cuprobe
	if [ -d scripts/python ]; then cp -r scripts/python $(DESTDIR)$(PREFIX)/share/cuprobe/; fi

# The wheel: the installed layout (bin/, lib/cuprobe/, share/cuprobe/python)
# as a wheel's scripts and data, which pip puts under the environment's
# prefix.  Its analyzer has libdw and libelf linked in, with what they
# decompress with, so that it runs where elfutils is not installed: it needs
# libc, libm, libpthread and libdl only, as the shim needs libc only.
WHEEL_ANA := $(B)/wheel/cuprobe-analyze
DIST      ?= dist
WHEEL_A   := $(foreach l,dw elf z lzma bz2 zstd,$(shell $(CC) -print-file-name=lib$(l).a))

$(WHEEL_ANA): $(ANA_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(SANFLAGS) $(LTO_FLAG) -o $@ $(ANA_OBJ) $(WHEEL_A) -ldl -lpthread -lm

.PHONY: wheel
## wheel: dist/cuprobe-VERSION-py3-none-PLATFORM.whl (DIST=DIR: DIR/), for pip install; needs
##   python3 only (no setuptools)
wheel: $(SHIM) $(WHEEL_ANA) $(FRONT)
	$(Q)rm -f $(DIST)/cuprobe-$(VERSION)-*.whl
	$(Q)python3 scripts/make_wheel.py $(VERSION) $(DIST) bin/cuprobe=$(FRONT) \
	    lib/cuprobe/libcuprobe.so=$(SHIM) lib/cuprobe/cuprobe-analyze=$(WHEEL_ANA) \
	    share/cuprobe/python=scripts/python

.PHONY: uninstall
## uninstall: remove what install put into $(PREFIX)
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cuprobe
	rm -rf $(DESTDIR)$(PREFIX)/lib/cuprobe $(DESTDIR)$(PREFIX)/share/cuprobe

.PHONY: help
## help: this list
help:
	@sed -n 's/^## \([^:]*\): */  \1\t/p; s/^##   */  \t/p' $(MAKEFILE_LIST) | expand -t 14

.PHONY: clean
## clean: remove build outputs
clean:
	rm -rf build build-san-*

-include $(SHIM_OBJ:.o=.d) $(ANA_OBJ:.o=.d) $(FRONT_OBJ:.o=.d) $(FAKE_OBJ:.o=.d) $(UNIT_BIN:=.d) $(PROG_BIN:=.d)
