#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer) of every parser of outside
# bytes; the targets are in fuzz/ (see docs/fuzzing.md). Runs each target
# named (default: all) for SECONDS (default 60), one after the other, keeping
# the corpus in fuzz/corpus/TARGET, and prints runs and executions per target.
# Installs what it needs when missing: a nightly toolchain (rustup) and
# cargo-fuzz (crates.io). Exit status 1 if any target found a crash; the
# input is in fuzz/artifacts/TARGET/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 3600 spdy3 h1
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
SECONDS_EACH=${1:-60}; shift || true
rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || mapfile -t TARGETS < <(cargo +nightly fuzz list)
LOGS=$(mktemp -d)
status=0
for t in "${TARGETS[@]}"; do
  mkdir -p corpus/$t
  seeds=(); [ -d seeds/$t ] && seeds=(seeds/$t)
  if cargo +nightly fuzz run "$t" corpus/$t "${seeds[@]}" -- \
       -max_total_time="$SECONDS_EACH" -print_final_stats=1 >"$LOGS/$t.log" 2>&1; then
    result=ok
  else
    result="CRASH (fuzz/artifacts/$t/; log $LOGS/$t.log)"; status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$LOGS/$t.log" | grep -o '[0-9]*$')
  printf '%-16s %6ss  %12s executions  %s\n' "$t" "$SECONDS_EACH" "${execs:-?}" "$result"
done
exit $status
