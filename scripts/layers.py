#!/usr/bin/env python3
"""Import circles among a crate's modules: exits 1, listing them, where modules import each other.

Each `crate::`, `super::` and `self::` path in a module's code (comments left out) is an edge to
the deepest module it names; an edge from a module to one of its own ancestors (a child using
its parent's items) is the module's own business and not counted. A strongly connected set of
two or more modules is a circle. Usage: scripts/layers.py [SRC ...] (default: src program/src).
"""
import collections
import os
import re
import sys


def modules(root):
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, root)[:-3].split("/")
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts in (["lib"], ["main"]):
                parts = []
            found[tuple(parts)] = path
    return found


def edges_of(found):
    def resolve(path):
        for k in range(len(path), 0, -1):
            if tuple(path[:k]) in found:
                return tuple(path[:k])
        return None

    edges = collections.defaultdict(set)
    for module, path in found.items():
        for line in open(path, encoding="utf-8"):
            if line.strip().startswith("//"):
                continue
            for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)(::\{([^}]*)\})?", line):
                base, rest = m.group(1), [p for p in m.group(2).split("::") if p]
                if base == "crate":
                    start = []
                elif base == "super":
                    start = list(module[:-1])
                    while rest and rest[0] == "super":
                        rest, start = rest[1:], start[:-1]
                else:
                    start = list(module)
                paths = [start + rest]
                for part in (m.group(4) or "").split(","):
                    part = part.strip().split(" as ")[0]
                    if part:
                        paths.append(start + rest + part.split("::"))
                for p in paths:
                    target = resolve(p)
                    if target is None or target == module or module[: len(target)] == target:
                        continue
                    edges[module].add(target)
    return edges


def circles(nodes, edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted("/".join(m) or "(root)" for m in group))

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def main():
    roots = sys.argv[1:] or ["src", "program/src"]
    bad = 0
    for root in roots:
        found = modules(root)
        for group in circles(list(found), edges_of(found)):
            bad += 1
            print(f"{root}: modules importing each other: {', '.join(group)}")
    print(f"{bad} import circles in {', '.join(roots)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
