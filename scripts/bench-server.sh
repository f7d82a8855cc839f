#!/usr/bin/env bash
# Throughput of the built-in server beside nginx, same files, same run, on loopback:
# wrk (h1 keep-alive, h1 pipelined depth 8, https) and h2load (h2, h2c).
# Needs: nginx, wrk, h2load (nghttp2-client), openssl. Prints one line per case.
# Usage: [SPDYLAB=bin] [DURATION=5] [CONNS=50] scripts/bench-server.sh
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
S=${SPDYLAB:-target/release/spdylab}
D=${DURATION:-5}
C=${CONNS:-50}
W=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; [ -f $W/nginx.pid ] && kill $(cat $W/nginx.pid) 2>/dev/null; rm -rf $W' EXIT
HOST=icons.spdylab.test
PATHNAME=/png/png1.png
$S sites icons --export $W/www >/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=$HOST \
  -keyout $W/key.pem -out $W/cert.pem 2>/dev/null
cat > $W/nginx.conf <<NGX
worker_processes 2;
pid $W/nginx.pid;
error_log $W/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  types { image/png png; text/html html; }
  server { listen 127.0.0.1:9080; root $W/www/$HOST; }
  server { listen 127.0.0.1:9081 http2; root $W/www/$HOST; }
  server { listen 127.0.0.1:9443 ssl http2; root $W/www/$HOST;
           ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem; }
}
NGX
nginx -c $W/nginx.conf
$S serve --site icons --listen 127.0.0.1:8080 --tls-listen 127.0.0.1:8443 >/dev/null &
sleep 1
cat > $W/pipeline.lua <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 8 do r[i] = wrk.format(nil, "/png/png1.png") end
  req = table.concat(r)
end
request = function() return req end
LUA
wrk_rps() { wrk -t1 -c$C -d${D}s -H "Host: $HOST" "$@" | awk '/Requests\/sec/ {print $2}'; }
h2_rps() { h2load -t1 -c$C -m10 -D $D -H ":authority: $HOST" "$1" | awk '/^finished in/ {print $4}'; }
row() { printf '%-22s builtin %10s req/s   nginx %10s req/s   ratio %s\n' "$1" "$2" "$3" \
  "$(python3 -c "print(round($2/$3,2))" 2>/dev/null || echo -)"; }
row "h1 keep-alive"   "$(wrk_rps http://127.0.0.1:8080$PATHNAME)" "$(wrk_rps http://127.0.0.1:9080$PATHNAME)"
row "h1 pipelined x8" "$(wrk_rps -s $W/pipeline.lua http://127.0.0.1:8080$PATHNAME)" "$(wrk_rps -s $W/pipeline.lua http://127.0.0.1:9080$PATHNAME)"
row "https (h1)"      "$(wrk_rps https://127.0.0.1:8443$PATHNAME)" "$(wrk_rps https://127.0.0.1:9443$PATHNAME)"
row "h2 (h2load -m10)"  "$(h2_rps https://127.0.0.1:8443$PATHNAME)" "$(h2_rps https://127.0.0.1:9443$PATHNAME)"
row "h2c (h2load -m10)" "$(h2_rps http://127.0.0.1:8080$PATHNAME)" "$(h2_rps http://127.0.0.1:9081$PATHNAME)"
