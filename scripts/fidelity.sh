#!/usr/bin/env bash
# The emulator's fidelity and cost, ours beside Mahimahi's (issue 21), measured
# in one run with the same independent tools (ping, iperf3):
#   RTT at 10/150/490 ms (ping -c 50 -i 0.2 on an unshaped link: mean, mdev),
#   goodput down at 64 kbit (30 s), 1, 8, 100 Mbit and 1 Gbit (iperf3 -R, 20 ms
#   RTT, drop-tail queue of 256 packets or one BDP where more (queue_for),
#   first 2 s omitted; % of the rate), and for ours the same link's
#   `spdylab calibrate` (goodput down as the sender's TCP counts it, and the
#   link's own bytes on the wire: 100 % when it was never idle),
#   the emulator's CPU at 100 Mbit (its processes' utime+stime from /proc over
#   6 s of an iperf3 -R at 10 ms RTT: % of one core),
#   unshaped throughput (iperf3 for 10 s, no delay, no rate).
# Mahimahi (mm-delay, mm-link; built from source, installed setuid) runs inside
# a network namespace of its own (unshare -n), so its ip_forward and iptables
# rules never touch the machine's; build it with its addresses moved into
# 198.18.0.0/15 (in its src/util/address.cc, Address::cgnat returns
# "198.19.254.N"; stock Mahimahi uses 10.0.0.N or 100.64.0.N, which this
# project never sends to): scripts/build-mahimahi.sh does it. Without it, its
# column says why.
# Needs root, iperf3 and ping.
# Usage: [SPDYLAB=bin] [MAHIMAHI=0] [ONLY='rtt goodput cpu unshaped'] scripts/fidelity.sh [--quick]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -u
S=${SPDYLAB:-target/release/spdylab}
QUICK=0; [ "${1:-}" = --quick ] && QUICK=1
PINGS=50; T=10; T64=30
[ $QUICK = 1 ] && { PINGS=20; T=5; T64=15; }
TMP=$(mktemp -d /tmp/fidelity.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"   # Mahimahi runs as nobody and reads its traces here

mm_why=""
if [ "${MAHIMAHI:-1}" = 0 ]; then
  mm_why="n/a (skipped: MAHIMAHI=0)"
elif ! command -v mm-delay >/dev/null || ! command -v mm-link >/dev/null; then
  mm_why="n/a (Mahimahi not installed: mm-delay, mm-link not on PATH)"
elif ! unshare -n true 2>/dev/null; then
  mm_why="n/a (cannot make a network namespace for it: unshare -n failed)"
fi

bps() { python3 -c 'import json,sys
try: print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])
except Exception: print("")'; }
ping_stats() { # "mean mdev" in ms from ping -q's last line
  tail -1 | sed -n 's|.*= *[0-9.]*/\([0-9.]*\)/[0-9.]*/\([0-9.]*\) ms.*|\1 \2|p'; }

# A constant-rate Mahimahi trace: one line per 1500-byte opportunity, in ms,
# over a 3 s period (Mahimahi repeats it).
trace() { python3 - "$1" "$2" <<'EOF'
import sys
bits, out = float(sys.argv[1]), sys.argv[2]
n = round(bits * 3 / 12000)
with open(out, "w") as f:
    for k in range(1, n + 1):
        f.write("%d\n" % max(1, round(k * 3000 / n)))
EOF
}

# Each Mahimahi shell checks ip_forward in its own namespace, and a new
# namespace takes its IPv4 settings from the machine's, not from its parent:
# while this script runs, new namespaces inherit from the one that makes them
# (devconf_inherit_init_net=3; the old value is put back on exit), so that the
# machine's own ip_forward is never touched.
if [ -z "$mm_why" ]; then
  inherit=$(cat /proc/sys/net/core/devconf_inherit_init_net)
  trap 'echo "$inherit" > /proc/sys/net/core/devconf_inherit_init_net; rm -rf "$TMP"' EXIT
  echo 3 > /proc/sys/net/core/devconf_inherit_init_net ||
    mm_why="n/a (cannot set net.core.devconf_inherit_init_net=3 for its nested shells)"
fi

# Runs a command inside Mahimahi in a network namespace of its own, with an
# iperf3 server outside the emulated link (on its side of MAHIMAHI_BASE).
# Mahimahi refuses to run as root ("please run as non-root"): its setuid
# binaries run as nobody. The last argument is the command (a sh -c string);
# the others are the chain of shells (mm-link's options end with --).
mm() {
  local cmd=${!#}; local shells=("${@:1:$#-1}")
  unshare -n sh -c '
    ip link set lo up; echo 1 > /proc/sys/net/ipv4/ip_forward
    iperf3 -s -1 >/dev/null 2>&1 & srv=$!
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp "$@"; rc=$?
    kill $srv 2>/dev/null; exit $rc' \
    mm "${shells[@]}" sh -c "$cmd" 2>"$TMP/mm.err"
}

ours_rtt() { $S shell --rtt "$1"ms -- ping -c $PINGS -i 0.2 -q server 2>/dev/null | ping_stats; }
mm_rtt() { mm mm-delay $(($1 / 2)) "ping -c $PINGS -i 0.2 -q \$MAHIMAHI_BASE" | ping_stats; }

# The drop-tail queue: 256 packets, or one bandwidth-delay product where that
# is more (1 Gbit at 20 ms: 1667). Cubic behind a queue of a sixth of the BDP
# cannot fill the link (1 Gbit: 59 % with 256 packets, 96.5 % with 2000, on
# either emulator), so a smaller queue would measure TCP, not the emulator.
queue_for() { python3 -c "import math,sys; print(max(256, math.ceil(float(sys.argv[1]) * 0.02 / 12000)))" "$1"; }
ours_goodput() { # rate-spec seconds bits
  $S shell --rate "$1" --rtt 20ms --queue "$(queue_for "$3")p" --server-cmd 'iperf3 -s -1 >/dev/null' -- \
    iperf3 -c server -R -t "$2" -O 2 -J 2>/dev/null | bps; }
ours_calibrate() { # rate-spec seconds bits: "goodput% wire%" of the down direction
  $S calibrate --rtt 20ms --rate "$1" --queue "$(queue_for "$3")p" --bulk-time "$2"s \
    --echo-samples 5 --datagrams 100 --json 2>/dev/null | python3 -c 'import json,sys
try:
    d = json.load(sys.stdin)["down_bps"]
    print("%.2f %.2f" % (100 * d["ratio"], 100 * d["wire_bps"] / d["spec"]))
except Exception: print("")'; }
mm_goodput() { # bits seconds
  trace "$1" "$TMP/rate.tr"; local q; q=$(queue_for "$1")
  mm mm-delay 10 mm-link "$TMP/rate.tr" "$TMP/rate.tr" --uplink-queue=droptail \
    --uplink-queue-args=packets=$q --downlink-queue=droptail --downlink-queue-args=packets=$q -- \
    "iperf3 -c \$MAHIMAHI_BASE -R -t $2 -O 2 -J" | bps; }

tree() { # a process and all its descendants
  echo "$1"; local c; for c in $(pgrep -P "$1"); do tree "$c"; done; }
cpu_ticks() { # "pid ticks" (utime+stime) of each process under $1 named $2 (or $3)
  local p f
  for p in $(tree "$1"); do
    case "$(cat /proc/$p/comm 2>/dev/null)" in "$2"|"${3:-$2}") ;; *) continue ;; esac
    f=($(sed 's/.*) //' /proc/$p/stat 2>/dev/null)); echo "$p $((${f[11]:-0} + ${f[12]:-0}))"
  done; }
cpu_during() { # pid names... : % of a core over 6 s, from 3 s into the transfer,
  # summed over the processes alive at both ends (helpers that exit drop out)
  sleep 3; local a b; a=$(cpu_ticks "$@"); sleep 6; b=$(cpu_ticks "$@")
  A="$a" B="$b" python3 -c "import os
def ticks(v): return dict(l.split() for l in os.environ[v].splitlines() if l.strip())
a, b = ticks('A'), ticks('B')
print('%.1f' % (100 * sum(int(b[p]) - int(a[p]) for p in b if p in a) / $(getconf CLK_TCK) / 6))"; }
ours_cpu() {
  $S shell --rate 100mbit --rtt 10ms --server-cmd 'iperf3 -s -1 >/dev/null' -- \
    iperf3 -c server -R -t 12 -J >"$TMP/cpu.json" 2>/dev/null & local job=$!
  local c; c=$(cpu_during $job "$(basename "$S" | cut -c1-15)"); wait $job
  echo "$c $(bps <"$TMP/cpu.json")"; }
mm_cpu() {
  trace 100e6 "$TMP/100m.tr"
  mm mm-delay 5 mm-link "$TMP/100m.tr" "$TMP/100m.tr" -- \
    "iperf3 -c \$MAHIMAHI_BASE -R -t 12 -J" >"$TMP/cpu.json" & local job=$!
  local c; c=$(cpu_during $job mm-delay mm-link); wait $job
  echo "$c $(bps <"$TMP/cpu.json")"; }

ours_unshaped() { $S shell --server-cmd 'iperf3 -s -1 >/dev/null' -- iperf3 -c server -t $T -J 2>/dev/null | bps; }
mm_unshaped() { mm mm-delay 0 "iperf3 -c \$MAHIMAHI_BASE -t $T -J" | bps; }

# Mahimahi's cell: its figure, or why there is none.
mmcell() { # fmt value...
  if [ -n "$mm_why" ]; then echo "$mm_why"; return; fi
  if [ -z "${2:-}" ]; then echo "n/a (failed: $(tail -1 "$TMP/mm.err" 2>/dev/null | cut -c1-60))"; return; fi
  printf "$1" "${@:2}"; }
pct() { python3 -c "import sys; print('%.2f' % (100 * float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
printf "%-24s %-12s %-30s %s\n" measure spec ours mahimahi
want rtt && for rtt in 10 150 490; do
  read -r om od <<<"$(ours_rtt $rtt)"; mmr=""; [ -z "$mm_why" ] && mmr=$(mm_rtt $rtt)
  read -r mmm mmd <<<"$mmr"
  printf "%-24s %-12s %-30s %s\n" "rtt ${rtt}ms (mean, mdev)" "$rtt ms" \
    "${om:-?} ms, mdev ${od:-?} ms" "$(mmcell "%s ms, mdev %s ms" "${mmm:-}" "${mmd:-}")"
done
want goodput && for r in 64kbit:64e3 1mbit:1e6 8mbit:8e6 100mbit:100e6 1gbit:1e9; do
  name=${r%%:*}; bits=${r#*:}; t=$T; [ $name = 64kbit ] && t=$T64
  o=$(ours_goodput $name $t $bits); m=""; [ -z "$mm_why" ] && m=$(mm_goodput $bits $t)
  oc="?"; [ -n "$o" ] && oc="$(python3 -c "print('%.4g' % ($o/1e6))") Mbit/s ($(pct $o $bits) %)"
  mc=""; [ -n "$m" ] && mc="$(python3 -c "print('%.4g' % ($m/1e6))") Mbit/s ($(pct $m $bits) %)"
  printf "%-24s %-12s %-30s %s\n" "goodput $name ${t}s" "$name" "$oc" "$(mmcell "%s" "$mc")"
  read -r cg cw <<<"$(ours_calibrate $name $t $bits)"
  printf "%-24s %-12s %-30s %s\n" "  calibrate $name ${t}s" "$name" \
    "${cg:-?} %, on the wire ${cw:-?} %" "n/a (spdylab's own tool)"
done
if want cpu; then
at() { python3 -c "import sys; print('%s %% of a core at %.1f Mbit/s' % (sys.argv[1], float(sys.argv[2] or 0) / 1e6))" $1 "${2:-0}"; }
read -r oc ob <<<"$(ours_cpu)"; mc=""; [ -z "$mm_why" ] && mc=$(mm_cpu)
read -r mc mb <<<"$mc"
printf "%-24s %-12s %-30s %s\n" "emulator cpu 100mbit" "-" "$(at "$oc" "$ob")" "$(mmcell "%s" "${mc:+$(at "$mc" "$mb")}")"
fi
if want unshaped; then
o=$(ours_unshaped); m=""; [ -z "$mm_why" ] && m=$(mm_unshaped)
oc="?"; [ -n "$o" ] && oc="$(python3 -c "print('%.2f' % ($o/1e9))") Gbit/s"
mc=""; [ -n "$m" ] && mc="$(python3 -c "print('%.2f' % ($m/1e9))") Gbit/s"
printf "%-24s %-12s %-30s %s\n" "unshaped ${T}s" "-" "$oc" "$(mmcell "%s" "$mc")"
fi
