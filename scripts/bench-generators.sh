#!/bin/bash
# spdylab bench against wrk (h1, h1 pipelined x8) and h2load (h2, h2c) on the same
# nginx (1 worker) serving a 612-byte file on loopback, same connections, one
# generator thread each: requests/s and requests/s per generator CPU-second.
# Needs nginx, wrk, h2load (nghttp2-client). Usage: scripts/bench-generators.sh [SECONDS] [CONNS]
set -euo pipefail
T=${1:-10}; C=${2:-32}
B=${SPDYLAB:-$(dirname "$0")/../target/release/spdylab}
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
nginx -c $D/nginx.conf -p $D
cat > $D/pipeline.lua <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 8 do r[i] = wrk.format(nil, "/index.html") end
  req = table.concat(r)
end
request = function() return req end
LUA
cpu() { /usr/bin/time -f "%U %S" -o $D/cpu "$@" > $D/out 2>&1; tail -1 $D/cpu | awk '{print $1+$2}'; }
row() { printf "%-26s %12.0f req/s %8.2f CPU-s %10.0f req per CPU-s\n" "$1" "$2" "$3" "$(echo "$2 * $T / $3" | bc -l)"; }
ours() { # protocol url extra...
  local p=$1 u=$2; shift 2
  local c; c=$(cpu $B bench "$u" --protocol $p -c $C -t 1 -d ${T}s --warmup 0s --insecure --json "$@")
  local r; r=$(python3 -c "import json,sys; print(json.load(open('$D/out'))['requests_per_sec'])")
  row "spdylab $p $*" "$r" "$c"
}
echo "nginx 1.22 (1 worker), 612-byte file, $C connections, 1 generator thread, ${T}s each"
ours http http://127.0.0.1:18081/index.html
c=$(cpu wrk -t1 -c$C -d${T}s --latency http://127.0.0.1:18081/index.html); r=$(awk '/Requests\/sec/ {print $2}' $D/out); row "wrk" "$r" "$c"
ours http-pipelined http://127.0.0.1:18081/index.html --depth 8
c=$(cpu wrk -t1 -c$C -d${T}s -s $D/pipeline.lua http://127.0.0.1:18081/index.html); r=$(awk '/Requests\/sec/ {print $2}' $D/out); row "wrk pipeline.lua x8" "$r" "$c"
ours https https://127.0.0.1:18444/index.html
c=$(cpu wrk -t1 -c$C -d${T}s https://127.0.0.1:18444/index.html); r=$(awk '/Requests\/sec/ {print $2}' $D/out); row "wrk https" "$r" "$c"
ours h2 https://127.0.0.1:18444/index.html --streams 100
c=$(cpu h2load -t1 -c$C -m100 -D$T https://127.0.0.1:18444/index.html); r=$(awk '/finished in/ {print $4}' $D/out); row "h2load h2 -m100" "$r" "$c"
ours h2c http://127.0.0.1:18082/index.html --streams 100
c=$(cpu h2load -t1 -c$C -m100 -D$T http://127.0.0.1:18082/index.html); r=$(awk '/finished in/ {print $4}' $D/out); row "h2load h2c -m100" "$r" "$c"
