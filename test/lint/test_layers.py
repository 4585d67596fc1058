#!/usr/bin/python3
"""layers.py fails on what it is there to catch: a tree with a render file that includes
db/ and calls SQLite, a folder whose internal.h misses a file, a file left beside tracer.c, and a model file that
includes a verb's header; and passes the same tree once they are gone. Run by make lint."""
import pathlib
import subprocess
import sys
import tempfile

LAYERS = pathlib.Path(__file__).resolve().parent / "layers.py"

INTERNAL = {
    "verbs": "cmd_x.c commands.h", "launch": "", "model": "load.c", "cost": "", "db": "clidb.c",
    "render": "text.c",
}


def tree(root, files):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)


def layers(root):
    p = subprocess.run([sys.executable, str(LAYERS), str(root)], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    clean = {f"cli/{d}/internal.h": f"/* {names} */\n" for d, names in INTERNAL.items()}
    clean.update({
        "cli/tracer.c": '#include "cli/verbs/commands.h"\n',
        "cli/verbs/commands.h": "int cmd_x(void);\n",
        "cli/verbs/cmd_x.c": '#include "cli/model/load.h"\n#include "cli/render/text.h"\n',
        "cli/model/load.c": '#include "cli/db/clidb.h"\n#include "cli/render/text.h"\n',
        "cli/db/clidb.c": "#include <sqlite3.h>\nint f(sqlite3 *d) { return sqlite3_changes(d); }\n",
        "cli/render/text.c": '#include "cli/render/text.h"\n',
    })
    broken = dict(clean)
    broken["cli/render/text.c"] = '#include "cli/db/clidb.h"\nint g(void *d) { return sqlite3_changes(d); }\n'
    broken["cli/model/load.c"] = '#include "cli/verbs/commands.h"\n'
    broken["cli/db/fleet.c"] = "int fleet;\n"
    broken["cli/export.c"] = "int flat;\n"
    failures = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        tree(pathlib.Path(a), clean)
        rc, out = layers(pathlib.Path(a))
        if rc != 0:
            failures.append(f"a clean tree fails: {out}")
        tree(pathlib.Path(b), broken)
        rc, out = layers(pathlib.Path(b))
        expected = ["cli/render/text.c:1: cli render includes cli/db/clidb.h",
                    "cli/render/text.c:2: render/ touches SQLite",
                    "cli/model/load.c:1: cli model includes cli/verbs/commands.h",
                    "cli/db/internal.h: does not name fleet.c",
                    "cli/export.c: beside cli/tracer.c"]
        if rc != 1:
            failures.append(f"a broken tree passes (exit {rc}): {out}")
        failures += [f"not reported: {e}\n{out}" for e in expected if e not in out]
    for f in failures:
        print("test_layers:", f)
    print(f"test_layers: {'FAIL' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
