#!/bin/bash
# When does headless Chromium release the images it holds in tight mode?
# (issue 16: icons at 20 ms / 8 Mbit.) Serves the built-in icons page from
# nginx over h2 (TLS) inside a testbed, instrumented with a script at the end
# of its body that records Navigation/Resource/Paint Timing after onload, and
# a copy whose parser a same-origin script blocks for 300 ms ("slow"), then
# loads each in Chromium RUNS times per RTT. Prints, per load, the document's
# first byte, the document's creation (domLoading), the parser's end
# (domInteractive), first paint and the median image's requestStart (the
# release), in ms from navigation start.
# Needs root, nginx, chromium, python3, openssl.
# Usage: [SPDYLAB=bin] [RUNS=3] [RTTS='20ms 60ms 150ms'] scripts/held-images.sh
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -euo pipefail
B=${SPDYLAB:-$(dirname "$0")/../target/release/spdylab}; B=$(realpath "$B")
RUNS=${RUNS:-3}; RTTS=${RTTS:-20ms 60ms 150ms}
D=$(mktemp -d); trap 'rm -rf $D' EXIT; chmod 755 $D
"$B" sites icons --export $D/www >/dev/null
W=$D/www/icons.spdylab.test
openssl req -x509 -newkey rsa:2048 -nodes -keyout $D/key.pem -out $D/cert.pem -days 2 \
  -subj /CN=icons.spdylab.test -addext subjectAltName=DNS:icons.spdylab.test 2>/dev/null
chmod -R a+rX $D
cat > $D/nginx.conf <<CONF
worker_processes 1; daemon off; pid $D/nginx.pid; error_log $D/error.log;
events { worker_connections 1024; }
http { access_log off; include /etc/nginx/mime.types;
  server { listen 443 ssl http2; ssl_certificate $D/cert.pem; ssl_certificate_key $D/key.pem;
    root $W; add_header Timing-Allow-Origin *;
    location = /slow.js { proxy_pass http://127.0.0.1:8081; } } }
CONF
cat > $D/slow.py <<'PY'
import http.server, socketserver, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_GET(self):
        time.sleep(0.3)
        b = b'/* 300 ms late */'
        self.send_response(200); self.send_header('Content-Type', 'application/javascript')
        self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
S(('127.0.0.1', 8081), H).serve_forever()
PY
python3 - "$W" <<'PY'
import sys
w = sys.argv[1]
html = open(f'{w}/index.html').read().replace('"//icons.spdylab.test/', '"/')
probe = '''<pre id="t"></pre><script>
addEventListener('load', function () { setTimeout(function () {
  var t = performance.timing, n = t.navigationStart, o = {};
  ['responseStart', 'domLoading', 'domInteractive'].forEach(function (k) { o[k] = t[k] - n; });
  o.requests = performance.getEntriesByType('resource').filter(function (e) { return /png$/.test(e.name); })
    .map(function (e) { return Math.round(e.requestStart); }).sort(function (a, b) { return a - b; });
  var p = performance.getEntriesByType('paint'); o.paint = p.length ? Math.round(p[0].startTime) : null;
  document.getElementById('t').textContent = 'TIMING' + JSON.stringify(o) + 'END';
}, 0); });
</script>'''
open(f'{w}/timed.html', 'w').write(html.replace('</body>', probe + '</body>'))
open(f'{w}/slow.html', 'w').write(html.replace('</body>', '<script src="/slow.js"></script>' + probe + '</body>'))
PY
cat > $D/load.sh <<LOAD
#!/bin/sh
chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=\$(mktemp -d -p $D) \\
  --ignore-certificate-errors --host-resolver-rules="MAP icons.spdylab.test server" \\
  --timeout=3000 --dump-dom https://icons.spdylab.test/\$1 2>/dev/null | grep -o 'TIMING{.*}END' | head -1
LOAD
chmod +x $D/load.sh
printf "%-6s %-6s %4s %10s %10s %14s %6s %8s %14s\n" rtt page run firstbyte domLoading domInteractive paint release "release-first"
for rtt in $RTTS; do for page in timed slow; do for i in $(seq $RUNS); do
  line=$("$B" shell --rtt $rtt --rate 8mbit \
    --server-cmd "python3 $D/slow.py & exec nginx -c $D/nginx.conf" -- $D/load.sh $page.html 2>/dev/null || true)
  python3 - "$rtt" "$page" "$i" "$line" <<'PY'
import json, sys
rtt, page, i, line = sys.argv[1:]
if 'TIMING' not in line:
    print(f"{rtt:<6} {page:<6} {i:>4} (no timing: the load failed)"); sys.exit()
o = json.loads(line[6:-3]); r = o['requests']; rel = r[len(r) // 2]
print(f"{rtt:<6} {page:<6} {i:>4} {o['responseStart']:>10} {o['domLoading']:>10} {o['domInteractive']:>14} {o['paint'] or '-':>6} {rel:>8} {rel - o['responseStart']:>14}")
PY
done; done; done
