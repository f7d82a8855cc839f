#!/usr/bin/env python3
"""Markdown table of h3's gain over h2, the browser model and Chromium side by
side, from two campaign directories' summary.csv, with the experiment's
reference marks (docs/reproduction-h3.md, "The presets"). Usage:
h3-gain-table.py MODEL_DIR CHROMIUM_DIR [AXIS ...]  (AXIS: the point keys that vary;
a directory without summary.csv leaves its columns empty)."""
import csv, sys, tomllib, os

def load(d):
    rows = {}
    if not d or not os.path.exists(os.path.join(d, 'summary.csv')):
        return rows
    for r in csv.DictReader(open(os.path.join(d, 'summary.csv'))):
        key = dict(kv.split('=', 1) for kv in r['point'].split())
        rows[(r['point'], r['protocol'])] = (key, r)
    return rows

def marks(d):
    out = {}
    try:
        e = tomllib.load(open(os.path.join(d, 'experiment.toml'), 'rb'))
    except Exception:
        return out
    for ref in e.get('reference', []):
        out.setdefault((ref.get('site'), ref.get('at')), []).append(f"{ref['gain_pct']:+.0f} ({ref['label']})")
    return out

if len(sys.argv) < 3 or sys.argv[1] in ('-h', '--help'):
    print(__doc__.strip()); sys.exit(0 if len(sys.argv) > 1 else 2)
model, chrom = load(sys.argv[1]), load(sys.argv[2])
axes = sys.argv[3:]
refs = marks(sys.argv[1])
def cell(rows, point, proto):
    v = rows.get((point, proto))
    return v[1] if v else None
points = []
for (point, proto), (key, r) in list(model.items()) + list(chrom.items()):
    if point not in [p for p, _ in points]:
        points.append((point, key))
hdr = ['site'] + axes + ['model h2', 'model h3', 'model gain', 'Chromium h2', 'Chromium h3', 'Chromium gain', 'study']
print('| ' + ' | '.join(hdr) + ' |')
print('|' + ' --- |' * len(hdr))
for point, key in points:
    row = [key['site']] + [key.get(a, '') for a in axes]
    for rows in (model, chrom):
        h2, h3 = cell(rows, point, 'h2'), cell(rows, point, 'h3')
        f = lambda r: f"{float(r['metric_mean_ms']):,.0f}".replace(',', ' ') if r else ''
        row += [f(h2), f(h3)]
        if h3 and h2:
            row.append(f"{float(h3['gain_pct']):+.1f} % [{float(h3['gain_ci_lo']):+.1f}, {float(h3['gain_ci_hi']):+.1f}]")
        else:
            row.append('')
    at = key.get(axes[0]) if axes else None
    row.append('; '.join(refs.get((key['site'], at), [])))
    print('| ' + ' | '.join(row) + ' |')
