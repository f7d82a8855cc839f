#!/usr/bin/env python3
"""The fidelity benchmark's gain table (issue 49): from `spdylab crosscheck
--json` documents, per protocol pair (A>B: B's gain over A) and metric, over
the points where both clients have a gain: n, the share of gain errors within
±3 points (all points, and the points where Chromium's own 95 % CI half-width
is at most 3 points: the issue's goal), the share whose sign agrees where
Chromium's CI excludes zero, the mean |error| in points, and the mean error
(model − Chromium: > 0, the model overstates B's gain). With two documents
(BEFORE AFTER) each cell reads "before → after". Plain Python 3; Markdown.

With --tsv, instead, the table `spdylab compare` reads to say how far to trust
a gain where no Chromium was loaded (docs/results/crosscheck/fidelity.tsv,
`verdict::fidelity`): per pair, metric and link point, over the sites, the
number of sites, the mean |error|, the mean error and the sites within ±3
points, and the competing flows the run had (`--cross-traffic`, "none").
Several runs (comma-separated) make one table: a point is its link and its
competing flows, and a run's points are its own.

BEFORE and AFTER may each be several runs, comma-separated: their gains are
joined (one grid run in parts).

Usage: scripts/fidelity-gains.py RUN.json[,RUN2.json...] [AFTER.json[,...]] [--by rate|rtt|loss|site]
       scripts/fidelity-gains.py --tsv RUN.json[,RUN2.json...] [NOTE] > docs/results/crosscheck/fidelity.tsv
"""
import json
import math
import sys

CLOSE = 3.0


def finite(v):
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def figures(points):
    """The row's figures over `points` (GainPoints of crosscheck's JSON)."""
    both = [p for p in points if finite(p["error_pts"])]
    if not both:
        return None
    errs = [p["error_pts"] for p in both]
    tight = [
        p["error_pts"]
        for p in both
        if all(finite(c) for c in p["chromium_ci95"])
        and (p["chromium_ci95"][1] - p["chromium_ci95"][0]) / 2 <= CLOSE
    ]
    signs = [p["sign_agrees"] for p in both if p["sign_agrees"] is not None]
    return {
        "n": len(both),
        "within": 100 * sum(abs(e) <= CLOSE for e in errs) / len(errs),
        "tight_n": len(tight),
        "tight_within": 100 * sum(abs(e) <= CLOSE for e in tight) / len(tight) if tight else float("nan"),
        "sign_n": len(signs),
        "sign": 100 * sum(signs) / len(signs) if signs else float("nan"),
        "mae": sum(abs(e) for e in errs) / len(errs),
        "bias": sum(errs) / len(errs),
    }


def cell(key, fmt, before, after):
    def one(f):
        if f is None or not finite(f[key]):
            return "n/a"
        return fmt % f[key]

    return one(before) if after is False else "%s → %s" % (one(before), one(after))


def groups(doc, by):
    out = {}
    for p in doc["gains"]:
        extra = ""
        if by == "rate":
            extra = "%g Mbit" % p["axes"]["rate_mbit"] if p["axes"]["rate_mbit"] else "no limit"
        elif by == "rtt":
            extra = "%g ms" % p["axes"]["rtt_ms"]
        elif by == "site":
            extra = p["site"]
        elif by == "loss":
            extra = "%g %% loss" % p["axes"]["loss_pct"]
        key = ("%s>%s" % (p["a"], p["b"]), p["metric"], extra)
        out.setdefault(key, []).append(p)
    return out


def cross_of(doc):
    """The competing flows of a run (`--cross-traffic`, "none"): one per
    crosscheck, every testbed has the same."""
    crosses = {t.get("cross", "none") for t in doc.get("testbeds", [])} or {"none"}
    if len(crosses) != 1:
        sys.exit("a run with more than one cross-traffic spec: %s" % sorted(crosses))
    return crosses.pop()


def tsv(docs, note):
    """The per-point table of `docs` (see --tsv above)."""
    print("# The fidelity benchmark's gain errors per point (scripts/fidelity-gains.py --tsv): %s" % note)
    print("# gain of B over A, model - Chromium, in points, over the sites where both clients have a gain")
    print("\t".join(["a", "b", "metric", "rtt_ms", "rate_mbit", "loss_pct", "sites",
                    "mean_abs_err_pts", "mean_err_pts", "within_3", "cross"]))
    points = {}
    for doc in docs:
        cross = cross_of(doc)
        for p in doc["gains"]:
            if not finite(p["error_pts"]):
                continue
            ax = p["axes"]
            key = (p["a"], p["b"], p["metric"], ax["rtt_ms"], ax["rate_mbit"] or 0, ax["loss_pct"], cross)
            points.setdefault(key, []).append(p["error_pts"])
    for key in sorted(points):
        errs = points[key]
        print("%s\t%s\t%s\t%g\t%g\t%g\t%d\t%.1f\t%+.1f\t%d\t%s" % (
            key[:6] + (len(errs), sum(abs(e) for e in errs) / len(errs), sum(errs) / len(errs),
                       sum(abs(e) <= CLOSE for e in errs), key[6])))


# A Trial's half ran on a loaded machine when the 1-minute load average
# crosscheck stored as it began exceeded this (the lab machine has 2
# cores): the model's handshakes and Chromium's start-up both slow under
# load (loss.json's fourth-pass model half ran at loads up to 7.6, and its
# PLT MAPE was 13.6 % where a quiet rerun, with a model that is the same
# on those pages, gave 7.7 %).
LOADED = 2.0


def loaded_note(arg):
    """A line per run of `arg` (comma-separated) with Trials whose model or
    Chromium half ran at a load above LOADED, or nothing."""
    out = []
    for f in arg.split(","):
        rows = json.load(open(f)).get("rows", [])
        for side in ("model", "chromium"):
            loads = [r.get(side + "_machine_load") for r in rows]
            loads = [x for x in loads if finite(x)]
            high = [x for x in loads if x > LOADED]
            if high:
                advice = ("rerun them on a quiet machine" if side == "model" else
                          "Chromium's own processes count in it; above 4 something else ran")
                out.append("%s: %d of %d Trials' %s half ran at a load above %g (max %.2f): %s"
                           % (f, len(high), len(loads), side, LOADED, max(high), advice))
    return out


def joined(arg):
    """The gains and Trials of the runs `arg` names (comma-separated) as one
    document."""
    docs = [json.load(open(f)) for f in arg.split(",")]
    return {"gains": [g for d in docs for g in d["gains"]],
            "rows": [r for d in docs for r in d.get("rows", [])]}


def excludes_zero(ci):
    return all(finite(c) for c in ci) and (ci[0] > 0 or ci[1] < 0)


def both_signs(doc):
    """(gains where both clients' CIs exclude zero, those whose signs agree)."""
    both = [p for p in doc["gains"] if finite(p["error_pts"])
            and excludes_zero(p["model_ci95"]) and excludes_zero(p["chromium_ci95"])]
    agree = [p for p in both if (p["model_gain_pct"] > 0) == (p["chromium_gain_pct"] > 0)]
    return len(both), len(agree)


TRIAL_METRICS = (("PLT", None), ("FCP", "fcp_ms"), ("LCP", "lcp_ms"), ("SI", "speed_index_ms"))


def trial_ape(row, key):
    """The APE, %, of the model's median against Chromium's in one Trial."""
    def median(side):
        xs = sorted(x for l in row.get(side + "_loads", []) if not l.get("error")
                    for x in [l.get("plt_ms") if key is None else (l.get("paint") or {}).get(key)]
                    if finite(x))
        if not xs:
            return None
        n = len(xs)
        return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    m, c = median("model"), median("chromium")
    return None if m is None or not c else 100 * abs(m - c) / c


def p90(xs):
    xs = sorted(xs)
    k = (len(xs) - 1) * 0.9
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def trial_table(docs):
    """Per rate and metric, over the Trials both clients loaded: MAPE of the
    model's median against Chromium's (p90), before → after."""
    rates = sorted({r["rate"] for d in docs for r in d["rows"]},
                   key=lambda r: float("".join(ch for ch in r if ch.isdigit() or ch == ".") or 0))
    print("\nPer Trial, the model's median against Chromium's: MAPE (p90), %")
    print("| rate | Trials | " + " | ".join(m for m, _ in TRIAL_METRICS) + " |")
    print("|" + " --- |" * (2 + len(TRIAL_METRICS)))
    for rate in rates + ["all"]:
        cells, n = [], []
        for name, key in TRIAL_METRICS:
            one = []
            for d in docs:
                apes = [a for r in d["rows"] if rate in ("all", r["rate"])
                        for a in [trial_ape(r, key)] if a is not None]
                one.append("%.1f (%.1f)" % (sum(apes) / len(apes), p90(apes)) if apes else "n/a")
                if name == "PLT":
                    n.append(str(len(apes)))
            cells.append(" → ".join(one))
        print("| %s | %s | %s |" % (rate, " → ".join(n), " | ".join(cells)))


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    if argv[:1] == ["--tsv"] and len(argv) in (2, 3):
        tsv([json.load(open(f)) for f in argv[1].split(",")], argv[2] if len(argv) == 3 else argv[1])
        return
    by = None
    if "--by" in argv:
        i = argv.index("--by")
        by = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not 1 <= len(argv) <= 2:
        sys.exit(__doc__.split("Usage: ")[1])
    docs = [joined(arg) for arg in argv]
    parts = [groups(d, by) for d in docs]
    keys = sorted(set().union(*[set(p) for p in parts]), key=lambda k: (k[0], k[1], k[2]))
    head = ["pair", "metric"] + ([by] if by else []) + [
        "n", "within 3", "n (Chromium CI ≤ ±3)", "within 3 there", "sign agrees", "mean |err|", "mean err"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    total = [[], []]
    for k in keys:
        f = [figures(p.get(k, [])) for p in parts]
        for i, p in enumerate(parts):
            total[i].extend(p.get(k, []))
        b, a = f[0], (f[1] if len(f) > 1 else False)
        row = [k[0], k[1]] + ([k[2]] if by else []) + [
            cell("n", "%d", b, a),
            cell("within", "%.0f %%", b, a),
            cell("tight_n", "%d", b, a),
            cell("tight_within", "%.0f %%", b, a),
            cell("sign", "%.0f %%", b, a),
            cell("mae", "%.1f", b, a),
            cell("bias", "%+.1f", b, a),
        ]
        print("| " + " | ".join(row) + " |")
    f = [figures(t) for t in total[: len(docs)]]
    b, a = f[0], (f[1] if len(f) > 1 else False)
    row = ["all", "all"] + ([""] if by else []) + [
        cell("n", "%d", b, a), cell("within", "%.0f %%", b, a), cell("tight_n", "%d", b, a),
        cell("tight_within", "%.0f %%", b, a), cell("sign", "%.0f %%", b, a),
        cell("mae", "%.1f", b, a), cell("bias", "%+.1f", b, a)]
    print("| " + " | ".join("**%s**" % c for c in row) + " |")
    signs = [both_signs(d) for d in docs]
    print("\nSign, where both clients' CIs exclude zero: " + " → ".join(
        "%d of %d agree (%.1f %%)" % (a, n, 100 * a / n) if n else "none" for n, a in signs))
    if all(d["rows"] for d in docs):
        trial_table(docs)
    notes = [n for arg in argv for n in loaded_note(arg)]
    if notes:
        print()
        for n in notes:
            print("Loaded: " + n)


if __name__ == "__main__":
    main(sys.argv[1:])
