-- tracer schema version 11: a run records the architecture its programs ran
-- on, so right-sizing proposes only instance types that run those binaries.

-- uname -m of the host the collector watched ("x86_64", "aarch64"); NULL for
-- runs recorded before v11.
ALTER TABLE runs ADD COLUMN arch TEXT;
