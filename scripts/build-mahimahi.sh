#!/usr/bin/env bash
# Builds Mahimahi (mm-delay, mm-link, ...) from source and installs it setuid
# in /usr/local/bin, for scripts/fidelity.sh's side-by-side column (issue 21).
# Its shells' addresses are moved into 198.18.0.0/15: stock Mahimahi uses
# 100.64.0.N (or 10.0.0.N), and this project sends traffic only to loopback
# and to 198.18.0.0/15. Its setuid binaries refuse to run as root; fidelity.sh
# runs them as nobody inside a network namespace of their own.
# The traces/ directory (large LTE traces) is left out: fidelity.sh writes
# its own constant-rate traces.
# Needs root and Debian's packages. Usage: scripts/build-mahimahi.sh SRC_DIR
# where SRC_DIR holds Mahimahi's source (github.com/ravinet/mahimahi).
# Measured here: about 40 s on 2 cores with the packages already installed.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -euo pipefail
SRC=${1:?usage: scripts/build-mahimahi.sh MAHIMAHI_SOURCE_DIR}
cd "$SRC"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  autotools-dev dh-autoreconf autoconf automake libtool protobuf-compiler \
  libprotobuf-dev pkg-config libssl-dev libxcb-present-dev libcairo2-dev \
  libpango1.0-dev apache2-dev dnsmasq-base iptables g++ make >/dev/null
sed -i 's/"100\.64\.0\." + to_string/"198.19.254." + to_string/;
        s/"10\.0\.0\." + to_string/"198.19.254." + to_string/' src/util/address.cc
if grep -rnE '"(100\.64|10\.0\.0)\.' src; then
  echo "build-mahimahi: an address outside 198.18.0.0/15 is left (above)" >&2; exit 1
fi
mkdir -p traces
printf 'dist_pkgdata_DATA =\n' > traces/Makefile.am   # no traces
./autogen.sh >/dev/null 2>&1
./configure >/dev/null
make -j"$(nproc)" >/dev/null
make install >/dev/null
for b in mm-delay mm-link; do
  p=$(command -v $b) || { echo "build-mahimahi: $b not on PATH" >&2; exit 1; }
  [ -u "$p" ] || { echo "build-mahimahi: $p is not setuid" >&2; exit 1; }
done
echo "build-mahimahi: installed $(command -v mm-delay) and $(command -v mm-link) (setuid root, addresses 198.19.254.N)"
