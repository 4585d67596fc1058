#!/usr/bin/python3
"""The daemons' options agree wherever they are written down: each daemon's --help, its man
page (help2man's from `make man`, entry by entry; a hand-written deploy/man page, by option
names), its --print-config and the settings file shipped in
deploy/etc are all made from one table (common/options.h). A man page built from an older
--help, a shipped file edited by hand, or a default stated differently in --help and in the
settings file fails here. test/unit/test_options.c checks the tables themselves."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
DAEMONS = {"tracer-collector": "collector.conf", "tracer-aggregator": "aggregator.conf",
           "tracer-shipper": "shipper.conf.example"}


def run(program, *args):
    p = subprocess.run([os.path.join(BUILD, program), *args], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0, (program, args, p.stderr)
    return p.stdout


def help_options(text):
    """{name: (arg, text)} from --help: an option line and its continuation lines."""
    options, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^  --([a-z0-9-]+)(?: (\S+))?(?:\s+(.*))?$", line)
        if m:
            name = m.group(1)
            options[name] = [m.group(2) or "", m.group(3) or ""]
        elif name and re.match(r"^ {20,}\S", line):
            options[name][1] += " " + line.strip()
        else:
            name = None
    return {k: (a, " ".join(t.split())) for k, (a, t) in options.items()}


def default_of(text):
    m = re.search(r"\(default (.+)\)$", text)
    return m.group(1) if m else None


def man_text(path):
    """The man page as words: roff requests dropped, font and hyphen escapes undone."""
    words = []
    for line in open(path):
        if line.startswith((".TP", ".PP", ".SH", ".TH", ".\\\"")):
            continue
        line = re.sub(r"\\f[BRIP]|\\[,/&]", "", line).replace("\\-", "-").replace("\\e", "\\")
        words.append(line.lstrip(".B ").strip() if line.startswith(".B") else line.strip())
    return " ".join(" ".join(words).split())


def settings(text):
    """[(section, key, value, commented)] from a settings file."""
    out, section = [], None
    for line in text.splitlines():
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^(# )?([a-z][a-z0-9_-]*) = (.*)$", line)
        if m:
            out.append((section, m.group(2), m.group(3), bool(m.group(1))))
    return out


class Options(unittest.TestCase):
    def test_man_pages_say_what_help_says(self):
        for program in DAEMONS:
            helped = help_options(run(program, "--help"))
            self.assertGreater(len(helped), 10, program)
            written = os.path.join(ROOT, "deploy", "man", program + ".8")
            if os.path.exists(written):  # hand-written pages: every option, no stale one
                named = set(re.findall(r"\\-\\-([a-z0-9]+(?:\\-[a-z0-9]+)*)", open(written).read()))
                named = {n.replace("\\-", "-") for n in named}
                listed = {n for n, (a, t) in helped.items() if n != "help" and "(tests)" not in t}
                self.assertEqual(listed, named & listed,
                                 f"{written} lacks options --help has")
                continue
            page = os.path.join(BUILD, "man", program + ".8")
            self.assertTrue(os.path.exists(page), f"{page}: run make man")
            man = man_text(page)
            for name, (arg, text) in helped.items():
                entry = " ".join(f"--{name} {arg} {text}".split())
                self.assertIn(entry, man, f"{program}: the man page lacks or differs on --{name}")
            listed = set(re.findall(r"^\\fB\\-\\-([a-z0-9\\-]+)\\fR", open(page).read(), re.M))
            listed = {n.replace("\\-", "-") for n in listed}
            self.assertEqual(listed, set(helped), f"{program}: man page options vs --help")

    def test_shipped_settings_are_print_config(self):
        for program, shipped in DAEMONS.items():
            with open(os.path.join(ROOT, "deploy", "etc", shipped)) as f:
                self.assertEqual(f.read(), run(program, "--print-config"),
                                 f"deploy/etc/{shipped} is not {program} --print-config (make configs)")

    def test_settings_and_help_state_the_same_defaults(self):
        checked = 0
        for program in DAEMONS:
            helped = help_options(run(program, "--help"))
            keys = settings(run(program, "--print-config"))
            self.assertTrue(keys, program)
            for section, key, value, commented in keys:
                if key not in helped:
                    continue  # a key with no option of the same name ([probes], [files])
                said = default_of(helped[key][1])
                if not commented and said is not None:  # commented: an example, not a default
                    self.assertEqual(said, value, f"{program}: [{section}] {key} vs --{key}")
                    checked += 1
        self.assertGreaterEqual(checked, 10)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
