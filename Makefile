# locklab - one Makefile for every program.  `make`, `make test`, `make asan`,
# `make check-style`, `make bench`, `make demo`, `make man`, `make install`
# (PREFIX, DESTDIR), `make uninstall`.  Objects go to $(BUILD).

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
SAN     ?=
PKGS    := jansson gsl libmicrohttpd libpq libcurl zlib gmime-3.0 nettle
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += $(OPT) $(SAN) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread \
	   -D_GNU_SOURCE -Ilib -Inetlib -Ilockbench/locks $(PKG_CFLAGS)
LDFLAGS += $(SAN) -pthread
LDLIBS  += $(PKG_LIBS) -lm

# lib/: what every program links; netlib/: what only the server, the agent and
# the client share (fetch address policy, pinned git and ssh, the process runner)
COMMON_SRC := $(wildcard lib/*.c)
NET_SRC    := $(wildcard netlib/*.c)
LOCKS_SRC  := $(filter-out lockbench/locks/broken.c,$(wildcard lockbench/locks/*.c))
LB_SRC     := $(filter-out lockbench/src/main.c,$(wildcard lockbench/src/*.c))
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
CLIENT_SRC := $(wildcard client/*.c)
AGENT_SRC  := $(filter-out agents/main.c,$(wildcard agents/*.c))

# --version: git describe of the checkout, else a VERSION file (a tarball),
# else "unknown".  version.o is compiled again when the text changes.
LOCKLAB_VERSION := $(shell if [ -e .git ] && git describe --always --dirty --tags 2>/dev/null; \
	then :; elif [ -f VERSION ]; then head -n 1 VERSION; else echo unknown; fi)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(BUILD)/version.txt 2>/dev/null)" = '$(LOCKLAB_VERSION)' ] || \
	printf '%s\n' '$(LOCKLAB_VERSION)' >$(BUILD)/version.txt; })

obj      = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
testobj  = $(patsubst %.c,$(BUILD)/obj-test/%.o,$(1))

COMMON_OBJ := $(call obj,$(COMMON_SRC))
NET_OBJ    := $(call obj,$(NET_SRC))
LOCKS_OBJ  := $(call obj,$(LOCKS_SRC))
LB_OBJ     := $(call obj,$(LB_SRC))
# the test build adds the deliberately broken locks (LB_TEST_LOCKS)
LOCKS_TOBJ := $(call testobj,$(LOCKS_SRC) lockbench/locks/broken.c)
LB_TOBJ    := $(call testobj,$(LB_SRC))

PROGRAMS := $(BUILD)/lockbench $(BUILD)/lockbench-test
ifneq ($(wildcard server/main.c),)
PROGRAMS += $(BUILD)/locklab-server
endif
ifneq ($(CLIENT_SRC),)
PROGRAMS += $(BUILD)/locklab
endif
ifneq ($(wildcard agents/main.c),)
PROGRAMS += $(BUILD)/locklab-agent
endif

LIB_UNIT    := $(patsubst lib/tests/%.c,$(BUILD)/tests/lib-%,$(wildcard lib/tests/test_*.c))
NETLIB_UNIT := $(patsubst netlib/tests/%.c,$(BUILD)/tests/netlib-%,$(wildcard netlib/tests/test_*.c))
LB_UNIT     := $(patsubst lockbench/tests/%.c,$(BUILD)/tests/lockbench-%,$(wildcard lockbench/tests/test_*.c))
SERVER_UNIT := $(patsubst server/tests/%.c,$(BUILD)/tests/server-%,$(wildcard server/tests/test_*.c))
AGENT_UNIT  := $(patsubst agents/tests/%.c,$(BUILD)/tests/agent-%,$(wildcard agents/tests/test_*.c))
UNIT := $(LIB_UNIT) $(NETLIB_UNIT) $(LB_UNIT) $(SERVER_UNIT) $(AGENT_UNIT)

.PHONY: bench-intake-corpus bench-mail bench-mail-out bench-keepalive bench-bisect bench-track bench-track-kernel bench-verdict-sim
.PHONY: all programs test unit tap asan check-style format deps bench bench-verdicts bench-aa bench-turnaround bench-hot-shape bench-quick bench-duet bench-abba bench-server bench-kernel bench-kernel-verdicts bench-load \
	demo demo-stop images-run clean man install uninstall
all: $(PROGRAMS) $(UNIT) $(BUILD)/bench-mbox $(BUILD)/bench-agent-post $(BUILD)/verdict-sim

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj-test/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLB_TEST_LOCKS -MMD -MP -c $< -o $@

$(BUILD)/lockbench: $(call obj,lockbench/src/main.c) $(LB_OBJ) $(LOCKS_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/lockbench-test: $(call testobj,lockbench/src/main.c) $(LB_TOBJ) $(LOCKS_TOBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/locklab-server: $(call obj,server/main.c) $(call obj,$(SERVER_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make bench-server / bench-mail: the mail parser's rate (bench/bench_mbox.c)
$(BUILD)/bench-mbox: $(call obj,bench/bench_mbox.c) $(call obj,$(SERVER_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/locklab: $(call obj,$(CLIENT_SRC)) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/obj/lib/version.o $(BUILD)/obj-guest/lib/version.o: CFLAGS += -DLOCKLAB_VERSION='"$(LOCKLAB_VERSION)"'
$(BUILD)/obj/lib/version.o $(BUILD)/obj-guest/lib/version.o: $(BUILD)/version.txt

# the agent's default native tree is the checkout it was built from
$(BUILD)/obj/agents/main.o: CFLAGS += -DLOCKLAB_SOURCE_DIR='"$(CURDIR)"'

$(BUILD)/locklab-agent: $(call obj,agents/main.c) $(call obj,$(AGENT_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make bench-verdict-sim / tests/191-verdict-sim.t: the verdict policy simulated
# through the server's own compare, futility and look code (bench/verdict_sim.c)
$(BUILD)/verdict-sim: $(call obj,bench/verdict_sim.c) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make bench-keepalive: the agent's posts per second with and without a kept-alive connection
$(BUILD)/bench-agent-post: $(call obj,bench/bench_post.c) $(call obj,$(AGENT_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/lockbench-%: $(BUILD)/obj-test/lockbench/tests/%.o $(LB_TOBJ) $(LOCKS_TOBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/lib-%: $(BUILD)/obj/lib/tests/%.o $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/netlib-%: $(BUILD)/obj/netlib/tests/%.o $(NET_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/server-%: $(BUILD)/obj/server/tests/%.o $(call obj,$(SERVER_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/agent-%: $(BUILD)/obj/agents/tests/%.o $(call obj,$(AGENT_SRC)) $(NET_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Installs missing Debian packages when root, else prints the apt-get line.
deps:
	@scripts/deps.sh

# Every test: cmocka unit tests, then the TAP scripts under tests/ with prove
# (two at a time on two CPUs: scripts/run-tests.sh).  Ends with one line "N
# passed, N failed, N skipped"; non-zero exit on any failure.  The build uses
# every CPU unless make was given its own -j.
NPROC := $(shell nproc 2>/dev/null || echo 1)
test: deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC)) all
	@BUILD=$(BUILD) SANITIZED=$(if $(SAN),1,) scripts/run-tests.sh $(UNIT)

asan:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" test

STYLE_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
# kernel style (clang-format) and no two modules that include each other
# (scripts/include-circles.py)
check-style:
	@scripts/include-circles.py
	@out=$$(clang-format --dry-run --Werror $(STYLE_FILES) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out" | head -n 40; echo "check-style: run 'make format'"; exit 1; fi; \
	echo "check-style: $(words $(STYLE_FILES)) files clean"

format:
	clang-format -i $(STYLE_FILES)

bench: all
	@bench/bench-lockbench.sh

# ---- kernel guest (lockbench kernel run, docs/kernel.md) -------------------
# The initramfs holds a static lockbench and a tiny static init.  Debian ships
# libjansson.a, libgsl.a and libgslcblas.a.  Sanitizer builds cannot link
# -static, so they compile the guest's objects again without $(SAN).
# lockbench links lib/ only (netlib/'s getaddrinfo cannot be linked -static)
GUEST_COMMON_SRC := $(COMMON_SRC)
ifeq ($(SAN),)
GUEST_OBJ := $(call obj,lockbench/src/main.c) $(LB_OBJ) $(LOCKS_OBJ) $(call obj,$(GUEST_COMMON_SRC))
else
guestobj  = $(patsubst %.c,$(BUILD)/obj-guest/%.o,$(1))
GUEST_OBJ := $(call guestobj,lockbench/src/main.c $(LB_SRC) $(LOCKS_SRC) $(GUEST_COMMON_SRC))
$(BUILD)/obj-guest/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(CFLAGS)) -MMD -MP -c $< -o $@
endif
$(BUILD)/lockbench-static: $(GUEST_OBJ)
	$(CC) -static -pthread $^ -ljansson -lgsl -lgslcblas -lnettle -lm -o $@
$(BUILD)/locklab-init: lockbench/kernel/init.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -O2 -static $< -o $@
all: $(BUILD)/lockbench-static $(BUILD)/locklab-init

# The programs alone, without the unit tests and the kernel guest's files.
programs: $(PROGRAMS)

# The whole service on this machine (README); demo-stop ends it.  It installs
# only what the demo needs (deps.sh --demo) and times itself from here.  The
# packages' and the compiler's output go to logs, shown when a step fails
# (DEMO_VERBOSE=1 shows everything).  The script runs on a line of its own:
# a line holding $(MAKE) would hand make's jobserver to the server and agent
# it leaves running, and make would wait.
demo:
	@mkdir -p $(BUILD) && date +%s.%N >$(BUILD)/.demo-start
	@scripts/demo-step.sh $(BUILD)/demo-deps.log "checking the Debian packages" scripts/deps.sh --demo
	@scripts/demo-step.sh $(BUILD)/demo-build.log "building the programs" \
	  $(MAKE) --no-print-directory programs
	@DEMO_T0=$$(cat $(BUILD)/.demo-start) BUILD=$(BUILD) scripts/demo.sh

demo-stop:
	@scripts/demo-stop.sh

# the images built with podman from a Debian base made by mmdebstrap, the
# compose stack up, the example series to a verdict, the stack down (slow:
# not part of make test; docs/measured/images.md has a run)
images-run:
	@scripts/deps.sh --images
	@scripts/images-run.sh

bench-verdicts: all
	@BUILD=$(BUILD) bench/bench-verdicts.sh

# the full-N simulation (10,000 jobs a case); SIM_N, SIM_SEED to change
bench-verdict-sim: $(BUILD)/verdict-sim
	@$(BUILD)/verdict-sim -n $${SIM_N:-10000} -s $${SIM_SEED:-1}

bench-duet: all
	@BUILD=$(BUILD) bench/bench-duet.sh

# make bench-abba: uncontended's A/A spread, paired by round against ABBA per sample
bench-abba: all
	@BUILD=$(BUILD) bench/bench-abba.sh

bench-hot-shape: all
	@BUILD=$(BUILD) bench/bench-hot-shape.sh

# make bench-bisect: false steps over noise-only histories, bisection steps and time
bench-bisect: all
	@BUILD=$(BUILD) bench/bench-bisect.sh

# make bench-track: minutes from a push to the alert naming the commit that slowed it
bench-track: all
	@BUILD=$(BUILD) bench/bench-track.sh

# make bench-track-kernel: a tracked kernel tree, a push with a lost wakeup: the lockup's alert and its commit
bench-track-kernel: all
	@BUILD=$(BUILD) bench/bench-track-kernel.sh

bench-aa: all
	@BUILD=$(BUILD) bench/bench-aa.sh

# make bench-turnaround: submission -> verdict of one-patch native series, quick suite
bench-turnaround: all
	@BUILD=$(BUILD) bench/bench-turnaround.sh

# make bench-quick: the quick suite's time and its sleeping-lock rows' A/A spread
bench-quick: all
	@BUILD=$(BUILD) bench/bench-quick.sh

# the server under agents, dashboard readers and hostile connections (bench/bench-load.sh)
bench-load: programs
	@BUILD=$(BUILD) bench/bench-load.sh

bench-kernel: all
	@BUILD=$(BUILD) bench/bench-kernel.sh

# kernel patches that break a lock's rules, each through the server and an agent to its verdict
bench-kernel-verdicts: all
	@BUILD=$(BUILD) bench/bench-kernel-verdicts.sh

bench-mail: $(BUILD)/locklab-server $(BUILD)/bench-mbox
	@BUILD=$(BUILD) bench/bench-mail.sh

# Patchwork's parser corpus through the API and the Maildir intake
# (PATCHWORK_DIR=a checkout of getpatchwork/patchwork)
bench-intake-corpus: $(BUILD)/locklab-server
	@BUILD=$(BUILD) bench/bench-intake-corpus.sh

bench-server: $(BUILD)/locklab-server $(BUILD)/bench-mbox
	@$(BUILD)/bench-mbox 20000
	@BUILD=$(BUILD) bench/bench-server.sh

bench-keepalive: $(BUILD)/locklab-server $(BUILD)/bench-agent-post
	@BUILD=$(BUILD) bench/bench-keepalive.sh

# the outgoing half of bench-mail: replies rendered and sent per second
bench-mail: bench-mail-out
bench-mail-out: all
	@BUILD=$(BUILD) bench/bench-mail-out.sh

# ---- fuzzing (libFuzzer, clang, ASan + UBSan; fuzz/README.md) ------------
# `make fuzz` builds into build-fuzz/ and fuzzes each target FUZZ_SECONDS
# (default 300) after replaying its regression inputs and seed corpus;
# FUZZ_TARGETS picks some.  tests/150-fuzz.t runs the same, briefly.
FUZZ_TARGETS ?= mbox result http report
FUZZ_SECONDS ?= 300
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link
FUZZ_SERVER_OBJ = $(call obj,$(SERVER_SRC)) $(NET_OBJ) $(COMMON_OBJ)
FUZZ_LINK = $(CC) $(LDFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@

.PHONY: fuzz fuzz-build fuzzers
fuzz-build:
	@$(MAKE) --no-print-directory CC=clang BUILD=build-fuzz OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="$(FUZZ_SAN)" fuzzers

fuzzers: $(patsubst %,$(BUILD)/fuzz/fuzz-%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz-mbox: $(call obj,fuzz/fuzz_mbox.c) $(FUZZ_SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_LINK)
$(BUILD)/fuzz/fuzz-result: $(call obj,fuzz/fuzz_result.c) $(FUZZ_SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_LINK)
# http.c is compiled into the harness (its static access handler); no fetch reaches the network;
# with LOCKLAB_FUZZ_DB it migrates a scratch database from this tree's sql/
$(BUILD)/obj/fuzz/fuzz_http.o: CFLAGS += -DFUZZ_SQL_DIR='"$(CURDIR)/sql"'
$(BUILD)/fuzz/fuzz-http: $(call obj,fuzz/fuzz_http.c) $(filter-out $(call obj,server/http.c),$(FUZZ_SERVER_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -Wl,--wrap=fetch_url $^ $(LDLIBS) -o $@
$(BUILD)/fuzz/fuzz-report: $(call obj,fuzz/fuzz_report.c) $(FUZZ_SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_LINK)

fuzz: fuzz-build
	@FUZZ_BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_TARGETS)

# ---- man pages and installing -----------------------------------------------
# Man pages are made from each program's --help and --version by help2man.
# `make install` puts the programs in PREFIX/bin, the dashboard and the
# migrations in PREFIX/share/locklab (where the server looks for them, beside
# its bin/: lib/progdir.h), the man pages in PREFIX/share/man/man1 and the
# systemd units of dist/systemd/ (their /usr/local/ made PREFIX/) in
# SYSTEMDUNITDIR; DESTDIR stages all of it under another root (docs/install.md).
PREFIX         ?= /usr/local
BINDIR         ?= $(PREFIX)/bin
DATADIR        ?= $(PREFIX)/share/locklab
MANDIR         ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL        ?= install
INSTALL_PROGRAMS := lockbench locklab-server locklab-agent locklab
UNITS          := locklab-server.service locklab-agent.service
# the dashboard's served files (web/vendor/ comes from npm ci in web/)
WEB_FILES = $(shell cd web && find index.html style.css js vendor -type f 2>/dev/null | sort)
MANPAGES  := $(patsubst %,$(BUILD)/man/%.1,$(INSTALL_PROGRAMS))

man_name_lockbench      := lock and futex benchmarks with a lockup watchdog
man_name_locklab-server := the locklab service: API, dashboard, verdicts, mail
man_name_locklab-agent  := measure patches for locklab-server on a test machine
man_name_locklab        := submit to locklab-server and follow, a CI gate
# lockbench --help names the commands; help --all adds each one's options
man_help_lockbench      := help --all

man: $(MANPAGES)

$(BUILD)/man/%.1: $(BUILD)/% $(BUILD)/version.txt
	@mkdir -p $(dir $@)
	@command -v help2man >/dev/null || { echo "man: help2man is missing (scripts/deps.sh)" >&2; exit 1; }
	help2man --no-info --no-discard-stderr --name='$(man_name_$*)' \
		--help-option='$(or $(man_help_$*),--help)' --output=$@ $<

install: programs man
	@[ -f web/vendor/uPlot.esm.js ] || { echo "install: web/vendor/ is missing: run scripts/deps.sh --demo (npm ci in web/)" >&2; exit 1; }
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/sql $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 $(addprefix $(BUILD)/,$(INSTALL_PROGRAMS)) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 sql/*.sql $(DESTDIR)$(DATADIR)/sql/
	@set -e; for f in $(WEB_FILES); do \
		$(INSTALL) -D -m 644 web/$$f $(DESTDIR)$(DATADIR)/web/$$f; done
	@echo "installed $(words $(WEB_FILES)) dashboard files in $(DESTDIR)$(DATADIR)/web"
	$(INSTALL) -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	@set -e; for u in $(UNITS); do \
		sed 's|/usr/local/|$(PREFIX)/|g' dist/systemd/$$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u; \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; done
	@echo "installed the units $(UNITS) in $(DESTDIR)$(SYSTEMDUNITDIR)"

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INSTALL_PROGRAMS))
	rm -f $(patsubst %,$(DESTDIR)$(MANDIR)/man1/%.1,$(INSTALL_PROGRAMS))
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(UNITS))
	rm -rf $(DESTDIR)$(DATADIR)/web $(DESTDIR)$(DATADIR)/sql
	rmdir $(DESTDIR)$(DATADIR) 2>/dev/null || true

clean:
	rm -rf build build-asan build-fuzz
