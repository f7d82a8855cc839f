#!/bin/bash
# spdylab bench against wrk (h1, h1 pipelined x8 by wrk's Lua, https) and h2load
# (h2, h2c) on the same nginx (1 worker) serving a 612-byte file on loopback, same
# connections, one generator thread each: requests per generator CPU-second. Each
# pair runs in turn (ours, theirs) RUNS times in one invocation; medians and the
# ratio of medians are printed, then every run.
# Needs nginx, wrk, h2load: apt-get install nginx wrk nghttp2-client (wrk is not in
# the Makefile's DEPS: no test runs this script).
# With two cores or more, nginx's worker runs on core 0 and each generator on
# core 1 (taskset; PIN=0 lets the scheduler place them, and a generator may
# then share nginx's core in one run and not in the next). Either way one
# tool's runs spread widely on the 2-core VM (h1, ours, 7 runs of 10 s, 25 Nov
# 2026: 75 773-88 543 requests per CPU-second pinned, 71 722-89 606 not).
# Usage: [ONLY='h2/h2load h2c/h2load'] [PIN=0] scripts/bench-generators.sh [SECONDS] [CONNS] [RUNS]
# (ONLY: the cases to run, by name; all by default)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -euo pipefail
T=${1:-10}; C=${2:-32}; RUNS=${3:-3}
B=${SPDYLAB:-$(dirname "$0")/../target/release/spdylab}
ON_SERVER_CORE=(); ON_GENERATOR_CORE=()
if [ "${PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
  ON_SERVER_CORE=(taskset -c 0); ON_GENERATOR_CORE=(taskset -c 1)
fi
D=$(mktemp -d); trap 'kill $(cat $D/nginx.pid 2>/dev/null) 2>/dev/null; rm -rf $D' EXIT
chmod 755 $D; mkdir -p $D/www; head -c 612 /dev/zero | tr '\0' 'x' > $D/www/index.html
openssl req -x509 -newkey rsa:2048 -nodes -keyout $D/key.pem -out $D/cert.pem -days 2 -subj /CN=localhost 2>/dev/null
cat > $D/nginx.conf <<CONF
worker_processes 1; daemon on; pid $D/nginx.pid; error_log $D/error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; sendfile on;
  server { listen 127.0.0.1:18081; listen 127.0.0.1:18444 ssl http2;
    ssl_certificate $D/cert.pem; ssl_certificate_key $D/key.pem; root $D/www; }
  server { listen 127.0.0.1:18082 http2; root $D/www; } }
CONF
"${ON_SERVER_CORE[@]}" nginx -c $D/nginx.conf -p $D
cat > $D/pipeline.lua <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 8 do r[i] = wrk.format(nil, "/index.html") end
  req = table.concat(r)
end
request = function() return req end
LUA
cpu() { /usr/bin/time -f "%U %S" -o $D/cpu "${ON_GENERATOR_CORE[@]}" "$@" > $D/out 2>&1; tail -1 $D/cpu | awk '{print $1+$2}'; }
# Each runner prints "REQ_PER_S CPU_S".
ours() { # protocol url extra...
  local p=$1 u=$2; shift 2
  local c; c=$(cpu $B bench "$u" --protocol $p -c $C -t 1 -d ${T}s --warmup 0s --insecure --json "$@")
  echo "$(python3 -c "import json; print(json.load(open('$D/out'))['requests_per_sec'])") $c"
}
wrk_() { local c; c=$(cpu wrk -t1 -c$C -d${T}s "$@"); echo "$(awk '/Requests\/sec/ {print $2}' $D/out) $c"; }
h2load_() { local c; c=$(cpu h2load -t1 -c$C -m100 -D$T "$@"); echo "$(awk '/finished in/ {print $4}' $D/out) $c"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
LOG=$D/runs
pair() { # name ours-command... -- theirs-command...
  local name=$1; shift
  [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || return 0
  local a=() b=(); while [ "$1" != "--" ]; do a+=("$1"); shift; done; shift; b=("$@")
  for i in $(seq $RUNS); do
    read r c < <("${a[@]}"); echo "$name ours $i $r $c $(echo "$r * $T / $c" | bc -l)" >> $LOG
    read r c < <("${b[@]}"); echo "$name theirs $i $r $c $(echo "$r * $T / $c" | bc -l)" >> $LOG
  done
  local o t
  o=$(awk -v n="$name" '$1==n && $2=="ours" {print $6}' $LOG | median)
  t=$(awk -v n="$name" '$1==n && $2=="theirs" {print $6}' $LOG | median)
  printf "%-14s %14.0f %14.0f %8.2fx\n" "$name" "$o" "$t" "$(echo "$o / $t" | bc -l)"
}
echo "nginx (1 worker), 612-byte file, $C connections, 1 generator thread, ${T}s a run, $RUNS runs each (ours, theirs, in turn), ${ON_GENERATOR_CORE[*]:-not pinned}"
printf "%-14s %14s %14s %9s\n" "case" "ours req/CPU-s" "theirs" "ratio"
U=http://127.0.0.1:18081/index.html; S=https://127.0.0.1:18444/index.html
pair "h1/wrk" ours http $U -- wrk_ --latency $U
pair "h1x8/wrk-lua" ours http-pipelined $U --depth 8 -- wrk_ -s $D/pipeline.lua $U
pair "https/wrk" ours https $S -- wrk_ $S
pair "h2/h2load" ours h2 $S --streams 100 -- h2load_ $S
pair "h2c/h2load" ours h2c http://127.0.0.1:18082/index.html --streams 100 -- h2load_ http://127.0.0.1:18082/index.html
echo; echo "every run: case who run req/s cpu-s req/cpu-s"; column -t $LOG
