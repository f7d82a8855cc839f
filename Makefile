# spdylab — the two commands a fresh machine needs: `make demo` and `make test`.
# Both install their system packages first (Debian; root or sudo): `make demo`
# only what the demo runs (DEMO_DEPS), `make test` everything (DEPS and h2spec).

CARGO ?= cargo
BIN := target/release/spdylab
# The demo (built-in server, model client) runs only `ip` from iproute2 at run
# time; building needs a C compiler (ring) and CA certificates (cargo's downloads).
DEMO_DEPS := iproute2 ca-certificates build-essential
# Everything the tests use besides: tools they drive, Chromium, real servers and peers.
DEPS := $(DEMO_DEPS) iputils-ping iperf3 tcpdump procps pkg-config \
        curl nghttp2-client python3-pil python3-jsonschema chromium nginx openssl \
        maven default-jdk-headless apache2 h2o caddy python3-pip slurm-wlm munge
H2SPEC := $(HOME)/go/bin/h2spec
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: demo test deps demo-deps rootless build lint fmt clean fuzz

# $(call install,PACKAGES): apt-get installs those of PACKAGES that are missing.
define install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi
endef

demo-deps:
	$(call install,$(DEMO_DEPS))

# Rootless use (and its tests, which run spdylab as uid 65534) needs two
# things of the machine: /dev/net/tun open to every user — mode 0666, as
# systemd-udev's default rule (50-udev-default.rules) leaves it; many images
# keep it root-only (0600), and creating a device through it still takes
# CAP_NET_ADMIN in a user namespace — and unprivileged user namespaces
# (off in some Debian kernels: kernel.unprivileged_userns_clone = 0).
rootless:
	@[ -c /dev/net/tun ] || $(SUDO) modprobe tun 2>/dev/null || true
	@if [ -c /dev/net/tun ] && [ "$$(stat -c %a /dev/net/tun)" != 666 ]; then \
	  echo "making /dev/net/tun usable by every user (mode $$(stat -c %a /dev/net/tun) -> 666) for rootless use and its tests"; \
	  $(SUDO) chmod 0666 /dev/net/tun; \
	fi
	@if [ "$$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null)" = 0 ]; then \
	  echo "allowing unprivileged user namespaces (kernel.unprivileged_userns_clone = 1) for rootless use and its tests"; \
	  $(SUDO) sysctl -q -w kernel.unprivileged_userns_clone=1; \
	fi
	@if [ "$$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)" = 0 ]; then \
	  echo "allowing user namespaces (user.max_user_namespaces = 15000) for rootless use and its tests"; \
	  $(SUDO) sysctl -q -w user.max_user_namespaces=15000; \
	fi

deps: rootless
	$(call install,$(DEPS))
	@command -v go >/dev/null || $(SUDO) apt-get install -y -q --no-install-recommends golang-go
	@/usr/bin/python3 -c 'import aioquic' 2>/dev/null || { echo "installing aioquic (PyPI: the independent h3 client)"; \
	  $(SUDO) /usr/bin/python3 -m pip install --break-system-packages -q aioquic; }
	@[ -x $(H2SPEC) ] || { echo "installing h2spec v2.2.1"; \
	  GOFLAGS=-mod=mod go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible; }

build:
	$(CARGO) build --release --locked

# The main job: YouTube over HTTPS, SPDY/3.1 and HTTP/2 on a 150 ms / 1 Mbit link (about 1.5 minutes).
demo: demo-deps build
	$(SUDO) $(BIN) compare --site youtube --protocols https,spdy3,h2 --rtt 150ms --rate 1mbit --reps 5

# Formatting, then every test (unit, and integration on real namespaces:
# needs root) and the lints, by scripts/test.py: the CLI tests' binary built
# and started first; beside it, at nice 19, the other tests built and run,
# the doc-tests and clippy (the CLI tests mostly wait on emulated links,
# timeouts and children, and leave the CPU half idle). The build's profile
# is Cargo.toml's fast-build. Four CLI test threads on two cores (422 s with
# four, 655 s with libtest's default of one per core; eight made two tests
# fail under the load); none asserts a time.
TEST_THREADS ?= 4
test: deps
	$(CARGO) fmt --all -- --check
	$(SUDO) env "PATH=$$PATH" "CI=$$CI" "CARGO=$(CARGO)" scripts/test.py fast-build $(TEST_THREADS)

# Coverage-guided fuzzing of every parser of outside bytes, FUZZ_SECONDS per target
# (installs a nightly toolchain and cargo-fuzz when missing; docs/fuzzing.md).
# `make test` runs the same parsers' property tests (crates/*/tests/fuzz_*.rs).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

lint:
	$(CARGO) clippy --release --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
