#!/usr/bin/env python3
"""Mean explain components, h3 - h2, per point of a campaign dir (probes.jsonl)
or of a `spdylab compare --explain --json` document.
Usage: h3-mechanism.py DIR|COMPARE.json [KEY=VALUE ...]  (only the points whose key has that value)"""
import json, sys, collections
if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
    print(__doc__.strip()); sys.exit(0 if len(sys.argv) > 1 else 2)
d = sys.argv[1]
filt = dict(a.split('=', 1) for a in sys.argv[2:])
acc = collections.defaultdict(lambda: collections.defaultdict(list))
def records(d):
    """A campaign directory's probes, or a `compare --json` document's."""
    if d.endswith('.json'):
        doc = json.load(open(d))
        for r in doc['probes']:
            yield {**r, 'point': {'site': doc.get('site', ''), **(r.get('point') or {})}}
    else:
        for line in open(f'{d}/probes.jsonl'):
            yield json.loads(line)
for r in records(d):
    if r.get('error') or not r.get('explain'):
        continue
    pt = r['point']
    if any(pt.get(k) != v for k, v in filt.items()):
        continue
    key = ' '.join(f'{k}={v}' for k, v in sorted(pt.items()) if k in ('site', 'rate', 'rtt', 'profile', 'loss', 'iw', 'tcp_pacing', 'server_priorities', 'cc'))
    e = r['explain']
    vals = dict(e['components'])
    vals['plt_ms'] = e['plt_ms']
    for k, v in e['why'].items():
        vals['why.' + k] = v
    acc[key][r['protocol']].append(vals)
for key in sorted(acc):
    a, b = acc[key].get('h2'), acc[key].get('h3')
    if not a or not b:
        continue
    mean = lambda xs, k: sum(x.get(k, 0) or 0 for x in xs) / len(xs)
    keys = [k for k in a[0] if isinstance(a[0][k], (int, float))]
    diffs = sorted(((mean(b, k) - mean(a, k), k) for k in keys if not k.startswith('why.') and k != 'plt_ms'), key=lambda t: -abs(t[0]))
    why = {k[4:]: round(mean(b, k) - mean(a, k), 1) for k in keys if k.startswith('why.') and abs(mean(b, k) - mean(a, k)) > 0.05}
    print(f"{key} (n={len(a)},{len(b)}): h3-h2 PLT {mean(b,'plt_ms')-mean(a,'plt_ms'):+.0f} ms = " + ' '.join(f"{v:+.0f} {k.replace('_ms','')}" for v, k in diffs[:4]) + f" | why {why}")
