#!/usr/bin/python3
"""Sizes the standard sets (PREAMBLE, issue 60): no C file (program, BPF, test or helper)
over 600 lines, no C function over 80. A function is counted from the first line of its
signature to its closing brace at the start of a line, blank lines and comments included:
what a reader has to scroll through. Initialisers (`= {` ... `};`) are tables, not
functions. Exit 1 with the offenders. Usage: sizes.py [ROOT]"""
import pathlib
import re
import subprocess
import sys

MAX_FILE = 600
MAX_FUNCTION = 80


def c_files(root):
    """The C files git tracks (or would: untracked, not ignored) below root."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.c", "*.h"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    return [p for p in out.split() if (root / p).is_file()]


def functions(lines):
    """(name, first line, length) of every function definition in a file's lines. The
    style (.clang-format, Linux braces) puts a function's opening and closing braces
    alone at the margin; its signature is the run of lines above the opening one back
    to a blank line, a comment's end, a preprocessor line or a statement's end."""
    found = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        start = i
        while start > 0:
            above = lines[start - 1].rstrip()
            if not above or above.endswith((";", "}", "*/")) or above.startswith(("#", "//")):
                break
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "}":
            end += 1
        head = " ".join(lines[start:i])
        names = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
        name = next((n for n in names if n not in ("SEC", "BPF_PROG", "__attribute__")), "?")
        if names and "BPF_PROG" in names:
            name = re.search(r"BPF_PROG\s*\(\s*(\w+)", head).group(1)
        found.append((name, start + 1, end - start + 1))
        i = end + 1
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    bad = []
    for path in c_files(root):
        lines = (root / path).read_text(errors="replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_FILE:
            bad.append(f"{path}: {len(lines)} lines (at most {MAX_FILE})")
        for name, first, length in functions(lines):
            if length > MAX_FUNCTION:
                bad.append(f"{path}:{first}: {name} is {length} lines (at most {MAX_FUNCTION})")
    for line in bad:
        print(line)
    if bad:
        print(f"sizes: {len(bad)} over the limits", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
