#!/usr/bin/env bash
# The model's fidelity benchmark (issue 49): the model's half of every
# Chromium reference kept in docs/results/crosscheck/bench/ (the built-in sites
# youtube, twitter, icons and imgur and six recorded pages, at 20 and 150 ms
# x 1, 8 and 20 Mbit/s; beside 1 % loss and one Cubic flow at 50 ms / 8 Mbit/s;
# off that grid, 4 Mbit/s at 50 and 100 ms),
# then the gain table: the references' own model halves (the model they were
# stored with) -> this build's. A measurement, not a test: about an hour on 2
# cores, no Chromium (its loads come from the references). Run it for every
# model change and put the table in the change's note.
# Needs root (network namespaces). Results: OUT/*.json, the table on stdout.
# Then scripts/fidelity-refresh.py OUT makes this build the references' model
# half, and scripts/fidelity-recheck.py lists the gains whose sign disagrees.
# Usage: [SPDYLAB=bin] [BROWSER_COST=costs] scripts/fidelity-benchmark.sh OUT [PART...]
#   PART: grid recorded loss cubic1 offgrid (default: all five)
#   BROWSER_COST: the model's --browser-cost, to try costs before they become
#   the default (e.g. BROWSER_COST=fitted,script=240us/kB)
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
S=${SPDYLAB:-target/release/spdylab}
OUT=${1:?usage: scripts/fidelity-benchmark.sh OUT [PART...]}; shift
PARTS=${*:-grid recorded loss cubic1 offgrid}
R=docs/results/crosscheck/bench
mkdir -p "$OUT"
BUILTIN=youtube,twitter,icons,imgur,tests/data/pagexray-http2-chrome.har
RECORDED=""
for h in perfcascade-wpt_h2_www.nghttp2.org perfcascade-wpt_h2_www.filamentgroup.com \
  perfcascade-browsertime_sitespeed.io perfcascade-chrome_h2_h2o.examp1e.net \
  sitespeed-compare-en.wikipedia.org-webpagetest-chrome; do
  RECORDED=${RECORDED:+$RECORDED,}tests/data/$h.har
done
OFFGRID_RECORDED=tests/data/perfcascade-wpt_h2_www.nghttp2.org.har,tests/data/sitespeed-compare-en.wikipedia.org-webpagetest-chrome.har
# name, reference(s), crosscheck arguments. A probe Chromium could not make
# (plain http on an HSTS-preloaded host) makes crosscheck exit 1: its JSON
# is complete all the same.
run() {
  local name=$1 ref=$2; shift 2
  echo "$name: $S crosscheck $* --reference $ref" >&2
  "$S" crosscheck "$@" ${BROWSER_COST:+--browser-cost "$BROWSER_COST"} --reps 5 --warmup 0 --timeout 90s --reference "$ref" --json \
    >"$OUT/$name.json" 2>"$OUT/$name.err"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/$name.json" ||
    { echo "$name: no JSON (see $OUT/$name.err)" >&2; exit 1; }
}
before=(); after=()
for part in $PARTS; do
  case $part in
  grid)
    # grid-1-8's references: at 150 ms grid-1-8.json and icons' of today's
    # Chromium (grid-1-8-icons.json), at 20 ms a settled browser's
    # (grid-1-8-20ms.json; bench/README.md).
    run grid-1-8 $R/grid-1-8.json,$R/grid-1-8-icons.json,$R/grid-1-8-20ms.json --sites $BUILTIN \
      --protocols http,https,h2,h3 --rtts 20ms,150ms --rates 1mbit,8mbit
    run grid-20 $R/grid-20.json --sites $BUILTIN --protocols http,https,h2,h3 \
      --rtts 20ms,150ms --rates 20mbit
    before+=($R/grid-1-8.json $R/grid-1-8-icons.json $R/grid-1-8-20ms.json $R/grid-20.json)
    after+=($OUT/grid-1-8.json $OUT/grid-20.json) ;;
  recorded)
    # The recorded pages' references (recorded-*.json: at 150 ms
    # recorded-all.json, at 20 ms a settled browser's recorded-20ms.json).
    refs=$(ls $R/recorded-*.json | paste -sd, -)
    run recorded "$refs" --sites $RECORDED --protocols https,h2,h3 \
      --rtts 20ms,150ms --rates 1mbit,8mbit,20mbit
    before+=($(ls $R/recorded-*.json))
    after+=($OUT/recorded.json) ;;
  loss)
    run loss $R/loss.json --sites $BUILTIN --protocols http,https,h2,h3 \
      --rtts 50ms --rates 8mbit --losses 0%,1%
    before+=($R/loss.json); after+=($OUT/loss.json) ;;
  cubic1)
    run cubic1 $R/cubic1.json --sites youtube,twitter,tests/data/pagexray-http2-chrome.har \
      --protocols http,https,h2,h3 --rtt 50ms --rate 8mbit --cross-traffic cubic:1
    before+=($R/cubic1.json); after+=($OUT/cubic1.json) ;;
  offgrid)
    # Off the grids the costs were fitted on (7 Dec 2026): 4 Mbit/s at 50
    # and 100 ms, built-in and recorded pages, loaded once by Chromium as a
    # grid the model had not been shown (bench/README.md).
    run offgrid $R/offgrid-4mbit.json --sites youtube,twitter,icons,imgur,http-archive-2014,$OFFGRID_RECORDED \
      --protocols https,h2,h3 --rtts 50ms,100ms --rates 4mbit
    before+=($R/offgrid-4mbit.json); after+=($OUT/offgrid.json) ;;
  *) echo "unknown part: $part (grid recorded loss cubic1 offgrid)" >&2; exit 2 ;;
  esac
done
join() { local IFS=,; echo "$*"; }
python3 scripts/fidelity-gains.py "$(join "${before[@]}")" "$(join "${after[@]}")"
