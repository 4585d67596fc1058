#!/usr/bin/python3
"""The hand-written man pages in deploy/man/ against the ground truth of the programs'
own --help: every option a program's --help (and each tracer verb's --help) lists is
in its page, under that verb for tracer; every option a page names exists in --help
(no stale ones); options --help marks as for tests are not advertised. Each page has
the sections a user looks for, names only files that deploy/ installs or makes, and
renders with no warning from groff or from man (as lintian runs it).

TRACER_MAN_DIR points at another copy of the pages (to see the test fail on one)."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
MAN_DIR = os.environ.get("TRACER_MAN_DIR", os.path.join(ROOT, "deploy", "man"))
DAEMONS = ("tracer-collector", "tracer-aggregator", "tracer-shipper")
PAGES = {"tracer": "tracer.1", **{d: d + ".8" for d in DAEMONS}}
# --help is never listed by --help itself; that it exists is checked (exit 0).
ALWAYS = {"--help"}
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "FILES", "ENVIRONMENT",
            "EXIT STATUS", "SEE ALSO")


def help_text(program, *args):
    p = subprocess.run([os.path.join(BUILD, program), *args, "--help"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"{program} {' '.join(args)} --help exited {p.returncode}")
    return p.stdout + p.stderr


def help_entries(text):
    """{option: its help entry}: an entry is the lines from the option's own line (it
    starts the line) up to the next option's line."""
    entries, current = {}, None
    for line in text.splitlines():
        head = re.match(r"\s*(--[a-z][a-z0-9-]*)", line)
        if head:
            current = head.group(1)
            entries[current] = entries.get(current, "") + line
        elif current and line.startswith(" "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def options_of(text):
    return set(OPTION.findall(text))


def test_only(text):
    """Options --help marks as for tests: '(tests)', 'for tests', 'tests only'."""
    return {o for o, e in help_entries(text).items()
            if re.search(r"\(tests?\)|for tests|tests only", e)}


def page_path(program):
    return os.path.join(MAN_DIR, PAGES[program])


def render(program):
    """The page as a reader sees it, one paragraph a line (no hyphenation at breaks)."""
    p = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou", "-rLL=3000n",
                        page_path(program)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def sections(text, indent):
    """{heading: body} of the headings at exactly `indent` columns (.SH 0, .SS 3)."""
    out, name = {}, None
    pattern = re.compile(r"^ {%d}(\S.*)$" % indent)
    for line in text.splitlines():
        m = pattern.match(line)
        if m and (indent == 0 or not line.startswith(" " * (indent + 1))):
            name = m.group(1).strip()
            out[name] = ""
        elif name is not None:
            out[name] += line + "\n"
    return out


class Renders(unittest.TestCase):
    def test_groff_gives_no_warning(self):
        for program in PAGES:
            p = subprocess.run(["groff", "-man", "-ww", "-z", page_path(program)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, ""), program)

    def test_man_gives_no_warning_as_lintian_runs_it(self):
        env = {**os.environ, "LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "80"}
        for program in PAGES:
            p = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z",
                                page_path(program)], capture_output=True, text=True,
                               env=env, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, ""), program)

    def test_every_page_has_its_sections(self):
        for program in PAGES:
            heads = set(sections(render(program), 0))
            wanted = set(SECTIONS) | ({"GLOBAL OPTIONS", "COMMANDS"} if program == "tracer"
                                      else {"OPTIONS", "SIGNALS"})
            self.assertEqual(wanted - heads, set(), program)


class DaemonOptions(unittest.TestCase):
    def test_page_lists_exactly_the_options_of_help(self):
        for program in DAEMONS:
            with self.subTest(program):
                self.check_daemon(program)

    def check_daemon(self, program):
        helped = help_text(program)
        offered = options_of(helped) - test_only(helped)
        page = render(program)
        documented = options_of(sections(page, 0)["OPTIONS"])
        self.assertTrue(len(offered) >= 8, (program, offered))
        self.assertEqual(offered - documented, set(),
                         f"{program}: in --help, not in the page's OPTIONS")
        self.assertEqual(options_of(page) - offered - ALWAYS, set(),
                         f"{program}: in the page, not in --help (stale, or for tests)")

    def test_collector_test_flag_is_not_advertised(self):
        tests_only = test_only(help_text("tracer-collector"))
        self.assertIn("--test-forbidden-syscall", tests_only)
        self.assertEqual(tests_only & options_of(render("tracer-collector")), set())


class TracerOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.top = help_text("tracer")
        cls.verbs = re.findall(r"^  ([a-z]+) ", cls.top, re.M)
        cls.page = render("tracer")
        cls.commands = {}
        for head, body in sections(sections(cls.page, 0).get("COMMANDS", ""), 3).items():
            m = re.match(r"tracer ([a-z]+)\b", head)
            if m:
                cls.commands[m.group(1)] = head + "\n" + body

    def test_every_verb_has_its_options(self):
        self.assertTrue(len(self.verbs) >= 10, self.verbs)
        self.assertEqual(set(self.verbs) - set(self.commands), set(), "verbs with no section")
        self.assertEqual(set(self.commands) - set(self.verbs), set(), "sections of no verb")
        for verb in self.verbs:
            helped = options_of(help_text("tracer", verb))
            paged = options_of(self.commands[verb])
            self.assertTrue(helped, verb)
            self.assertEqual(helped - paged, set(), f"tracer {verb}: in --help, not its section")
            self.assertEqual(paged - helped - ALWAYS, set(),
                             f"tracer {verb}: in its section, not in its --help")

    def test_global_options(self):
        glob = options_of(sections(self.page, 0)["GLOBAL OPTIONS"])
        top = options_of(self.top)
        self.assertTrue({"--db", "--fleet", "--utc", "--version"} <= top, top)
        self.assertEqual(glob - top - ALWAYS, set(), "global options not in tracer --help")
        # --html is report's, which tracer --help names in its line
        self.assertEqual(top - glob - options_of(self.commands.get("report", "")), set())

    def test_no_option_anywhere_that_no_help_lists(self):
        known = options_of(self.top) | ALWAYS
        for verb in self.verbs:
            known |= options_of(help_text("tracer", verb))
        self.assertEqual(options_of(self.page) - known, set())

    def test_exit_codes_of_run_and_status_are_their_helps(self):
        status = sections(self.page, 0)["EXIT STATUS"]
        entries = re.split(r"\n(?=       tracer |       The other)", status)
        for verb in ("run", "status"):
            said = re.search(r"Exit status:(.*)", " ".join(help_text("tracer", verb).split()))
            self.assertTrue(said, verb)
            codes = set(re.findall(r"\b\d+\b", said.group(1)))
            entry = next(e for e in entries if e.strip().startswith(f"tracer {verb}"))
            self.assertEqual(codes - set(re.findall(r"\b\d+\b", entry)), set(), verb)


class Files(unittest.TestCase):
    """Files the pages name are the ones deploy/ installs or makes."""
    MADE_AT_RUN_TIME = {
        "collector.key": "made by tracer-aggregator --make-key (the unit's ExecStartPre)",
        "sink.credentials": "the operator's; deploy/tmpfiles.d sets its mode",
        "shipper.conf": "the operator's copy of shipper.conf.example",
        "fleet.conf": "the operator's, for tracer --fleet",
    }

    def test_named_files_exist_in_deploy(self):
        etc = set(os.listdir(os.path.join(ROOT, "deploy", "etc")))
        units = set(os.listdir(os.path.join(ROOT, "deploy", "systemd")))
        with open(os.path.join(ROOT, "deploy", "tmpfiles.d", "tracer.conf")) as f:
            tmpfiles = f.read()
        made = set(re.findall(r"^d (\S+)", tmpfiles, re.M))
        for program in PAGES:
            text = render(program)
            for name in re.findall(r"/etc/tracer/([\w.-]+\w)", text):
                self.assertTrue(name in etc or name in self.MADE_AT_RUN_TIME, (program, name))
            for unit in re.findall(r"/lib/systemd/system/([\w.-]+\w)", text):
                self.assertIn(unit, units, program)
            listed = sections(text, 0)["FILES"]
            for path in re.findall(r"(/(?:var/lib|run)/[\w.*-]+)", listed):
                self.assertTrue(path in made or path == "/run/tracer-run.*",
                                (program, path, made))


if __name__ == "__main__":
    for program in PAGES:
        if not os.access(os.path.join(BUILD, program), os.X_OK):
            sys.exit(f"{os.path.join(BUILD, program)} is not built")
    unittest.main()
