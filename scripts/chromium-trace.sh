#!/usr/bin/env bash
# What Chromium's renderer spends its main thread on while it loads a page
# (issue 49: the model's browser costs, each from a measurement): serves SITE
# with the built-in server on loopback (`spdylab serve --layout mirror`: every
# resource on the page's host, no emulated link, so the network costs ~0 and
# what is left is CPU), lets a headless Chromium settle for 4 s on a blank
# page (as the crosscheck's probe navigates a settled browser), loads the
# page with Blink's trace categories on, and prints the page renderer's main
# thread tasks of at least 1.5 ms: the commit, HTML parsing (ParseHTML),
# scripts (ExecuteScript), style and layout (UpdateStyleAndLayout), paint —
# with a summary per kind, and how long after the main thread painted the
# first contentful frame that frame was presented (Blink stamps FCP with
# the presentation). Times are ms from the page's first ParseHTML.
# Tracing slows Chromium a little: read the figures as upper bounds.
#
# Usage: scripts/chromium-trace.sh SITE [OUT.json]
#   SITE: a built-in site (`spdylab sites`) or a site file (`spdylab import`)
#   OUT:  where to keep the trace (default: a temporary file, removed)
# Needs: chromium (Debian's), python3; SPDYLAB=bin (default target/release/spdylab).
# Example: scripts/chromium-trace.sh youtube
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
S=${SPDYLAB:-target/release/spdylab}
SITE=${1:?usage: scripts/chromium-trace.sh SITE [OUT.json]}
WORK=$(mktemp -d)
OUT=${2:-$WORK/trace.json}
PORT=${PORT:-18443}
cleanup() {
  [ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$S" serve --site "$SITE" --layout mirror --proto https,h2 \
  --tls-listen 127.0.0.1:$PORT --listen 127.0.0.1:0 >"$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 50); do
  grep -q '^ready' "$WORK/serve.log" && break
  sleep 0.1
done
grep -q '^ready' "$WORK/serve.log" || { cat "$WORK/serve.log" >&2; exit 1; }
HOST=$(grep -o 'https://[^:/]*' "$WORK/serve.log" | head -1)
HOST=${HOST#https://}
URL_PATH=$(grep -o "https://$HOST:$PORT/[^ ]*" "$WORK/serve.log" | head -1)
URL_PATH=${URL_PATH#https://$HOST:$PORT}
# No --screenshot: it ends the run at the blank page's load; the trace is
# written once its 9 s are up, and the browser is stopped after.
timeout -s INT 20 chromium --headless=new --no-sandbox --disable-gpu --ignore-certificate-errors \
  --host-resolver-rules="MAP * 127.0.0.1:$PORT" --user-data-dir="$WORK/profile" \
  --trace-startup=devtools.timeline,blink,loading,v8 --trace-startup-format=json \
  --trace-startup-file="$OUT" --trace-startup-duration=9 --window-size=1280,800 \
  "data:text/html,<meta http-equiv=refresh content='4;url=https://$HOST${URL_PATH:-/}'>" \
  >"$WORK/chromium.log" 2>&1 || true
[ -s "$OUT" ] || { echo "no trace: $(tail -3 "$WORK/chromium.log")" >&2; exit 1; }
python3 - "$OUT" "$HOST" <<'EOF'
import collections, json, sys

trace, host = sys.argv[1], sys.argv[2]
events = json.load(open(trace))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
KINDS = [("CommitNavigation", "commit"), ("ExecuteScript", "script"),
         ("ParseHTML", "parse"), ("UpdateStyleAndLayout", "style+layout"),
         ("UpdateLifecycle", "lifecycle"), ("ParseAuthorStyleSheet", "css parse"),
         ("updateImage", "image"), ("ResponseBodyLoader", "response")]
for thread, name in names.items():
    if name != "CrRendererMain":
        continue
    xs = [e for e in events if (e.get("pid"), e.get("tid")) == thread
          and e.get("ph") == "X" and "dur" in e]
    parses = [e for e in xs if e["name"] == "ParseHTML"
              and e.get("args", {}).get("beginData", {}).get("url", "").startswith(f"https://{host}")]
    if not parses:
        continue
    t0 = min(e["ts"] for e in parses)
    xs.sort(key=lambda e: (e["ts"], -e["dur"]))
    tops, end = [], -1
    for e in xs:
        if e["ts"] >= end:
            tops.append(e)
            end = e["ts"] + e["dur"]
    total = collections.Counter()
    print(f"{host}: the page renderer's main thread, tasks >= 1.5 ms (ms from its first ParseHTML)")
    for t in tops:
        if t["ts"] < t0 - 60_000:
            continue
        inner = [e["name"] for e in xs if t["ts"] <= e["ts"] < t["ts"] + t["dur"]]
        kind = next((k for key, k in KINDS for n in inner if key in n), "other")
        total[kind] += t["dur"] / 1000
        if t["dur"] >= 1500:
            print(f"  {(t['ts'] - t0) / 1000:8.1f} {t['dur'] / 1000:7.1f}  {kind}")
    print("  total per kind: " + ", ".join(f"{k} {v:.1f}" for k, v in total.most_common()))
    styled = [e["args"].get("elementCount") or e["args"].get("beginData", {}).get("elementCount")
              for e in xs if e["name"] == "UpdateLayoutTree" and e["ts"] >= t0]
    styled = [n for n in styled if n]
    if styled:
        print(f"  elements styled at most at once: {max(styled)}; per element, style+layout: "
              f"{total['style+layout'] / max(styled):.3f} ms")
    # The first contentful paint's presentation: Blink stamps FCP with the
    # time its frame was presented (PaintTiming's presentation callback),
    # not with the main thread's paint of it (the Paint task holding the
    # page's first PaintTimingVisualizer::LayoutObjectPainted); the
    # difference is the compositor's and the display's share.
    marks = [e["ts"] for e in events if e.get("name") == "firstContentfulPaint" and e.get("ts", 0) >= t0]
    painted = sorted(e["ts"] for e in events if e.get("pid") == thread[0] and e.get("ts", 0) >= t0
                     and e.get("name") == "PaintTimingVisualizer::LayoutObjectPainted")
    if marks and painted:
        fcp, first = min(marks), painted[0]
        task = [e for e in xs if e["name"] == "Paint" and e["ts"] <= first <= e["ts"] + e["dur"]]
        done = task[0]["ts"] + task[0]["dur"] if task else first
        print(f"  first contentful paint: painted by {(done - t0) / 1000:.1f}, presented "
              f"{(fcp - t0) / 1000:.1f}: {(fcp - done) / 1000:.1f} ms later")
EOF
