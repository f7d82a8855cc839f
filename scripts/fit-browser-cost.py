#!/usr/bin/env python3
"""Fits the model's browser costs (`--browser-cost`) against Chromium.

Input: one or more `spdylab crosscheck --json` documents. Run with every cost
0 but scripts in order (`--browser-cost navigation=0ms`), each row's Chromium −
model median PLT is what the costs must explain. Run with other costs (the
default, `fitted`: give its values with --base-cost), the model's median is
taken back to zero cost first by subtracting those costs' work, as the fit
assumes costs add (exact for the navigation, close for the rest); then a
refit needs only the model's half of a crosscheck, with Chromium's loads from
earlier runs (`crosscheck --reference`). Per Trial of the
fit sites, that difference is regressed on the page's work: 1 (navigation),
requests, kB of script and kB of HTML (from `spdylab sites NAME --json`), by
weighted least squares of the residuals relative to Chromium's PLT (weights
1/PLT², as MAPE counts errors), every coefficient >= 0 (each non-negative subset of the four terms is
solved, the one with the smallest residual kept). It prints the constants, the
`--browser-cost` string, and the predicted error (model + costs against
Chromium) per site, fit and held out, as a check before the crosscheck that
measures it.

The baseline may keep its timers (`--browser-cost navigation=0ms,frame=80ms,
paint=42ms,present=194ms`: tight mode's end, which `scripts/held-images.sh`
measures, and the first paint's): they are not fitted (they move paint and
the images' release, not PLT's additive work), and the printed
`--browser-cost` carries them.

Sites not built in are looked up as DIR/NAME.har (--sites-dir, default
tests/data): the crosscheck names an imported HAR by its stem.

Rows whose Chromium probes all failed (e.g. plain http on a host Chromium's
HSTS preload list upgrades) are left out; so are Trials named by --exclude.

A term measured elsewhere is held with --fix (e.g. navigation=10ms, the
commit Chromium's first subresource request waits for after the document's
first byte) and the others fitted around it.

Usage:
  scripts/fit-browser-cost.py --spdylab target/release/spdylab \\
      --fit youtube,twitter,icons base.json [more.json ...]
No third-party modules (plain Python 3).
"""

import argparse
import itertools
import json
import subprocess
import sys

TERMS = ["navigation", "request", "script", "parse"]


def page_work(spdylab, site, sites_dir):
    """(1, requests, script kB, HTML kB) of a built-in site or DIR/SITE.har."""
    run = subprocess.run([spdylab, "sites", site, "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        run = subprocess.run([spdylab, "sites", f"{sites_dir}/{site}.har", "--json"],
                             check=True, capture_output=True, text=True)
    out = run.stdout
    res = json.loads(out)["site"]["resources"]
    script = sum(r["size"] for r in res if r["kind"] == "js") / 1000
    html = sum(r["size"] for r in res if r["kind"] == "html") / 1000
    return [1.0, float(len(res)), script, html]


def solve(a, b):
    """Solves a x = b (small, dense) by Gaussian elimination; None if singular."""
    n = len(a)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def nnls_subsets(xs, ys, ws):
    """Weighted least squares over every subset of terms; the best with all coefficients >= 0."""
    k = len(xs[0])
    best = (float("inf"), [0.0] * k)
    for size in range(1, k + 1):
        for subset in itertools.combinations(range(k), size):
            a = [[sum(w * x[i] * x[j] for x, w in zip(xs, ws)) for j in subset] for i in subset]
            b = [sum(w * x[i] * y for x, y, w in zip(xs, ys, ws)) for i in subset]
            sol = solve(a, b)
            if sol is None or min(sol) < 0:
                continue
            coef = [0.0] * k
            for i, c in zip(subset, sol):
                coef[i] = c
            rss = sum(w * (y - sum(c * xi for c, xi in zip(coef, x))) ** 2
                      for x, y, w in zip(xs, ys, ws))
            if rss < best[0]:
                best = (rss, coef)
    return best


UNITS = {"ms": 1.0, "us": 1e-3, "s": 1e3}


def parse_cost(text):
    """The additive part of a --browser-cost string: [navigation ms, request ms,
    script ms/kB, parse ms/kB] (TERMS order), and its timers (frame, paint,
    present: not fitted) as written."""
    values = {"navigation": 0.0, "request": 0.0, "script": 0.0, "parse": 0.0}
    timers = []
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key in ("frame", "paint", "present"):
            timers.append(part)
            continue
        if key not in values:
            sys.exit(f"--browser-cost {text}: unknown key {key}")
        number = value.removesuffix("/kB")
        unit = next((u for u in ("ms", "us", "s") if number.endswith(u)), None)
        if unit is None:
            sys.exit(f"--browser-cost {text}: {part} has no unit (ms, us, s)")
        values[key] = float(number[: -len(unit)]) * UNITS[unit]
    return [values[t] for t in TERMS], ",".join(timers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spdylab", default="spdylab", help="the spdylab binary")
    ap.add_argument("--fit", required=True, help="fit sites, comma-separated")
    ap.add_argument("--exclude", default="", help="Trials left out: site/link/protocol,…")
    ap.add_argument("--base-cost", default="",
                    help="the costs of runs written as `fitted` (e.g. navigation=38ms,request=1180us,frame=80ms,paint=42ms,present=194ms)")
    ap.add_argument("--sites-dir", default="tests/data", help="where NAME.har of imported sites are")
    ap.add_argument("--fix", default="",
                    help="terms held at a measured value, not fitted (e.g. navigation=10ms: "
                         "the commit Chromium's first subresource request waits for)")
    ap.add_argument("runs", nargs="+", help="crosscheck --json files")
    args = ap.parse_args()
    fit_sites = set(args.fit.split(","))
    excluded = set(filter(None, args.exclude.split(",")))
    rows = []
    frames = set()
    for path in args.runs:
        doc = json.load(open(path))
        cost = doc["browser_cost"]
        if cost == "fitted":
            if not args.base_cost:
                sys.exit(f"{path}: run with the default costs: give their values with --base-cost")
            cost = args.base_cost
        if cost == "none":
            sys.exit(f"{path}: run without costs and without scripts in order: run with --browser-cost navigation=0ms")
        base, frame = parse_cost(cost)
        frames.add(frame)
        for r in doc["rows"]:
            if r["chromium_failed"] >= doc["reps"] or r["model_failed"] >= doc["reps"]:
                continue
            # Plain http with TLS in Chromium's phases: upgraded by its HSTS
            # preload list (runs from before the recorder refused those loads).
            if r["protocol"] == "http" and r["chromium_phases"]["ssl"] > 0:
                continue
            if f"{r['site']}/{r['link']}/{r['protocol']}" in excluded:
                continue
            r["base"] = base
            rows.append(r)
    if len(frames) > 1:
        sys.exit(f"the runs have different timers ({'; '.join(sorted(f or 'none' for f in frames))}): fit one")
    frame = frames.pop() if frames else ""
    work = {s: page_work(args.spdylab, s, args.sites_dir) for s in sorted({r["site"] for r in rows})}
    for r in rows:
        # The model's median at zero cost: the run's own costs' work taken off.
        r["model_zero"] = r["model"]["median"] - sum(c * x for c, x in zip(r["base"], work[r["site"]]))
    fixed, _ = parse_cost(args.fix)
    free = [i for i, f in enumerate(fixed) if f == 0]
    fit = [r for r in rows if r["site"] in fit_sites]
    xs = [[work[r["site"]][i] for i in free] for r in fit]
    ys = [r["chromium"]["median"] - r["model_zero"]
          - sum(f * x for f, x in zip(fixed, work[r["site"]])) for r in fit]
    ws = [1 / r["chromium"]["median"] ** 2 for r in fit]
    rss, free_coef = nnls_subsets(xs, ys, ws)
    coef = fixed[:]
    for i, c in zip(free, free_coef):
        coef[i] = c
    print(f"fit on {','.join(sorted(fit_sites))}: {len(fit)} Trials; "
          f"held out: {','.join(sorted(set(work) - fit_sites)) or 'none'}")
    for name, c, unit in zip(TERMS, coef, ["ms", "ms per request", "ms per kB of script",
                                           "ms per kB of HTML"]):
        print(f"  {name:10} {c:8.2f} {unit}")
    print(f"  rms relative residual {100 * (rss / len(fit)) ** 0.5:.1f}%")
    nav, req, script, parse = coef
    print("--browser-cost "
          f"navigation={round(nav)}ms,parse={round(parse * 1000)}us/kB,"
          f"script={round(script * 1000)}us/kB,request={round(req * 1000)}us"
          + (f",{frame}" if frame else ""))
    print("predicted (additive: zero-cost model + costs) against Chromium:")
    for site in sorted(work):
        errs = []
        for r in rows:
            if r["site"] != site:
                continue
            pred = r["model_zero"] + sum(c * x for c, x in zip(coef, work[site]))
            errs.append(abs(pred - r["chromium"]["median"]) / r["chromium"]["median"])
        tag = "fit" if site in fit_sites else "held out"
        print(f"  {site:18} {tag:8} Trials {len(errs):2}  MAPE {100 * sum(errs) / len(errs):5.1f}%"
              f"  worst {100 * max(errs):5.1f}%")


if __name__ == "__main__":
    main()
