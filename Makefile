# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# MetaRoCE: kernel module, rdma-core provider, tests.
#
#   make deps      install build/test dependencies (apt-get, idempotent)
#   make           build metaroce.ko, libmetaroce-rdmav34.so and tools/metaroce
#   make install   install both (depmod, /etc/libibverbs.d/metaroce.driver);
#                  DESTDIR=dir stages the files under dir instead
#   make demo      boot the bundled VM: two devices in two namespaces
#   make check     build, run every selftest in the VM, print a summary
#   make check-debug [TESTS="test_a test_b"]
#                  the same for a subset (default: the tests of hostile
#                  input, loss, lifecycles, scale and process kill) under a
#                  debug kernel with KASAN, lockdep, kmemleak and UBSAN,
#                  built once (20+ min) and cached outside the checkout
#                  (tools/check-debug.sh says where); results in
#                  .vm/results-debug/
#   make lint      checkpatch --strict, sparse and W=1 on the kernel code
#   make compliance TARGET=<ip> [LOCAL=<ip>] [AGENT_PORT=4794] [EXTRA="<ip> <ip> <ip> <ip> <ip>"]
#                  play the peer of the MetaRoCE device at TARGET (which runs
#                  selftests/compliance/target.py DEV) and print every
#                  requirement ID as pass, fail or untested; EXTRA: four more
#                  local addresses TARGET has no connection with (the
#                  target-initiated checks)
#   make bench     benchmarks in the VM (about 30 min): BENCHMARKS.md,
#                  bench/results.json, bench/plots/
#   make deb       Debian packages (DKMS module, libibverbs provider, the
#                  metaroce tool) into build/deb/, lintian-checked, DKMS
#                  build checked
#   make check-packages
#                  install them with dpkg -i in the VM, run verified
#                  traffic, purge them (15-25 min; not in make check)
#   make soak [SOAK_MINUTES=30]
#                  soak in the VM: mixed traffic under changing faults, then
#                  slab/page usage against the baseline, kmemleak
#   make stateful-fuzz [SFUZZ_COUNT=1000000]
#                  the full stateful fuzzing run (test_stateful_fuzz with a
#                  million mutated packets over 10 rounds, 20-60 minutes)

# Kernel to build against: the running kernel's build dir when it exists,
# else the newest installed 6.12 headers.
KDIR ?= $(or $(wildcard /lib/modules/$(shell uname -r)/build), \
	     $(lastword $(shell ls -d /lib/modules/6.12.*/build 2>/dev/null | sort -V)))
KMOD := drivers/infiniband/sw/metaroce/metaroce.ko
PROVIDER := rdma-core-provider/libmetaroce-rdmav34.so

.PHONY: all module provider tools tool compliance install deps deps-debug check check-debug demo lint bench soak stateful-fuzz deb check-packages clean

all: module provider tools

tools: tools/mrfuzz tools/mrsfuzz tool

tools/mrfuzz: tools/mrfuzz.c
	$(CC) -O2 -Wall -Wextra -o $@ $<

tools/mrsfuzz: tools/mrsfuzz.c
	$(CC) -O2 -Wall -Wextra -o $@ $<

module:
	@test -n "$(KDIR)" || { echo "no kernel build dir: run 'make deps'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/metaroce/kverbs W=1 modules

provider:
	$(MAKE) -C rdma-core-provider

tool:
	$(MAKE) -C tools/metaroce

# Installs what `make` built (DESTDIR stages into a directory instead).
# The installed module is stripped of its debug info, as distributions ship
# modules (21 MB to 100 kB; xz of the full one takes minutes in the VM):
# INSTALL_MOD_STRIP= keeps it.
INSTALL_MOD_STRIP ?= 1
install:
	@test -f $(KMOD) -a -f $(PROVIDER) || { echo "run 'make' first" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_STRIP=$(INSTALL_MOD_STRIP) modules_install
	depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(shell modinfo -F vermagic $(KMOD) | cut -d' ' -f1)
	$(MAKE) -C rdma-core-provider install
	$(MAKE) -C tools/metaroce install

deps:
	tools/deps.sh

check: deps all
	tools/run-tests.sh

deps-debug:
	tools/deps.sh --debug

deb: deps
	tools/deb.sh $(KDIR)

check-packages: deb all
	tools/vm/run.sh -t 1800 -o .vm/packages -- selftests/metaroce/packages_guest.sh

check-debug: deps-debug all
	tools/check-debug.sh $(TESTS)

demo: deps all
	tools/demo.sh

compliance:
	@test -n "$(TARGET)" || { echo "usage: make compliance TARGET=<ip> [LOCAL=<ip>] [EXTRA=\"<ip> <ip> <ip> <ip> <ip>\"]" >&2; exit 2; }
	cd selftests/compliance && /usr/bin/python3 conformance.py \
		$(or $(LOCAL),$$(ip -o route get $(TARGET) | sed -n 's/.* src \([0-9a-f.:]*\).*/\1/p')) \
		$(TARGET) $(or $(AGENT_PORT),4794) $(EXTRA)

lint: module
	tools/lint.sh

bench: deps all
	tools/bench/bench.sh

SOAK_MINUTES ?= 30
soak: deps all
	tools/soak.sh $(SOAK_MINUTES)

SFUZZ_COUNT ?= 1000000
stateful-fuzz: deps all
	tools/vm/run.sh -t 14400 -o .vm/stateful-fuzz -- env SFUZZ_COUNT=$(SFUZZ_COUNT) \
		SFUZZ_SECONDS=0 SFUZZ_ROUNDS=10 selftests/metaroce/test_stateful_fuzz.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/metaroce/kverbs clean
	$(MAKE) -C rdma-core-provider clean
	rm -f tools/mrfuzz tools/mrsfuzz
	$(MAKE) -C tools/metaroce clean
