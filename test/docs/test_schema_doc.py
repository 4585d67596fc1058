#!/usr/bin/python3
"""docs/schema.md against the schema the migrations build: users query the
database directly, so every table, view, column and index must be documented,
and the documented indexes must exist."""
import glob
import os
import re
import sqlite3
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# Tables described in docs/shipping.md, which schema.md points to.
SHIPPING = {"outbox", "outbox_size", "outbox_drops", "outbox_held", "dead_letters", "shipper_state"}


def read(doc):
    with open(os.path.join(ROOT, "docs", doc)) as f:
        return f.read()


def migrated():
    db = sqlite3.connect(":memory:")
    for path in sorted(glob.glob(os.path.join(ROOT, "aggregator", "schema", "*.sql"))):
        with open(path) as f:
            db.executescript(f.read())
    return db


def sections(text):
    """Level-2 sections by heading."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^## (.*)\n((?:(?!^## ).*\n?)*)", text, re.M)}


def named(text):
    """Every word inside a `code span`: `a`, `(a, b)` and `f(a, b)` all name a."""
    return {w for span in re.findall(r"`([^`\n]+)`", text) for w in re.findall(r"\w+", span)}


def section_of(secs, name):
    for head, body in secs.items():
        if f"`{name}`" in head:
            return body
    return None


class SchemaDoc(unittest.TestCase):
    def setUp(self):
        self.db = migrated()
        self.addCleanup(self.db.close)
        self.doc, self.shipping = read("schema.md"), read("shipping.md")
        self.secs = sections(self.doc)

    def objects(self, kind):
        return [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name", (kind,))]

    def test_version_in_title(self):
        last = sorted(glob.glob(os.path.join(ROOT, "aggregator", "schema", "*.sql")))[-1]
        version = int(os.path.basename(last).split("_")[0])
        self.assertIn(f"# The SQLite schema (version {version})", self.doc)
        self.assertRegex(self.doc, rf"\n\| {version} \| `0*{version}_\w+\.sql` \|", "migration table row")

    def test_every_column_is_documented(self):
        missing = []
        for name in self.objects("table") + self.objects("view"):
            if name in SHIPPING:
                where = self.secs["Shipping tables *(v5)*"] + self.shipping
            else:
                where = section_of(self.secs, name) or self.secs["Views *(v3)*"]
            documented = named(where)
            cols = [r[1] for r in self.db.execute(f"PRAGMA table_info({name})")]
            missing += [f"{name}.{c}" for c in cols if c not in documented]
        self.assertEqual(missing, [], "columns not named in their table's section of docs/schema.md")

    def test_documented_indexes_are_the_real_ones(self):
        body = self.secs["Indexes"]
        table = [line for line in body.splitlines() if line.startswith("| `")]
        documented = set()
        for line in table:
            tables, indexes = line.split("|")[1:3]
            for t in re.findall(r"`(\w+)`", tables):
                for cols in re.findall(r"`\(?([\w, ]+)\)?`", indexes):
                    documented.add((t, tuple(c.strip() for c in cols.split(","))))
        real = set()
        for t in self.objects("table"):
            if t in SHIPPING or t == "meta":
                continue
            for _, idx, *_ in self.db.execute(f"PRAGMA index_list({t})"):
                cols = tuple(r[2] for r in self.db.execute(f"PRAGMA index_info({idx})"))
                if idx.startswith("sqlite_autoindex_"):
                    continue  # a primary key or UNIQUE constraint, documented with its table
                real.add((t, cols))
        self.assertEqual(sorted(real - documented), [], "indexes that exist but are not in the Indexes table")
        self.assertEqual(sorted(documented - real), [], "indexes in the Indexes table that do not exist")

    def test_promised_lookups_use_their_index(self):
        """The lookups the Indexes section promises are fast, as SQLite plans
        them: partial indexes must still serve `=`, `IN` and joins."""
        promised = {
            "SELECT * FROM processes WHERE run_id = ?": "processes_run",
            "SELECT * FROM processes WHERE run_id = (SELECT max(id) FROM runs)": "processes_run",
            "SELECT p.pid FROM steps s JOIN processes p ON p.step_id = s.id WHERE s.run_id = ?":
                "processes_step",
            "SELECT * FROM processes WHERE step_id IN (?, ?)": "processes_step",
            "SELECT * FROM processes WHERE parent_id = ?": "processes_parent",
            "SELECT * FROM processes WHERE pid = ? AND proc_start_boot_ns = ?": "processes_pid",
        }
        for sql, index in promised.items():
            params = [1] * sql.count("?")
            plan = " / ".join(r[3] for r in self.db.execute("EXPLAIN QUERY PLAN " + sql, params))
            self.assertRegex(plan, rf"SEARCH \w+ USING (COVERING )?INDEX {index} ", f"{sql}: {plan}")


if __name__ == "__main__":
    unittest.main()
