#!/usr/bin/python3
"""Who may write what: a sub-struct of the aggregator's model whose header comment says
"Writers: A, B." may be written only from those files or folders (relative to aggregator/;
a folder ends with /). A write is an assignment, compound assignment, ++ or -- through the
member that embeds it (p->links.dirty = ..., ++s->ins.x), or to the member as a whole.
A member name used by any other struct must have the same writers there, so the name
alone says which rule a write falls under. Exit 1 with the offending lines.
Usage: owners.py [ROOT]  (a planted tree can be checked the same way)."""
import pathlib
import re
import subprocess
import sys

OWNED = re.compile(r"/\*((?:(?!\*/).)*?)Writers:\s*([^*]*?)\.?\s*\*/\s*struct\s+(\w+)\s*\{", re.S)
EMBED = r"\bstruct\s+{type}\s+(\w+)\s*;"
MEMBER_DECL = r"\bstruct\s+(\w+)\s+\*?{name}\s*(?:\[[^\]]*\])?\s*;"
ASSIGN = r"(?:[-+*/%&|^]|<<|>>)?=(?!=)"


def write_pattern(member):
    path = r"(?:\[[^\]]*\])?(?:(?:\.|->)\w+(?:\[[^\]]*\])?)*"
    return re.compile(
        rf"(?:->|\.){member}(?P<field>(?:\.\w+)?){path}\s*(?:{ASSIGN}|\+\+|--)"
        rf"|(?:\+\+|--)\s*[\w\[\]>.-]*(?:->|\.){member}(?P<pfield>(?:\.\w+)?)")


def allowed(rel, writers):
    return any(rel == w or (w.endswith("/") and rel.startswith(w)) for w in writers)


def strip_comments(text):
    """Comments and strings blanked, newlines kept (line numbers stay right)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", blank, text, flags=re.S)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    files = sorted(p.relative_to(root).as_posix() for p in (root / "aggregator").rglob("*.[ch]"))
    texts = {f: (root / f).read_text() for f in files}
    headers = {f: t for f, t in texts.items() if f.endswith(".h")}
    rules, bad = [], []
    for h, text in headers.items():
        for m in OWNED.finditer(text):
            writers = [w.strip() for w in m.group(2).split(",") if w.strip()]
            for e in re.finditer(EMBED.format(type=m.group(3)), strip_comments(text)):
                rules.append((m.group(3), e.group(1), writers, h))
    if not rules:
        print("owners: no 'Writers:' sub-structs found")
        return 1
    owned_as = {(typ, member): writers for typ, member, writers, h in rules}
    for typ, member, writers, h in rules:
        for f, text in headers.items():  # the name must say whose rule a write is under
            for d in re.finditer(MEMBER_DECL.format(name=member), strip_comments(text)):
                if owned_as.get((d.group(1), member), writers) != writers or \
                        (d.group(1), member) not in owned_as:
                    bad.append(f"{f}: member '{member}' is also a struct {d.group(1)} with "
                               f"other writers: writes to struct {typ} cannot be told apart")
    checked = 0
    by_member = {}
    for typ, member, writers, h in rules:  # one rule per name (the check above: same writers)
        by_member.setdefault(member, (typ, member, writers, h))
    for f, text in texts.items():
        rel = f[len("aggregator/"):]
        code = strip_comments(text).splitlines()
        for typ, member, writers, h in by_member.values():
            pat = write_pattern(member)
            for n, line in enumerate(code, 1):
                for w in pat.finditer(line):
                    checked += 1
                    if not allowed(rel, writers):
                        bad.append(f"{f}:{n}: writes struct {typ} ({member}"
                                   f"{w.group('field') or w.group('pfield') or ''}), "
                                   f"whose writers are {', '.join(writers)} ({h})")
    for b in bad:
        print(b)
    print(f"owners: {len(rules)} owned sub-structs, {checked} writes, {len(bad)} from outside "
          "their owners")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
