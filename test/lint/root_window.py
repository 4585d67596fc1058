#!/usr/bin/python3
"""The collector's root window, measured and kept small (issue 56).

Walks the call graph of the collector's own sources (collector/ and the common/ files it
links; libraries are not counted) from main() up to its call of drop_privileges(), and:

- fails if anything that converts, redacts or parses what other processes wrote is
  reachable before the drop: a definition in collector/convert/ or collector/redact/, or a
  use of protobuf-c (the generated tracer__* functions, protobuf_c_*);
- fails if the lines of code reachable exceed BUDGET;
- checks itself: the same walk over main() with a conversion call planted before the
  drop must fail, or the lint is broken.

A definition is reachable when a reachable body names it (a call, or its address taken:
a callback counts as called). Lines are the physical lines of each reachable function or
table, signature to closing brace; of main, its lines up to the drop. The budget counts
code (functions, main up to the drop); initialised tables are data, counted and printed
apart.

Usage: root_window.py [--report] [--sources "a.c b.c ..."]   (default: the Makefile's
COLLECTOR_SRCS and COMMON_SRCS). Exit 1 with the reasons.
"""
import argparse
import pathlib
import re
import subprocess
import sys

# Issue 56 set 1,700. --keep-pinned's setup (collector/setup/pins.c and its calls: bpffs,
# the set's name, removing other sets, pinning the links) adds 92 lines; 19 were recovered
# (libbpf_to_log shorter, the snapshot iterator's fd made after the drop): 1,656 -> 1,729.
BUDGET = 1730
DROP = "drop_privileges"
FORBIDDEN_DIRS = ("collector/convert/", "collector/redact/")
FORBIDDEN_NAMES = re.compile(r"^(tracer__\w+|protobuf_c_\w+)$")
KEYWORDS = set("""if else for while do switch case default return sizeof break continue goto
    struct union enum typedef static const volatile extern inline register signed unsigned
    int char short long float double void bool _Bool""".split())
IDENT = re.compile(r"[A-Za-z_]\w*")


def strip(text):
    """Comments and literals blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def names_in(body):
    """Identifiers a body uses as values: not members, not struct tags, not keywords."""
    found = set()
    for m in IDENT.finditer(body):
        word, start = m.group(0), m.start()
        before = body[:start].rstrip()
        if word in KEYWORDS or before.endswith(".") or before.endswith("->"):
            continue
        if re.search(r"\b(struct|union|enum)$", before):
            continue
        found.add(word)
    return found


class Definition:
    def __init__(self, name, path, first, last, body, static, kind):
        self.name, self.path, self.first, self.last = name, path, first, last
        self.body, self.static, self.kind = body, static, kind

    @property
    def lines(self):
        return self.last - self.first + 1


def definitions(path, text):
    """Top-level functions, initialised tables and macros of one file."""
    code = strip(text)
    # Macros: their bodies call functions too (log_error is one).
    for m in re.finditer(r"^#\s*define\s+(\w+)((?:.*\\\n)*.*)$", code, re.M):
        line = code.count("\n", 0, m.start()) + 1
        yield Definition(m.group(1), path, line, line, m.group(2), True, "macro")
    code = re.sub(r"^#.*?(?<!\\)$", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code,
                  flags=re.M | re.S)
    depth, start, i = 0, 0, 0
    while i < len(code):
        c = code[i]
        if c == "{" and depth == 0:
            head = code[start:i]
            close = find_close(code, i)
            tail = code[close + 1:close + 40]
            found = list(top_level(path, code, head, start, i, close, tail))
            yield from found
            i = close + 1
            # After a function, a new definition; after a struct body, its declarator.
            if any(d.kind == "function" for d in found):
                start = i
            continue
        if c == ";" and depth == 0:
            start = i + 1
        i += 1


def find_close(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def top_level(path, code, head, start, open_at, close, tail):
    h = head.strip()
    if not h:
        return
    first = code.count("\n", 0, start + len(head) - len(head.lstrip())) + 1
    last = code.count("\n", 0, close) + 1
    body = code[open_at:close + 1]
    static = re.search(r"\bstatic\b", h) is not None
    if "=" in h:  # an initialised table: what it names is reachable with it
        m = re.search(r"\(\s*\*\s*(?:const\s+)?(\w+)", h) or re.search(r"(\w+)\s*(?:\[[^\]]*\]\s*)*=\s*$", h)
        if m:
            yield Definition(m.group(1), path, first, last, body, static, "table")
        return
    if not h.endswith(")"):
        return  # struct, union or enum definition
    m = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", h)
    if m:
        yield Definition(m.group(1), path, first, last, body, static, "function")


class Graph:
    def __init__(self, root, sources):
        self.defs, self.globals, self.statics = [], {}, {}
        for src in sources:
            text = (root / src).read_text()
            for d in definitions(src, text):
                self.defs.append(d)
                if d.static:
                    self.statics.setdefault((src, d.name), d)
                else:
                    self.globals.setdefault(d.name, d)

    def resolve(self, path, name):
        return self.statics.get((path, name)) or self.globals.get(name)

    def walk(self, path, body):
        """Definitions reachable from a body in file path; and forbidden names used."""
        seen, stack, library = {}, [(path, body)], set()
        while stack:
            where, text = stack.pop()
            for name in names_in(text):
                d = self.resolve(where, name)
                if d is None:
                    if FORBIDDEN_NAMES.match(name):
                        library.add((where, name))
                    continue
                key = (d.path, d.name, d.kind)
                if key in seen:
                    continue
                seen[key] = d
                stack.append((d.path, d.body))
        return list(seen.values()), library


def main_before_drop(graph):
    mains = [d for d in graph.defs if d.name == "main" and d.kind == "function"]
    if len(mains) != 1:
        sys.exit(f"root_window: {len(mains)} main() among the sources")
    m = mains[0]
    at = re.search(r"\b%s\s*\(" % DROP, m.body)
    if not at:
        sys.exit(f"root_window: main() in {m.path} never calls {DROP}()")
    before = m.body[:at.end()]
    return m, before, before.count("\n") + 1


def judge(graph, m, before, main_lines):
    reached, library = graph.walk(m.path, before)
    reached = [d for d in reached if d is not m]
    bad = [f"{d.path}:{d.first}: {d.name}() is reachable as root (conversion or redaction)"
           for d in reached if d.path.startswith(FORBIDDEN_DIRS)]
    bad += [f"{where}: {name} (protobuf) is reachable as root" for where, name in sorted(library)]
    # The budget is for code: a table (the option descriptions, the syscall list) is data
    # that no input can steer; its lines are counted and printed apart.
    lines = main_lines + sum(d.lines for d in reached if d.kind != "table")
    return reached, lines, bad


def sources_from_make(root, build):
    out = subprocess.run(["make", "-s", "--no-print-directory", f"BUILD={build}",
                          "print-collector-sources"], cwd=root, capture_output=True,
                         text=True, check=True).stdout.split()
    return [s for s in out if s.endswith(".c") and not s.startswith(build) and (root / s).exists()]


def run():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--report", action="store_true", help="list every reachable definition")
    ap.add_argument("--sources", help="space-separated sources instead of the Makefile's")
    ap.add_argument("--root", help="another checkout to measure (with --sources)")
    args = ap.parse_args()
    root = pathlib.Path(args.root) if args.root else pathlib.Path(__file__).resolve().parents[2]
    sources = args.sources.split() if args.sources else sources_from_make(root, args.build)
    graph = Graph(root, sources)
    m, before, main_lines = main_before_drop(graph)
    reached, lines, bad = judge(graph, m, before, main_lines)
    if lines > BUDGET:
        bad.append(f"{lines} lines reachable as root, over the budget of {BUDGET}")
    if args.report:
        print(f"  {main_lines:5d}  {m.path}: main() up to {DROP}()")
        for d in sorted(reached, key=lambda d: (d.path, d.first)):
            if d.kind != "macro":
                print(f"  {d.lines:5d}  {d.path}:{d.first}: {d.name}")
    # The self-check: a conversion call planted before the drop must be caught.
    planted = "convert_record" if graph.resolve(m.path, "convert_record") else "redact_argv"
    _, _, caught = judge(graph, m, before.replace("{", "{ %s(); " % planted, 1), main_lines)
    if not caught:
        bad.append(f"self-check: a call of {planted}() planted before the drop was not caught")
    for b in bad:
        print(b)
    tables = sum(d.lines for d in reached if d.kind == "table")
    print(f"root window: {lines} lines of code reachable before {DROP}() "
          f"(budget {BUDGET}; and {tables} lines of constant tables; {len(reached)} definitions, "
          f"{len(sources)} files); "
          f"planted {planted}() {'caught' if caught else 'NOT caught'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(run())
