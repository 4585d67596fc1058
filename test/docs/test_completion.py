#!/usr/bin/python3
"""The bash completion shipped in deploy/bash-completion/tracer, run by bash itself, against
the ground truth of the CLI's own --help: every verb completes, every option a verb's
--help names completes after that verb, and after `run ... --` come commands."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
TRACER = os.path.join(BUILD, "tracer")
COMPLETION = os.path.join(ROOT, "deploy", "bash-completion", "tracer")


def complete(*words):
    """COMPREPLY for the command line `words`, the last being the word under the cursor."""
    script = (f"source {COMPLETION}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
              f"COMP_CWORD={len(words) - 1}; _tracer; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    env = {**os.environ, "PATH": BUILD + ":" + os.environ.get("PATH", "")}
    out = subprocess.run(["bash", "-c", script], capture_output=True,
                         text=True, env=env, timeout=60)
    return [w for w in out.stdout.splitlines() if w]


class Completion(unittest.TestCase):
    def test_every_verb(self):
        helped = re.findall(r"^  ([a-z]+) ", subprocess.run([TRACER, "--help"], capture_output=True,
                                                             text=True).stdout, re.M)
        self.assertTrue(len(helped) >= 10, helped)
        got = complete("tracer", "")
        self.assertTrue(set(helped) <= set(got), (helped, got))
        self.assertEqual([w for w in complete("tracer", "sh") if w.startswith("sh")], ["show"])

    def test_every_option_of_a_verb(self):
        for verb in ("show", "cost", "run", "report", "status"):
            helped = set(re.findall(r"--[a-z][a-z0-9-]*", subprocess.run(
                [TRACER, verb, "--help"], capture_output=True, text=True).stdout +
                subprocess.run([TRACER, verb, "--help"], capture_output=True, text=True).stderr))
            got = set(complete("tracer", verb, "--"))
            self.assertTrue(helped and helped <= got, (verb, helped - got))

    def test_values_and_commands(self):
        self.assertEqual(complete("tracer", "cost", "--by", "pi"), ["pipeline"])
        self.assertEqual(complete("tracer", "show", "--format", "c"), ["csv"])
        self.assertIn("bash", complete("tracer", "run", "--", "bas"))


if __name__ == "__main__":
    if not os.access(TRACER, os.X_OK):
        sys.exit(f"{TRACER} is not built")
    unittest.main()
