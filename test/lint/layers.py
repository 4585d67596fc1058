#!/usr/bin/python3
"""The layers of the aggregator, the collector and the CLI, checked (docs/architecture.md has the maps):
a file includes only headers of its own layer or of the layers it may use, and no file
outside a directory includes that directory's internal.h. In the CLI, each folder's
internal.h names all its files, and render/ and launch/ never touch SQLite: render
prints what it is given, launch starts processes.
Exit 1 with the offending lines."""
import pathlib
import re
import subprocess
import sys

# Highest first: each layer may include the ones after it. main is the folder's top level.
ORDERED_LAYERS = {
    "aggregator": ["main", "receive", "ingest", "correlate", "insight", "model", "store", "outbox"],
    # setup/ is what runs as root: it may include no other layer of the collector (and
    # test/lint/root_window.py checks what it calls before the privilege drop).
    "collector": ["main", "send", "convert", "redact", "setup"],
}

# The CLI's layers and what each may include besides itself. main is cli/tracer.c.
CLI_MAY_USE = {
    "main": {"verbs", "launch", "model", "cost", "db", "render"},
    "verbs": {"launch", "model", "cost", "db", "render"},  # a verb loads (model) and prints (render)
    "launch": set(),  # tracer run's processes: the watched command, the daemons, their user
    "model": {"cost", "db", "render"},  # what the verbs show, read from the database
    "cost": {"db", "render"},  # prices, usage and how a host's cost is split
    "db": {"render"},  # opening the database (a file or the fleet's copy), rows as JSON
    "render": set(),  # text, JSON, tables and terminal safety; never the database
}
NO_DATABASE = {"render", "launch"}
SQLITE = re.compile(r'#include <sqlite3\.h>|\bsqlite3_[a-z_0-9]+\s*\(')


def layer_of(path):
    """("aggregator" | "cli", layer) of a repository path, or (None, None)."""
    parts = pathlib.PurePath(path).parts
    if len(parts) < 2 or parts[0] not in ("aggregator", "collector", "cli"):
        return None, None
    return parts[0], "main" if len(parts) == 2 else parts[1]


def may_include(program, mine, theirs):
    if mine == theirs:
        return True
    if program in ORDERED_LAYERS:
        order = ORDERED_LAYERS[program]
        if mine not in order or theirs not in order:
            return True
        return order.index(theirs) > order.index(mine)
    if mine not in CLI_MAY_USE:
        return True
    return theirs in CLI_MAY_USE[mine]


def check_file(root, f):
    bad = []
    program, mine = layer_of(f)
    if program == "cli" and mine not in CLI_MAY_USE:
        return [f"{f}: in no CLI layer (add its folder to test/lint/layers.py)"]
    if program == "cli" and mine == "main" and f != "cli/tracer.c":
        return [f"{f}: beside cli/tracer.c: a CLI file belongs in its layer's folder"]
    for n, line in enumerate((root / f).read_text().splitlines(), 1):
        if program == "cli" and mine in NO_DATABASE and SQLITE.search(line):
            bad.append(f"{f}:{n}: {mine}/ touches SQLite: {line.strip()}")
        m = re.match(r'#include "((?:aggregator|collector|cli)/[^"]+)"', line)
        if not m:
            continue
        target = m.group(1)
        their_program, theirs = layer_of(target)
        if target.endswith("/internal.h") and pathlib.PurePath(target).parent != pathlib.PurePath(f).parent:
            bad.append(f"{f}:{n}: includes another directory's internal.h: {target}")
        elif their_program == program and not may_include(program, mine, theirs):
            bad.append(f"{f}:{n}: {program} {mine} includes {target}, a layer it may not use")
    return bad


def unlisted(root, files):
    """Each CLI folder's internal.h names every file of the folder."""
    bad = []
    for layer in CLI_MAY_USE:
        if layer == "main":
            continue
        folder = root / "cli" / layer
        mine = [f for f in files if pathlib.PurePath(f).parent == pathlib.PurePath("cli", layer)]
        if not mine:
            continue
        internal = folder / "internal.h"
        if not internal.exists():
            bad.append(f"cli/{layer}/: no internal.h naming its files")
            continue
        text = internal.read_text()
        for f in mine:
            name = pathlib.PurePath(f).name
            # A header is named by itself or by its .c.
            names = {name, name[:-2] + ".c"} if name.endswith(".h") else {name}
            if name != "internal.h" and not any(re.search(r"\b" + re.escape(n) + r"\b", text) for n in names):
                bad.append(f"cli/{layer}/internal.h: does not name {name}")
    return bad


def main():
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "aggregator/*.c", "aggregator/*.h", "collector/*.c",
                            "collector/*.h", "cli/*.c", "cli/*.h"],
                           cwd=root, capture_output=True, text=True, check=True).stdout.split()
    every_cli = subprocess.run(["git", "ls-files", "cli/*/*"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.split()
    bad = unlisted(root, every_cli)
    for f in files:
        if (root / f).exists():
            bad += check_file(root, f)
    for b in bad:
        print(b)
    counts = {p: sum(1 for f in files if f.startswith(p + "/")) for p in ("aggregator", "collector", "cli")}
    print(f"layers: {counts['aggregator']} aggregator, {counts['collector']} collector and {counts['cli']} cli files, "
          f"{len(bad)} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
