#!/usr/bin/env python3
"""The import graph of the workspace: crates (from `cargo metadata`, normal
dependencies) and, inside each crate, its top-level modules (from the `crate::`
paths each module's files name). Prints both graphs, each crate's lines of
code, and any cycle; exits 1 on a cycle of modules or crates.

Usage: scripts/import-graph.py [--dot]   (run from the repository)
"""
import json, os, re, subprocess, sys
import sys as _sys
if _sys.argv[1:2] in (['-h'], ['--help']):
    print(__doc__.strip())
    _sys.exit(0)
from collections import defaultdict

def crates():
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"]))
    ours = {p["name"]: p for p in meta["packages"]}
    deps = {n: sorted({d["name"] for d in p["dependencies"]
                       if d["name"] in ours and d["kind"] is None and d["name"] != n})
            for n, p in ours.items()}
    roots = {n: os.path.dirname(p["manifest_path"]) for n, p in ours.items()}
    return deps, roots

def reexports(src):
    """Names the crate root re-exports from its modules (`pub use error::{Error, …}`):
    `crate::Error` is an import of `error`."""
    names = {}
    for root in ("lib.rs", "main.rs"):
        path = os.path.join(src, root)
        if not os.path.exists(path):
            continue
        for module, items in re.findall(r"^pub use ([a-z_][a-z0-9_]*)::(\{[^}]*\}|\w+);", open(path).read(), re.M):
            for name in re.findall(r"\b([A-Za-z_]\w*)\b", items):
                names[name] = module
    return names

def modules(src):
    """Top-level module of each .rs file under src, and the crate:: modules it names."""
    graph = defaultdict(set)
    names = reexports(src)
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            top = rel.split(os.sep)[0].removesuffix(".rs")
            if top in ("lib", "main"):
                top = "(root)"
            text = open(path).read()
            # Leave out test modules: `#[cfg(test)] mod tests { … }` to the end of the file.
            cut = text.find("#[cfg(test)]")
            if cut >= 0:
                text = text[:cut]
            # Comments name modules without importing them.
            text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))
            graph[top]  # every module is a node
            for m in re.findall(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)", text):
                m = names.get(m, m)
                if m != top:
                    graph[top].add(m)
    known = set(graph)
    return {k: sorted(v & known) for k, v in graph.items()}

def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out

def lines(root):
    total = 0
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        total += sum(sum(1 for _ in open(os.path.join(dirpath, f))) for f in files if f.endswith(".rs"))
    return total

def main():
    deps, roots = crates()
    bad = False
    print("crates (normal dependencies among ours), lines of src/:")
    for n in sorted(deps, key=lambda n: (len(deps[n]), n)):
        print(f"  {n:<9} {lines(roots[n]):>6}  -> {', '.join(deps[n]) or '-'}")
    c = cycles(deps)
    print("crate cycles:", c or "none")
    bad |= bool(c)
    for n in sorted(deps):
        g = modules(os.path.join(roots[n], "src"))
        c = cycles(g)
        edges = sum(len(v) for v in g.values())
        print(f"{n}: {len(g)} modules, {edges} imports, cycles: {c or 'none'}")
        if "--dot" in sys.argv:
            for k in sorted(g):
                for v in g[k]:
                    print(f'  "{n}::{k}" -> "{n}::{v}"')
        bad |= bool(c)
    sys.exit(1 if bad else 0)

main()
