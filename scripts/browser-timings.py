#!/usr/bin/env python3
"""Chromium's own timings, read from crosscheck references (issue 49): what
the model's browser costs (`client::render::BrowserCost`) stand for, measured
on Chromium's loads rather than fitted to its PLT. Per load, from the
per-resource rows (`requests`: host, path, type, connection, started, sent,
first byte, end, bytes, status) and the paint figures:

- lead: over plain http, one RTT less the document request's send: how
  long before the page's clock (the document's request) the connection to
  the page's host began (Chromium's navigation preconnects): `lead`;
- commit: the first subresource request's start after the document's first
  byte (the renderer takes the response, then its preload scanner and parser
  find the first URL): what `navigation` spends before discovery;
- release: on icons over h2 and h3 (no script, 49 images), the third image's
  request after the document's first byte: when Blink's tight mode lets the
  held images go (`frame`); the spacing of the next ten images' sends,
  which leave together: the network service's work per request (the model
  has no such cost yet: its `request` is spent at discovery);
  and of the first ten images' starts, which the parser finds in one
  chunk: the renderer's work per request (`request`);
- first paint: FCP after TTFB on the pages that paint from their HTML alone
  (icons, sitespeed.io's): `paint` + one frame;
- script tail: PLT after the last response's end where that response is a
  script, per kB of it (Chromium runs it before onload): `script` per kB;
  beside it the same tail where the last response is an image (no work).

The model's loads in the same files give the same figures for comparison.
Plain Python 3, no modules.

Usage: scripts/browser-timings.py REFERENCE.json [...]
"""
import json
import statistics
import sys

SCRIPT_TYPES = ("javascript", "ecmascript")


def median(values):
    """The median, the count and the quartiles, as one column."""
    if len(values) < 2:
        return "     -"
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):7.2f} (n {len(values)}, q1 {q1:.2f}, q3 {q3:.2f})"


def main(paths):
    figures = {who: {k: [] for k in ("lead", "commit", "release", "send spacing", "discovery spacing", "first paint", "script tail per kB", "image tail")}
               for who in ("chromium", "model")}
    for path in paths:
        for row in json.load(open(path))["rows"]:
            site = row["site"]
            for who in ("chromium", "model"):
                for load in row.get(f"{who}_loads") or []:
                    if load.get("error") or not load.get("requests"):
                        continue
                    reqs = [q for q in load["requests"] if q[9] in (200, 0)]
                    docs = [q for q in reqs if "html" in (q[2] or "")]
                    if not docs:
                        continue
                    doc = docs[0]
                    later = [q[4] for q in reqs if q is not doc and q[4] >= doc[6] - 1]
                    f = figures[who]
                    if row["protocol"] == "http":
                        f["lead"].append(float(row["rtt"].removesuffix("ms")) - doc[5])
                    if later:
                        f["commit"].append(min(later) - doc[6])
                    if site == "icons" and row["protocol"] in ("h2", "h3"):
                        images = sorted((q for q in reqs if q[1].startswith("/png")), key=lambda q: q[5])
                        if len(images) > 2:
                            f["release"].append(images[2][5] - doc[6])
                        held = [q[5] for q in images[2:12]]
                        f["send spacing"] += [b - a for a, b in zip(held, held[1:])]
                        found = sorted(q[4] for q in images)[:10]
                        f["discovery spacing"] += [b - a for a, b in zip(found, found[1:])]
                    paint = load.get("paint") or {}
                    if (site == "icons" or "sitespeed.io" in site) and paint.get("fcp_ms") and paint.get("ttfb_ms"):
                        f["first paint"].append(paint["fcp_ms"] - paint["ttfb_ms"])
                    last = max(reqs, key=lambda q: q[7])
                    tail = load["plt_ms"] - last[7]
                    if any(t in (last[2] or "") for t in SCRIPT_TYPES) and last[8] > 10_000:
                        f["script tail per kB"].append(tail / (last[8] / 1000))
                    elif (last[2] or "").startswith("image/"):
                        f["image tail"].append(tail)
    for name in figures["chromium"]:
        print(f"{name:20} Chromium {median(figures['chromium'][name])}")
        print(f"{'':20} model    {median(figures['model'][name])}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    main(sys.argv[1:])
