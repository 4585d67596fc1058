"""Debian's real docker.io and podman as the tests run them here (TESTBED.md): a
private dockerd (its own data root, exec root and socket; no bridge, no iptables),
podman with runc and the cgroupfs manager on its own storage, and an image built
locally without a registry from a tar of static binaries: the project's own
ground-truth helpers (measure: wait4 of its child; cpuburn; memhog; memramp)."""
import os
import shutil
import subprocess
import tempfile
import time

from harness import Failure, Skip, stop_process

DOCKER, DOCKERD, PODMAN = "/usr/bin/docker", "/usr/sbin/dockerd", "/usr/bin/podman"
IMAGE = "local/tracer-test:1"
HELPERS_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers")


def need(*paths):
    """Skip, saying why, only when a binary is truly absent."""
    missing = [p for p in paths if not os.access(p, os.X_OK)]
    if missing:
        raise Skip(f"{', '.join(missing)} not installed (deploy/install-deps.sh tests installs them)")


def image_tree(ctx):
    """A directory with /bin/measure, /bin/cpuburn, /bin/memhog built statically, and /out."""
    root = ctx.path("image")
    os.makedirs(os.path.join(root, "bin"), exist_ok=True)
    os.makedirs(os.path.join(root, "out"), exist_ok=True)
    for name in ("measure", "cpuburn", "memhog", "memramp"):
        subprocess.run(["gcc", "-O1", "-static", "-o", os.path.join(root, "bin", name),
                        os.path.join(HELPERS_SRC, name + ".c")], check=True)
    return root


def short_dir(ctx, prefix):
    """A short path (the containerd socket under the exec root must fit a sockaddr_un)."""
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    ctx.cleanups.append(lambda: shutil.rmtree(d, ignore_errors=True))
    return d


class Docker:
    """A private dockerd, stopped by the test (by its pid) at its end."""

    def __init__(self, ctx):
        need(DOCKER, DOCKERD)
        self.dir = short_dir(ctx, "trd-")
        self.sock = os.path.join(self.dir, "docker.sock")
        self.log = open(os.path.join(self.dir, "dockerd.log"), "w")
        self.proc = subprocess.Popen(
            [DOCKERD, "--data-root", os.path.join(self.dir, "data"), "--exec-root",
             os.path.join(self.dir, "exec"), "-H", f"unix://{self.sock}", "--pidfile",
             os.path.join(self.dir, "docker.pid"), "--bridge=none", "--iptables=false",
             "--ip-masq=false", "--userland-proxy=false"], stdout=self.log, stderr=self.log)
        ctx.cleanups.append(self.stop)
        end = time.time() + 60
        while time.time() < end:
            if self.proc.poll() is not None:
                raise Failure(f"dockerd exited {self.proc.returncode}: {self.tail()}")
            if subprocess.run(self.cli("info"), capture_output=True).returncode == 0:
                break
            time.sleep(0.3)
        else:
            raise Failure(f"dockerd not ready in 60 s: {self.tail()}")
        tree = image_tree(ctx)
        tar = subprocess.Popen(["tar", "-C", tree, "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(self.cli("import", "-", IMAGE), stdin=tar.stdout, check=True,
                       capture_output=True)
        tar.wait()

    def tail(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()[-1500:]

    def cli(self, *args):
        return [DOCKER, "-H", f"unix://{self.sock}", *args]

    def run(self, *args, out=None):
        """`docker run --rm --network none [-v out:/out] ARGS...` as argv."""
        vol = ["-v", f"{out}:/out"] if out else []
        return self.cli("run", "--rm", "--network", "none", *vol, *args)

    def stop(self):
        stop_process(self.proc)
        self.log.close()


class Podman:
    """podman with runc, the cgroupfs manager and its own storage (vfs) under the test."""

    def __init__(self, ctx):
        need(PODMAN, "/usr/sbin/runc")
        self.dir = short_dir(ctx, "trp-")
        tree = image_tree(ctx)
        tar = subprocess.Popen(["tar", "-C", tree, "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(self.cli("import", "-", IMAGE), stdin=tar.stdout, check=True,
                       capture_output=True)
        tar.wait()
        ctx.cleanups.append(lambda: subprocess.run(self.cli("system", "reset", "-f"),
                                                   capture_output=True))

    def cli(self, *args):
        return [PODMAN, "--runtime", "/usr/sbin/runc", "--cgroup-manager", "cgroupfs",
                "--root", os.path.join(self.dir, "root"), "--runroot", os.path.join(self.dir, "run"),
                "--storage-driver", "vfs", "--events-backend", "file", *args]

    def run(self, *args, out=None):
        # The default RLIMIT_NOFILE (1M) and NPROC are above this host's hard limits,
        # which runc may not raise: ask for limits under them.
        vol = ["-v", f"{out}:/out"] if out else []
        return self.cli("run", "--rm", "--network", "none", "--ulimit", "nofile=1024:1024",
                        "--ulimit", "nproc=4096:4096", *vol, *args)


def truth(path):
    """The wait4 account `measure` wrote inside the container."""
    import json
    with open(path) as f:
        return json.load(f)
