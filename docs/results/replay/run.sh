#!/bin/bash
# Replays every tests/data HAR with the model and Chromium over https and h2.
cd /work/main
B=${SPDYLAB:-target/release/spdylab}
out=${OUT:-/tmp/spdylab-replay}; mkdir -p $out
for f in tests/data/*.har; do
  n=$(basename $f .har)
  rm -rf /tmp/imp-$n; $B import $f --out /tmp/imp-$n --json > $out/$n.import.json 2>$out/$n.import.err; rm -rf /tmp/imp-$n
  for c in model chromium; do
    $B compare --site $f --protocols https,h2 --client $c --rtt 20ms --rate 50mbit --reps 1 --warmup 0 --json --har-dir $out/har-$n-$c > $out/$n.$c.json 2>$out/$n.$c.err
  done
done
