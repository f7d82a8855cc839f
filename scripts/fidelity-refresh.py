#!/usr/bin/env python3
"""Puts a fidelity benchmark's model half into the references (issue 49):
for every `crosscheck --json` output in OUT (`scripts/fidelity-benchmark.sh
OUT`), each reference it named (its `reference` field) is rewritten with the
output's Trials and gains of that reference's own grid: Chromium's loads are
the reference's (crosscheck took them from it), the model's are the new
build's. The summaries (`agreement`, `mape_pct`, `diagnosis`, …) are the
whole output's, as the earlier passes kept them. Then `fidelity-gains.py
--tsv` over the references gives the table `compare` reads, and the next
pass's "before" is this build. Plain Python 3.

Usage: scripts/fidelity-refresh.py OUT [--dry-run]
"""
import glob
import json
import os
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    out_dir, dry = argv[0], "--dry-run" in argv[1:]
    for out in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
        doc = json.load(open(out))
        refs = doc.get("reference") or []
        for ref in refs:
            old = json.load(open(ref))
            trials = {(r["site"], r["link"], r["protocol"]) for r in old["rows"]}
            gains = {(g["site"], g["link"], g["a"], g["b"], g["metric"]) for g in old["gains"]}
            rows = [r for r in doc["rows"] if (r["site"], r["link"], r["protocol"]) in trials]
            kept = [g for g in doc["gains"]
                    if (g["site"], g["link"], g["a"], g["b"], g["metric"]) in gains]
            if len(rows) != len(trials):
                sys.exit("%s: %d of its %d Trials in %s: not rewritten"
                         % (ref, len(rows), len(trials), out))
            new = dict(doc, rows=rows, gains=kept)
            print("%s: %d Trials, %d gains from %s" % (ref, len(rows), len(kept), out))
            if not dry:
                with open(ref, "w") as f:
                    json.dump(new, f, separators=(",", ":"))
                    f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
