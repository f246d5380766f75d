#!/usr/bin/env python3
"""Import circles between the C modules (make check-style).

A module is a source file and its header: server/http.c and server/http.h are
one module, "server/http"; NAME_internal.h, the private header of NAME's
files, belongs to NAME.  Module A imports module B when a file of A has
`#include "..."` naming a file of B, looked up beside the including file and
then in the Makefile's -I folders.  A circle is a set of modules each of which
reaches the others through imports (a strongly connected component of more
than one module); each is printed as one line, with one path around it.
Exit 1 when there is any.

    scripts/include-circles.py [FILE...]   (default: every tracked .c and .h)
"""

import os
import re
import subprocess
import sys

INCLUDE_DIRS = ["lib", "netlib", "lockbench/locks"]  # the Makefile's -I
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "*.c", "*.h"], check=True,
                             capture_output=True, text=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for root, _, names in os.walk("."):
            for n in names:
                if n.endswith((".c", ".h")):
                    found.append(os.path.relpath(os.path.join(root, n)))
        return found


def module(path):
    base = os.path.splitext(os.path.normpath(path))[0]
    if base.endswith("_internal"):
        return base[: -len("_internal")]
    return base


def resolve(name, including, known):
    for d in [os.path.dirname(including)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if p in known:
            return p
    return None


def graph(files):
    known = set(os.path.normpath(f) for f in files)
    edges = {}
    for f in sorted(known):
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        a = module(f)
        edges.setdefault(a, set())
        for name in INCLUDE_RE.findall(text):
            p = resolve(name, f, known)
            if p is None:
                continue
            b = module(p)
            if b != a:
                edges[a].add(b)
                edges.setdefault(b, set())
    return edges


def components(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def path_around(comp, edges):
    """One closed path from the component's first module through all it can
    reach inside, found by breadth-first search back to the start."""
    inside = set(comp)
    start = comp[0]
    seen = {start: None}
    queue = [start]
    cycle = None
    while queue and cycle is None:
        v = queue.pop(0)
        for w in sorted(edges[v] & inside):
            if w == start:
                cycle = v
                break
            if w not in seen:
                seen[w] = v
                queue.append(w)
    path = []
    v = cycle
    while v is not None:
        path.append(v)
        v = seen[v]
    path.reverse()
    return path + [start]


def main(argv):
    files = argv[1:] or tracked_files()
    edges = graph(files)
    circles = components(edges)
    for comp in circles:
        print("include circle: %s (%s)" % (" -> ".join(path_around(comp, edges)),
                                            ", ".join(comp)))
    if circles:
        print("include-circles: %d circle(s) among %d modules" % (len(circles), len(edges)))
        return 1
    print("include-circles: %d modules, no circle" % len(edges))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
