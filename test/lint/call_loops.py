#!/usr/bin/python3
"""No two source files call each other, directly or round a loop: from each object's
defined and undefined symbols (nm), the file-to-file call graph must have no cycle.
Usage: call_loops.py BUILD_DIR. Exit 1 with the loops found."""
import collections
import pathlib
import subprocess
import sys


def symbols(obj):
    defined, wanted = set(), set()
    for line in subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            wanted.add(parts[1])
    return defined, wanted


def loops(graph):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    sources = subprocess.run(["git", "ls-files", "aggregator/*.c", "collector/*.c", "shipper/*.c",
                              "cli/*.c", "common/*.c"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    owner, wants = {}, {}
    for src in sources:
        obj = build / "obj" / pathlib.Path(src).with_suffix(".o")
        if not obj.exists():
            continue
        defined, wanted = symbols(str(obj))
        for s in defined:
            owner[s] = src
        wants[src] = wanted
    graph = collections.defaultdict(set)
    for src, wanted in wants.items():
        graph[src]
        for s in wanted:
            if s in owner and owner[s] != src:
                graph[src].add(owner[s])
    found = loops(graph)
    for comp in found:
        print("call loop:", " <-> ".join(comp))
    print(f"call loops: {len(wants)} files, {len(found)} loop(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
