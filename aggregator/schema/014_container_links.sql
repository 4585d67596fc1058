-- tracer schema version 14: containers joined to the run and step that started them.
-- A container's processes are children of the runtime's shim (containerd-shim,
-- conmon), not of the `docker run` that asked for them: the aggregator links the
-- container's first program to a live CLI by what the OS shows (the CLI's argv,
-- the first program's argv, the container id in its cgroup path, uid, timing).
-- One row per container whose link concerns a run; the join key across hosts is
-- (host of the boot, boot_id, container_id), as processes.container_id holds it.
CREATE TABLE container_links (
    id                  INTEGER PRIMARY KEY,
    boot_id             TEXT NOT NULL,
    container_id        TEXT NOT NULL,   -- 64 hex, as in processes.container_id
    runtime             TEXT,            -- from the cgroup path: docker, podman, containerd
    engine              TEXT,            -- the CLI that matched: docker, podman, nerdctl
    first_process_id    INTEGER,         -- processes.id of the container's first program
    first_start_ns      INTEGER NOT NULL,
    first_exec_ns       INTEGER,         -- when it exec'd the command: before, runc set it up
    run_id              INTEGER,         -- the run it is part of; NULL: ambiguous
    step_id             INTEGER,         -- the step; NULL: none, or CLIs of several steps matched
    launcher_process_id INTEGER,         -- processes.id of the CLI that started it
    launcher_pid        INTEGER,
    method              TEXT NOT NULL,   -- argv, entrypoint, ambiguous
    image               TEXT,            -- as the CLI's argv names it
    command             TEXT,            -- JSON array: the command the CLI gave after the image
    candidates          INTEGER NOT NULL -- live CLIs whose command the first program ran
);
CREATE INDEX container_links_run ON container_links(run_id) WHERE run_id IS NOT NULL;
CREATE INDEX container_links_container ON container_links(container_id);

-- Every CLI that matched a container's first program: two for an ambiguous link.
CREATE TABLE container_link_candidates (
    link_id             INTEGER NOT NULL REFERENCES container_links(id),
    launcher_pid        INTEGER NOT NULL,
    run_id              INTEGER,         -- NULL: a CLI in no run (or another tracer run's)
    step_id             INTEGER,
    launcher_process_id INTEGER,
    PRIMARY KEY (link_id, launcher_pid)
);
CREATE INDEX container_link_candidates_run ON container_link_candidates(run_id)
    WHERE run_id IS NOT NULL;
