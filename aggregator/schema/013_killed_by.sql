-- tracer schema version 13: who sent the signal that killed a process.
-- Filled where the kernel tells (the BTF tracepoint signal:signal_generate)
-- and only for signals a process sent with kill(2), tkill(2) or sigqueue(3):
-- the kernel's own (a fault, SIGPIPE, the OOM killer) have no sender here.

-- The sender's process id (in the collector's PID namespace); NULL: none known.
ALTER TABLE processes ADD COLUMN killed_by_pid INTEGER;
-- The sender's kernel task name (15 characters).
ALTER TABLE processes ADD COLUMN killed_by_comm TEXT;
