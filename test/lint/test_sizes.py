#!/usr/bin/python3
"""sizes.py fails on what it is there to catch: a C file of 601 lines, and a function of
81 lines (signature to closing brace, BPF's SEC line included); and passes a tree with
a 600-line file, an 80-line function and a 200-line table (an initialiser is data, not a
function). Run by make lint."""
import pathlib
import subprocess
import sys
import tempfile

from test_layers import tree  # a git tree of the given files

SIZES = pathlib.Path(__file__).resolve().parent / "sizes.py"


def function(name, lines, sec=False):
    """A function of exactly `lines` lines, signature to closing brace."""
    head = ['SEC("tp/x")'] if sec else []
    head += [f"static int {name}(int a,", "\t\tint b)", "{"]
    body = ["\ta += b;"] * (lines - len(head) - 2)
    return head + body + ["\treturn a;", "}"]


def text(files):
    return {path: "\n".join(lines) + "\n" for path, lines in files.items()}


def sizes(root):
    p = subprocess.run([sys.executable, str(SIZES), str(root)], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    table = ["static const int table[] = {"] + ["\t1,"] * 198 + ["};"]
    clean = {
        "a/ok.c": ["/* a comment */", "#include <x.h>", ""] + function("fits", 80) + [""] + table,
        "bpf/ok.bpf.c": function("prog", 80, sec=True),
        "a/long.c": ["int x;"] * 600,
    }
    broken = {
        "a/ok.c": clean["a/ok.c"] + [""] + function("too_long", 81),
        "bpf/ok.bpf.c": function("prog", 81, sec=True),
        "a/long.c": ["int x;"] * 601,
    }
    failures = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        tree(pathlib.Path(a), text(clean))
        rc, out = sizes(pathlib.Path(a))
        if rc != 0:
            failures.append(f"a clean tree fails: {out}")
        tree(pathlib.Path(b), text(broken))
        rc, out = sizes(pathlib.Path(b))
        first = 3 + 80 + 1 + len(table) + 1 + 1
        expected = [f"a/ok.c:{first}: too_long is 81 lines (at most 80)",
                    "bpf/ok.bpf.c:1: prog is 81 lines (at most 80)",
                    "a/long.c: 601 lines (at most 600)"]
        if rc != 1:
            failures.append(f"a broken tree passes (exit {rc}): {out}")
        for line in expected:
            if line not in out.splitlines():
                failures.append(f"not reported: {line!r} in {out!r}")
        if len(out.splitlines()) != len(expected):
            failures.append(f"more than expected reported: {out!r}")
    for f in failures:
        print("test_sizes:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
