#!/usr/bin/python3
"""The aggregator's layers, checked: a file includes only headers of its own layer or of
layers below it (docs/architecture.md has the map), and no file outside a directory
includes that directory's internal.h. Exit 1 with the offending lines."""
import pathlib
import re
import subprocess
import sys

# Highest first: each layer may include the ones after it.
LAYERS = ["main", "receive", "ingest", "correlate", "insight", "model", "store", "outbox"]


def layer_of(path):
    parts = pathlib.PurePath(path).parts
    if len(parts) < 2 or parts[0] != "aggregator":
        return None
    return "main" if len(parts) == 2 else parts[1]


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "aggregator/*.c", "aggregator/*.h"], cwd=root,
                           capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for f in files:
        mine = layer_of(f)
        if mine not in LAYERS:
            continue
        for n, line in enumerate((root / f).read_text().splitlines(), 1):
            m = re.match(r'#include "(aggregator/[^"]+)"', line)
            if not m:
                continue
            target = m.group(1)
            theirs = layer_of(target)
            if target.endswith("/internal.h") and pathlib.PurePath(target).parent != pathlib.PurePath(f).parent:
                bad.append(f"{f}:{n}: includes another directory's internal.h: {target}")
            elif theirs in LAYERS and LAYERS.index(theirs) < LAYERS.index(mine):
                bad.append(f"{f}:{n}: {mine} includes {target}, a layer above it")
    for b in bad:
        print(b)
    print(f"layers: {len(files)} aggregator files, {len(bad)} upward include(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
