#!/usr/bin/env python3
"""Splits a `spdylab crosscheck --json` document's Trials into fit and held-out
sites and prints, per rate (and all), per group and per metric, the figures
crosscheck prints for all Trials: n, MAPE, the 50th/90th/95th percentiles of
the APE of the model's median against Chromium's, Spearman's rho of the
medians, and Lantern's buckets (good < 20 %, ok < 50 %, bad), as Markdown rows
(docs/visual.md's tables). Plain Python 3.

Usage: scripts/crosscheck-split.py RUN.json youtube,twitter,icons
"""
import json,sys
import sys as _sys
if _sys.argv[1:2] in (['-h'], ['--help']):
    print(__doc__.strip())
    _sys.exit(0)
def pct(xs,p):
    xs=sorted(xs); 
    if not xs: return float('nan')
    k=(len(xs)-1)*p/100; f=int(k); c=min(f+1,len(xs)-1)
    return xs[f]+(xs[c]-xs[f])*(k-f)
def ranks(v):
    o=sorted(range(len(v)),key=lambda i:v[i]); r=[0]*len(v); i=0
    while i<len(o):
        j=i
        while j+1<len(o) and v[o[j+1]]==v[o[i]]: j+=1
        for k in range(i,j+1): r[o[k]]=(i+j)/2
        i=j+1
    return r
def spear(a,b):
    ra,rb=ranks(a),ranks(b); n=len(a)
    ma,mb=sum(ra)/n,sum(rb)/n
    num=sum((x-ma)*(y-mb) for x,y in zip(ra,rb)); den=(sum((x-ma)**2 for x in ra)*sum((y-mb)**2 for y in rb))**.5
    return num/den if den else float('nan')
f=sys.argv[1]; fit=set(sys.argv[2].split(','))
d=json.load(open(f))
rows=d['rows']
for rate in ['all','1mbit','8mbit']:
  for grp in ['fit','held out','all']:
    for m in ['plt','ttfb','fcp','lcp','si']:
        apes=[];pairs=[]
        for r in rows:
            if rate!='all' and r['rate']!=rate: continue
            if grp=='fit' and r['site'] not in fit: continue
            if grp=='held out' and r['site'] in fit: continue
            c=[c for c in r['metrics'] if c['metric']==m][0]
            if c['chromium_median'] is None or c['model_median'] is None: continue
            apes.append(abs(c['model_median']-c['chromium_median'])/c['chromium_median']*100)
            pairs.append((c['model_median'],c['chromium_median']))
        if not apes: continue
        g=sum(a<20 for a in apes); o=sum(20<=a<50 for a in apes); b=sum(a>=50 for a in apes)
        print("| %s | %s | %s | %d | %.1f %% | %.1f | %.1f | %.1f | %.3f | %d/%d/%d |"%(rate,grp,m.upper() if m!='si' else 'SI',len(apes),sum(apes)/len(apes),pct(apes,50),pct(apes,90),pct(apes,95),spear([p[0] for p in pairs],[p[1] for p in pairs]),g,o,b))
