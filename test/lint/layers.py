#!/usr/bin/python3
"""The aggregator's and the collector's layers, checked: a file includes only headers of its
own layer or of layers below it (docs/architecture.md has the map), and no file outside a
directory includes that directory's internal.h. Exit 1 with the offending lines."""
import pathlib
import re
import subprocess
import sys

# Highest first: each layer may include the ones after it. main is the folder's top level.
LAYERS = {
    "aggregator": ["main", "receive", "ingest", "correlate", "insight", "model", "store", "outbox"],
    # setup/ is what runs as root: it may include no other layer of the collector (and
    # test/lint/root_window.py checks what it calls before the privilege drop).
    "collector": ["main", "send", "convert", "redact", "setup"],
}


def layer_of(path):
    parts = pathlib.PurePath(path).parts
    if len(parts) < 2 or parts[0] not in LAYERS:
        return None, None
    return parts[0], "main" if len(parts) == 2 else parts[1]


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    globs = [f"{top}/*.{ext}" for top in LAYERS for ext in ("c", "h")]
    files = subprocess.run(["git", "ls-files", *globs], cwd=root,
                           capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for f in files:
        top, mine = layer_of(f)
        if top is None or mine not in LAYERS[top]:
            continue
        order = LAYERS[top]
        for n, line in enumerate((root / f).read_text().splitlines(), 1):
            m = re.match(r'#include "((?:aggregator|collector)/[^"]+)"', line)
            if not m:
                continue
            target = m.group(1)
            their_top, theirs = layer_of(target)
            if target.endswith("/internal.h") and pathlib.PurePath(target).parent != pathlib.PurePath(f).parent:
                bad.append(f"{f}:{n}: includes another directory's internal.h: {target}")
            elif their_top == top and theirs in order and order.index(theirs) < order.index(mine):
                bad.append(f"{f}:{n}: {mine} includes {target}, a layer above it")
    for b in bad:
        print(b)
    print(f"layers: {len(files)} aggregator and collector files, {len(bad)} upward include(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
