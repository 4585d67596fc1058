"""Debian 12 machines booted with systemd in systemd-nspawn (TESTBED.md): the
root trees (debootstrap, cached in /var/cache/tracer-it), a booted machine driven
with nsenter, and the shipper configured as an operator would. Shared by
test_systemd.py (one machine) and test/fleet (three)."""
import os
import shutil
import subprocess
import time

from harness import Failure

CACHE = "/var/cache/tracer-it/bookworm"
PACKAGES = ("systemd,systemd-sysv,dbus,libcap2-bin,procps,sqlite3,libbpf1,libelf1,libnng1,libprotobuf-c1,"
            "libsqlite3-0,libjansson4,libcurl4,libinih1,libseccomp2,zlib1g")
# nspawn's own start-up: BPF for the collector, the kernel's BTF for CO-RE.
BPF_ARGS = ("--capability=CAP_BPF,CAP_PERFMON", "--system-call-filter=bpf perf_event_open",
            "--bind-ro=/sys/kernel/btf")


def base_rootfs():
    """A pristine Debian 12 root with systemd and tracer's runtime libraries."""
    if os.path.exists(os.path.join(CACHE, "usr/lib/systemd/systemd")):
        return CACHE
    if not shutil.which("debootstrap") or not shutil.which("systemd-nspawn"):
        raise Failure("debootstrap and systemd-container are needed (deploy/install-deps.sh tests)")
    tmp = CACHE + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    p = subprocess.run(["debootstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm", tmp],
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise Failure(f"debootstrap failed: {p.stdout[-1500:]}")
    os.rename(tmp, CACHE)
    return CACHE


def derived_rootfs(name, packages):
    """base_rootfs() with more Debian packages (apt in an nspawn of the tree, which has
    the host's network), cached beside it as bookworm-NAME."""
    path = f"{CACHE}-{name}"
    if os.path.exists(os.path.join(path, ".tracer-complete")):
        return path
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(["cp", "-a", base_rootfs(), tmp], check=True)
    p = subprocess.run(["systemd-nspawn", "-q", "-D", tmp, "--register=no", "--keep-unit", "--pipe", "sh", "-c",
                        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                        "--no-install-recommends " + " ".join(packages)],
                       capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise Failure(f"apt-get install {' '.join(packages)} in {tmp}: {p.stdout[-1000:]} {p.stderr[-1000:]}")
    open(os.path.join(tmp, ".tracer-complete"), "w").close()
    shutil.rmtree(path, ignore_errors=True)
    os.rename(tmp, path)
    return path


def configure_shipper(root, ch):
    """As an operator would: a config file naming the sink and a 0600 credentials file."""
    with open(os.path.join(root, "etc/tracer/shipper.conf"), "w") as f:
        f.write(f"[shipper]\nsink = clickhouse://127.0.0.1:{ch.http_port}/tracer\nbatch-age-ms = 500\n")
    cred = os.path.join(root, "etc/tracer/sink.credentials")
    with open(cred, "w") as f:
        f.write(f"user = {ch.user}\npassword = {ch.password}\n")
    os.chmod(cred, 0o600)


class Container:
    """A machine booted from ROOT. NAME (nspawn's -M) and CGROUP: with CGROUP
    (e.g. machine.slice/machine-h1.scope) nspawn starts in that cgroup of the
    unified and name=systemd hierarchies, so that machines booted side by side
    do not share nspawn's payload cgroup (it would be /payload for all)."""

    def __init__(self, ctx, root, name=None, cgroup=None, extra=(), cgroupns=False):
        self.ctx, self.root, self.proc = ctx, root, None
        self.name, self.cgroup, self.extra, self.cgroupns = name, cgroup, tuple(extra), cgroupns

    def boot(self):
        # The host's network: the shipper inside reaches ClickHouse on 127.0.0.1.
        cmd = ["systemd-nspawn", "-b", "-D", self.root, "--register=no", "--keep-unit", "--console=pipe",
               *BPF_ARGS, *self.extra] + (["-M", self.name] if self.name else [])
        if self.cgroup:
            moves = ""
            for top in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"):
                os.makedirs(f"{top}/{self.cgroup}", exist_ok=True)
                moves += f"echo $$ > {top}/{self.cgroup}/cgroup.procs && "
            cmd = ["sh", "-c", moves + 'exec "$@"', "sh", *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        self.ctx.procs.append(self.proc)
        end = time.time() + 60
        self.leader = None
        while time.time() < end and not self.leader:
            time.sleep(0.5)
            # nspawn's first child is a helper that forks the container's init and exits:
            # the leader is the child that runs systemd (a slow host shows the helper first).
            for child in open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read().split():
                try:
                    comm = open(f"/proc/{child}/comm").read().strip()
                except OSError:
                    continue
                if comm == "systemd":
                    self.leader = int(child)
        if not self.leader:
            raise Failure("the container's systemd did not start")
        # Until systemd has made its bus, systemctl fails at once rather than waiting.
        end = time.time() + 120
        while True:
            p = self.run("systemctl", "is-system-running", "--wait", timeout=120)
            if p.stdout.strip() or "Failed to connect to bus" not in p.stderr or time.time() > end:
                break
            time.sleep(0.5)
        return p.stdout.strip() or f"none: {p.stderr.strip()[-300:]}"

    def enter(self):
        """nsenter's argv into the machine: its mount, UTS, IPC and PID namespaces (and its
        cgroup namespace if asked, so that cgroup paths read inside are the machine's)."""
        return ["nsenter", "-t", str(self.leader), "-m", "-u", "-i", "-p", *(["-C"] if self.cgroupns else []), "--"]

    def run(self, *cmd, timeout=120, check=False):
        p = subprocess.run([*self.enter(), *cmd], capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure(f"in the container: {' '.join(cmd)}: {p.returncode} {p.stderr[-500:]}")
        return p

    def pid_of(self, unit):
        return int(self.run("systemctl", "show", "-p", "MainPID", "--value", unit).stdout.strip() or 0)

    def poweroff(self):
        if self.proc and self.proc.poll() is None:
            self.run("systemctl", "poweroff")
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # nspawn leaves empty cgroup directories behind.
        for top in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"):
            for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                if "machine.slice" in dirpath or "nspawn" in dirpath:
                    try:
                        os.rmdir(dirpath)
                    except OSError:
                        pass
