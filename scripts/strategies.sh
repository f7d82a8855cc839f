#!/bin/sh
# The four strategies of issue 37 on one page — none, <link rel=preload>,
# 103 Early Hints, server push — side by side: for each site, link profile and
# server think time, one `spdylab compare` per strategy (h2 and h3; push on h2
# only: h3 here has no push), written with --out; `spdylab diff` then gives
# each strategy's shift against none per protocol (Hodges–Lehmann with its CI,
# Mann-Whitney p) for every metric (PLT, LCP among them). The page is on one
# host (--layout mirror; LAYOUT= to change): push sends only what is on the
# document's own host.
# Usage: scripts/strategies.sh OUT_DIR [CLIENT] [REPS] [SITES] [PROFILES] [THINKS]
# e.g. scripts/strategies.sh /tmp/strat model 5 youtube,twitter 3g-fast,cable 0ms,300ms
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
out=${1:?usage: strategies.sh OUT_DIR [CLIENT] [REPS] [SITES] [PROFILES] [THINKS]}
client=${2:-model}
reps=${3:-5}
sites=${4:-youtube,twitter,tests/data/pagexray-http2-chrome.har}
profiles=${5:-3g-fast,cable}
thinks=${6:-0ms,300ms}
bin=${SPDYLAB:-spdylab}
mkdir -p "$out"
for site in $(echo "$sites" | tr , ' '); do
  s=$(basename "$site" .har)
  for profile in $(echo "$profiles" | tr , ' '); do
    for think in $(echo "$thinks" | tr , ' '); do
      base="$out/$s-$profile-$think"
      for strategy in none preload hints push; do
        case $strategy in
          none) flags="" ; protos=h2,h3 ;;
          preload) flags="--preload critical" ; protos=h2,h3 ;;
          hints) flags="--early-hints on" ; protos=h2,h3 ;;
          push) flags="--push critical" ; protos=h2 ;;
        esac
        if [ "$client" = chromium ] && [ "$strategy" = push ]; then continue; fi
        [ -s "$base-$strategy.json" ] && continue
        # shellcheck disable=SC2086
        "$bin" compare --site "$site" --protocols "$protos" --profile "$profile" \
          --server-think "$think" --client "$client" --reps "$reps" --warmup 1 --layout "${LAYOUT:-mirror}" \
          $flags --out "$base-$strategy.json" > "$base-$strategy.txt" 2>&1 || true
      done
      for strategy in preload hints push; do
        [ -s "$base-$strategy.json" ] || continue
        echo "== $s $profile think $think: $strategy vs none"
        "$bin" diff "$base-none.json" "$base-$strategy.json" 2>&1 || true
      done
    done
  done
done
