#!/usr/bin/env python3
"""Is Chromium's gain there reproducible? (issue 49). Lists the gains of
`spdylab crosscheck --json` runs whose sign disagrees between the model and
Chromium where both clients' 95 % CIs exclude zero; with --run, loads each
such point again with both clients (`spdylab crosscheck`, REPS loads per
protocol, warm-up 0, the same link and competing flows) and prints, per
disagreement, the reference's Chromium gain beside the fresh one and the
fresh model's:

- "reproduced": the fresh Chromium CI excludes zero on the reference's side
  (the model's sign is wrong there);
- "not reproduced": it holds zero, or lies on the other side (the
  reference's sign was Chromium's run-to-run noise, not its answer).

A measurement, not a test: it needs root and Chromium; a point of the
built-in sites takes 1–3 min at 10 loads. Plain Python 3; Markdown.

A point whose file is in OUT_DIR already is not loaded again (a stopped
run resumes); --read OUT_DIR makes the table of what is there, loading
nothing.

Usage: scripts/fidelity-recheck.py RUN.json[,RUN2.json...] [--run OUT_DIR | --read OUT_DIR] [--reps N] [--spdylab BIN]
"""
import importlib.util
import json
import os
import subprocess
import sys

# The gain table's own reading of a gain (finite, a CI that excludes zero,
# a run's competing flows): scripts/fidelity-gains.py.
_spec = importlib.util.spec_from_file_location(
    "fidelity_gains", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fidelity-gains.py"))
gains_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gains_table)
finite, excludes_zero, cross_of = gains_table.finite, gains_table.excludes_zero, gains_table.cross_of


def site_arg(site):
    """crosscheck's --sites value for a gain's site (a recorded page is
    named after its HAR in tests/data)."""
    har = os.path.join("tests", "data", site + ".har")
    return har if os.path.exists(har) else site


def disagreements(paths):
    out = []
    for path in paths:
        doc = json.load(open(path))
        cross = cross_of(doc)
        for p in doc["gains"]:
            m, c = p["model_ci95"], p["chromium_ci95"]
            if not (excludes_zero(m) and excludes_zero(c)):
                continue
            if (p["model_gain_pct"] > 0) == (p["chromium_gain_pct"] > 0):
                continue
            out.append(dict(p, cross=cross, source=path))
    return out


def point_key(p):
    a = p["axes"]
    return (p["site"], a["rtt_ms"], a["rate_mbit"], a["loss_pct"], p["cross"])


def fmt_ci(g, ci):
    if not finite(g):
        return "n/a"
    return "%+.1f [%+.1f, %+.1f]" % (g, ci[0], ci[1])


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    runs, out_dir, reps, spdylab = argv[0].split(","), None, 10, "target/release/spdylab"
    load = True
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag in ("--run", "--read"):
            out_dir, load = rest.pop(0), flag == "--run"
        elif flag == "--reps":
            reps = int(rest.pop(0))
        elif flag == "--spdylab":
            spdylab = rest.pop(0)
        else:
            sys.exit("unknown argument: %s (see --help)" % flag)
    found = disagreements(runs)
    print("%d gains whose sign disagrees where both CIs exclude zero\n" % len(found))
    groups = {}
    for p in found:
        groups.setdefault(point_key(p), []).append(p)
    fresh = {}
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for n, (key, ps) in enumerate(sorted(groups.items())):
            site, rtt, rate, loss, cross = key
            protos = sorted({x for p in ps for x in (p["a"], p["b"])},
                            key=["http", "https", "h2", "h3"].index)
            out = os.path.join(out_dir, "point%02d.json" % n)
            cmd = [spdylab, "crosscheck", "--sites", site_arg(site),
                   "--protocols", ",".join(protos), "--rtt", "%gms" % rtt,
                   "--rate", "%gmbit" % rate, "--reps", str(reps), "--warmup", "0",
                   "--timeout", "90s", "--json"]
            if loss:
                cmd += ["--losses", "%g%%" % loss]
            if cross != "none":
                cmd += ["--cross-traffic", cross]
            try:
                doc = json.load(open(out))
            except (OSError, ValueError):
                doc = None
            if doc is None and load:
                print("%s: %s" % (out, " ".join(cmd)), file=sys.stderr)
                with open(out, "w") as f, open(out + ".err", "w") as err:
                    subprocess.run(cmd, stdout=f, stderr=err, check=False)
                try:
                    doc = json.load(open(out))
                except ValueError:
                    doc = None
            if doc is None:
                print("%s: no JSON (see %s.err)" % (out, out), file=sys.stderr)
                continue
            for g in doc["gains"]:
                fresh[(g["site"], g["a"], g["b"], g["metric"], key)] = g
    print("| point | pair | metric | model | Chromium (reference) | model (fresh) | Chromium (fresh) | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    tally = {"reproduced": 0, "not reproduced": 0}
    for key, ps in sorted(groups.items()):
        site, rtt, rate, loss, cross = key
        where = "%s %gms %gmbit%s%s" % (site[:32], rtt, rate,
                                       " %g%%" % loss if loss else "",
                                       " " + cross if cross != "none" else "")
        for p in sorted(ps, key=lambda p: (p["a"], p["b"], p["metric"])):
            g = fresh.get((p["site"], p["a"], p["b"], p["metric"], key))
            verdict, fm, fc = "", "", ""
            if g is not None:
                fm = fmt_ci(g["model_gain_pct"], g["model_ci95"])
                fc = fmt_ci(g["chromium_gain_pct"], g["chromium_ci95"])
                side = p["chromium_gain_pct"] > 0
                c = g["chromium_ci95"]
                same = excludes_zero(c) and (c[0] > 0) == side
                verdict = "reproduced" if same else "not reproduced"
                tally[verdict] += 1
            print("| %s | %s>%s | %s | %s | %s | %s | %s | %s |" % (
                where, p["a"], p["b"], p["metric"],
                fmt_ci(p["model_gain_pct"], p["model_ci95"]),
                fmt_ci(p["chromium_gain_pct"], p["chromium_ci95"]), fm, fc, verdict))
    if fresh:
        print("\nreproduced %d, not reproduced %d" % (tally["reproduced"], tally["not reproduced"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
