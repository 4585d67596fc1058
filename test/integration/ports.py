"""Listening ports for servers the tests start (ClickHouse, Slurm).

A port the kernel hands out for bind(0) comes from the ephemeral range, the same
range every outgoing connection (curl, nng redials, the shipper) draws from, so
one can be taken between our check and the server's bind. Ports below that range
are never given to outgoing connections; only another listener can collide."""
import random
import socket


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    low = min(_ephemeral_low(), 65536)
    start = 10000 if low > 11000 else 1024
    for _ in range(200):
        port = random.randrange(start, low)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError(f"no free port in {start}-{low - 1}")
