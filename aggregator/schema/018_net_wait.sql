-- Time blocked on the network (issue 59): a thread asleep in a receive, send,
-- connect or accept on an internet socket, or in poll/select/epoll while its
-- process holds one, until woken; apart from I/O wait and from other sleeps.
-- NULL on processes when the scheduler probes were off.
ALTER TABLE processes ADD COLUMN net_wait_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_recv_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_send_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_connect_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_accept_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_poll_ns INTEGER;
ALTER TABLE processes ADD COLUMN net_wait_peer_family INTEGER; -- of the longest single wait: 2 IPv4, 10 IPv6
ALTER TABLE processes ADD COLUMN net_wait_peer_port INTEGER;

ALTER TABLE steps ADD COLUMN net_wait_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN net_wait_recv_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN net_wait_send_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN net_wait_connect_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN net_wait_accept_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN net_wait_poll_ns INTEGER NOT NULL DEFAULT 0;

ALTER TABLE runs ADD COLUMN net_wait_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_wait_recv_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_wait_send_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_wait_connect_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_wait_accept_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_wait_poll_ns INTEGER NOT NULL DEFAULT 0;
