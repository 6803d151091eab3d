# aqmlab: build, test and demo targets. `make demo` and `make test` work on a
# fresh machine with Python >= 3.10 and a Rust toolchain (rustup).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
# Python packages the build and the checks need, beside the package's own.
DEV_PACKAGES := "maturin>=1.5,<2" pytest ruff mypy

# cargo lives in ~/.cargo/bin after rustup; make sure it is found.
export PATH := $(HOME)/.cargo/bin:$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: help venv build wheel demo test test-rust test-python lint bench bench-scale bench-startup bench-against bench-experiments bench-testbed clean

help:
	@echo "make venv    create $(VENV) with the build and test tools"
	@echo "make build   build the engine (profile-guided; PGO=0: without) and install aqmlab into $(VENV) (incremental)"
	@echo "make wheel   a wheel of aqmlab in dist/ (engine built as by make build)"
	@echo "make demo    reproduce thesis section 5.5.3 (about 15 s on 2 cores): its table beside the paper's, HTML report in demo-out/"
	@echo "make test    cargo fmt/clippy/doc/test, ruff, mypy, pytest, then the cross-checks, in timed stages"
	@echo "make browser install Debian's Chromium for the report's browser test (as root)"
	@echo "make ns2     install Debian's ns-2.35 for the TCP cross-check (as root)"
	@echo "make tshark  install Debian's tshark for the capture test (as root)"
	@echo "make uml     install Debian's user-mode-linux (with kmod, ethtool): Linux's own queue discs and DCTCP as a reference (as root)"
	@echo "make ns3     install ns-3 (PyPI's ns3 wheel, the ns3 extra) into $(VENV) for the cross-check of tests/ns3/"
	@echo "make pgo-tools   install Debian's llvm-N (llvm-profdata) for the profile-guided build (as root)"
	@echo "make bench   speed of the canonical scenario per scheme, the scaling table (100 ... 100 000 flows), the testbed router, then the thesis' experiments in full"
	@echo "make bench-scale   the scaling table alone (100 ... 100 000 flows)"
	@echo "make bench-startup   what 'aqmlab run' spends beyond the engine on the canonical scenario"
	@echo "make bench-against [REV=...]   the engine against an earlier revision's, runs alternated"
	@echo "make bench-experiments   the thesis' experiments in full on 2 workers (wall time, overhead)"
	@echo "make bench-testbed   the testbed router: AQM path in memory, then real TCP through TUN (root)"
	@echo "make clean   remove build products, $(VENV) and demo-out/"

# The stamp is redone when the project's dependencies change.
$(VENV)/.stamp: pyproject.toml
	@command -v cargo >/dev/null || { echo "error: cargo not found; install Rust with rustup" >&2; exit 2; }
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet $(DEV_PACKAGES)
	touch $@

venv: $(VENV)/.stamp

# Profile-guided optimisation of the engine: built once instrumented, run on a
# training set (tools/pgo_train.py and the bench's scenarios; tools/pgo.sh), then built with
# the profile in target/pgo-use: the canonical scenario runs some 15 % faster, with the same
# results. Needs the llvm-profdata of rustc's LLVM (rustup's llvm-tools, or Debian's llvm-N,
# which `make pgo-tools` installs as root); without one, or with PGO=0, the engine is built
# as before. The profile is made again when the engine's sources change.
PGO ?= 1
PGO_DATA := target/pgo/merged.profdata
PGO_ENV := RUSTFLAGS=-Cprofile-use=$(abspath $(PGO_DATA)) CARGO_TARGET_DIR=target/pgo-use
ENGINE_SOURCES := $(shell find crates/aqmlab-core/src crates/aqmlab-core/examples crates/aqmlab-py/src \
  -name '*.rs') crates/aqmlab-core/Cargo.toml crates/aqmlab-py/Cargo.toml Cargo.toml Cargo.lock \
  tools/pgo.sh tools/pgo_train.py
# "yes" when the engine is built with its profile.
USE_PGO = $$([ "$(PGO)" != 0 ] && tools/pgo.sh tool >/dev/null && echo yes || true)

$(PGO_DATA): $(ENGINE_SOURCES) | venv
	AQM_KINDS="$(AQM_KINDS)" BENCH_FILES="$(BENCH_FILES)" tools/pgo.sh profile $(VENV)

# maturin builds the extension (cargo is incremental, so this is quick when
# nothing changed), installs the package's dependencies and links python/
# into the venv, so edits to python/aqmlab take effect without rebuilding.
# PIP_QUIET: the pip that maturin runs prints only problems, not a line per
# dependency already installed ("Requirement already satisfied: ...").
build: venv pgo-tools
	@if [ "$(USE_PGO)" = yes ]; then \
	  $(MAKE) --no-print-directory $(PGO_DATA); \
	  echo "$(VENV)/bin/maturin develop --release (with the profile $(PGO_DATA))"; \
	  PIP_QUIET=1 $(PGO_ENV) $(VENV)/bin/maturin develop --release --quiet --extras dask; \
	else \
	  echo "$(VENV)/bin/maturin develop --release"; \
	  PIP_QUIET=1 $(VENV)/bin/maturin develop --release --quiet --extras dask; \
	fi
	cargo build --release --quiet -p aqmlab-testbed

# A wheel in dist/, its engine built as `build` builds it (with the profile when there is one),
# with the testbed's router beside it (aqmlab/bin/aqmlab-router in the package, copied there for
# the build only).
wheel: build
	install -D -m 755 target/release/aqmlab-router python/aqmlab/bin/aqmlab-router
	trap 'rm -rf python/aqmlab/bin' EXIT; \
	  $$(if [ "$(USE_PGO)" = yes ]; then echo env $(PGO_ENV); fi) $(VENV)/bin/maturin build --release \
	  --quiet -o dist

# The bench example, built as the extension is (with the profile when `build` made one).
BENCH := $$(if [ "$(USE_PGO)" = yes ]; then echo env $(PGO_ENV); fi) cargo run --release --quiet \
  -p aqmlab-core --example bench --

demo: build
	$(VENV)/bin/aqmlab demo

# Every check, in timed stages (tools/test_stages.sh): the build beside the Rust checks, pytest beside
# the ns-2 cross-check and the real-time runs, then the other slow cross-checks (pytest -m
# crosscheck); the stage times are printed at the end.
test: venv
	MAKE="$(MAKE)" VENV="$(VENV)" tools/test_stages.sh

test-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
	cargo test --workspace --release

test-python: build lint browser ns2 ns3 tshark uml
	$(VPY) -m pytest -q

.PHONY: browser ns2 ns3 tshark uml pgo-tools

# The report's HTML test loads the pages in a real headless browser (tests/test_report_browser.py).
# Installed only when missing and we are root; otherwise the test is skipped and says why.
browser:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium for the browser test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends chromium >/dev/null \
	    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null; } \
	    || echo "warning: could not install chromium; the browser test will be skipped" >&2; \
	else echo "note: chromium is missing (install it as root: apt-get install chromium); the browser test will be skipped" >&2; fi

# ns-2.35 (Debian's ns2) for the TCP cross-check against the simulator that produced the
# seeds' numbers (tests/ns2/crosscheck.py, tests/test_ns2_crosscheck.py). Same rules as browser.
ns2:
	@if command -v ns >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing ns2 for the ns-2 cross-check"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends ns2 >/dev/null \
	    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends ns2 >/dev/null; } \
	    || echo "warning: could not install ns2; the ns-2 cross-check will be skipped" >&2; \
	else echo "note: ns2 is missing (install it as root: apt-get install ns2); the ns-2 cross-check will be skipped" >&2; fi

# Debian's tshark reads back the capture of metrics.pcap (tests/test_pcap.py). Same rules as
# browser.
tshark:
	@if command -v tshark >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing tshark for the capture test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends tshark >/dev/null \
	    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends tshark >/dev/null; } \
	    || echo "warning: could not install tshark; the capture test will be skipped" >&2; \
	else echo "note: tshark is missing (install it as root: apt-get install tshark); the capture test will be skipped" >&2; fi

# Debian's user-mode-linux: a Linux 6.1 kernel run as a process, whose modules carry the queue
# discs (pie, codel, fq_codel) and DCTCP that this machine's kernel lacks; the guest needs kmod
# (modprobe) and ethtool (python/aqmlab/testbed/linux_qdisc.py, tests/test_linux_qdisc.py).
# Same rules as browser.
uml:
	@if command -v linux.uml >/dev/null && command -v ethtool >/dev/null && command -v modprobe >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing user-mode-linux, kmod and ethtool for Linux's queue discs"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends user-mode-linux kmod ethtool >/dev/null \
	    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends user-mode-linux kmod ethtool >/dev/null; } \
	    || echo "warning: could not install user-mode-linux; the Linux queue-disc reference will be skipped" >&2; \
	else echo "note: user-mode-linux is missing (install it as root: apt-get install user-mode-linux kmod ethtool); the Linux queue-disc reference will be skipped" >&2; fi

# ns-3.44 (PyPI's ns3 wheel and its cppyy) for the cross-check of tests/ns3/: the `ns3` extra of
# pyproject.toml, installed into the venv when missing. Its wheel exists for CPython 3.11 only;
# a failed install leaves a warning, and the cross-check is skipped naming this target.
NS3_REQ = $$($(VPY) -c 'import sys; t = __import__("tomllib" if sys.version_info >= (3, 11) else "tomli"); \
  print(" ".join(t.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ns3"]))')

ns3: venv
	@if $(VPY) -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("ns3") and u.find_spec("cppyy")))'; then :; \
	else \
	  echo "installing $(NS3_REQ) for the ns-3 cross-check"; \
	  $(VPY) -m pip install --quiet $(NS3_REQ) \
	    || echo "warning: could not install $(NS3_REQ); the ns-3 cross-check will be skipped" >&2; \
	fi

# llvm-profdata for the engine's profile-guided build (`build`): Debian's llvm-N, N being the
# major version of rustc's LLVM. Same rules as browser; with PGO=0, nothing is installed.
pgo-tools:
	@if [ "$(PGO)" = 0 ] || tools/pgo.sh tool >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  v=$$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p'); \
	  echo "installing llvm-$$v (llvm-profdata) for the engine's profile-guided build"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends llvm-$$v >/dev/null \
	    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends llvm-$$v >/dev/null; } \
	    || echo "warning: could not install llvm-$$v; the engine is built without its profile" >&2; \
	else echo "note: no llvm-profdata for rustc's LLVM (rustup component add llvm-tools, or apt-get install llvm-N as root); the engine is built without its profile" >&2; fi

lint: venv
	$(VENV)/bin/ruff check python tests tools
	$(VENV)/bin/ruff format --check python tests tools
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy tools

# The schemes the profile is trained on, each on the canonical scenario with its defaults; the
# bench runs these and the L4S schemes and the step queue (PI2, DualPI2, Step) beside them.
AQM_KINDS := droptail ared-feng ared autotune-red pi rem blue avq ap-red st-red st-pi pie codel fq-codel \
  fq-pie cobalt fq-cobalt
BENCH_KINDS := $(AQM_KINDS) pi2 dualpi2 step
# The scenario files the bench times, beside the schemes; the profile's training runs them too.
BENCH_FILES := scenarios/canonical.toml scenarios/canonical-sack.toml scenarios/canonical-linux.toml \
  scenarios/web.toml
BENCH_REPS ?= 3

bench: build
	$(BENCH) --reps $(BENCH_REPS) $(BENCH_FILES) \
	  $(foreach k,$(BENCH_KINDS),scenarios/canonical.toml@$(k))
	$(MAKE) bench-scale
	$(MAKE) bench-startup
	$(MAKE) bench-testbed
	$(MAKE) bench-experiments

# The testbed router: packets per second of the queue+AQM path in
# memory, then the throughput of real kernel TCP through the TUN devices at
# link rates up to 10 Gbit/s (needs root; skipped with a note otherwise).
bench-testbed: build
	./target/release/aqmlab-router --bench
	$(VPY) -m aqmlab.testbed.bench

# The canonical dumbbell scaled from 100 to 100 000 flows (10 Mbit/s to 10 Gbit/s), a
# fixed number of events each, 3 times over: events/s, ns/event, the same with each slice of the
# run timed by its fastest repetition and its ratio to the 100-flow row,
# simulated s per wall s at that speed, peak memory, bytes per flow; then the set-up of 200 000
# flows starting at one instant.
bench-scale: build
	$(BENCH) --scale scenarios/canonical.toml

# The engine (built as for `make bench`) against an earlier revision's, runs
# alternated (tools/bench_against.sh): on a shared machine whose speed drifts by a third, the
# ratio is the figure that holds. REV defaults to the engine before the scaling work and
# profile-guided optimisation (about 540 simulated s per s on a quiet machine).
REV ?= 30155eb
ROUNDS ?= 8
bench-against: build
	$$(if [ "$(USE_PGO)" = yes ]; then echo env $(PGO_ENV); fi) cargo build --release --quiet \
	  -p aqmlab-core --example bench
	tools/bench_against.sh $$(if [ "$(USE_PGO)" = yes ]; then echo target/pgo-use; else echo target; fi)/release/examples/bench \
	  $(REV) $(ROUNDS)

# The whole `aqmlab run` command against the engine alone, 21 runs each.
bench-startup: build
	$(VPY) tests/bench_startup.py scenarios/canonical.toml 21

# The thesis' experiments in full: every scheme, every seed, full length, on
# 2 local workers; prints the wall time and the overhead beyond the engine's own time.
BENCH_EXPERIMENTS ?= thesis-*
BENCH_JOBS ?= 2

bench-experiments: build
	$(VPY) -m aqmlab reproduce '$(BENCH_EXPERIMENTS)' --jobs $(BENCH_JOBS) --no-report --verbose \
	  --out bench-out/experiments

clean:
	cargo clean
	rm -rf $(VENV) demo-out bench-out dist .pytest_cache .ruff_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f python/aqmlab/_core*.so
