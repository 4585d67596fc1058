"""A fleet of Debian 12 machines on this one host (make fleet-test): systemd-nspawn
machines booted with systemd (test/integration/nspawn.py), each with its own hostname
and machine id, tracer installed from our .deb with its units enabled, shipping to one
ClickHouse on 127.0.0.1, and a Slurm cluster across them: slurmctld on h1, slurmd on
h2 and h3, munge with one key everywhere, slurmdbd and its MariaDB on the host.

What this host allows, and so how the machines are made:
- Network: the machines share the host's network namespace (no --private-network: a
  veth needs a bridge or routes the test would have to add on the host). Every daemon
  listens on 127.0.0.1 on a port of its own; slurmd on h2 and h3 differ by Port=.
- cgroups (hybrid v1 + v2): nspawn puts each machine's payload under the cgroup it was
  started in; the test starts it in /machine.slice/machine-NAME.scope (unified and
  name=systemd), so the machine is /machine.slice/machine-NAME.scope/payload on the
  host and "/" inside its cgroup namespace. nspawn mounts the v1 controllers read-only;
  Slurm 22.05's cgroup/v2 refuses a host whose /proc/self/cgroup lists v1 hierarchies
  ("Hybrid mode is not supported"), so slurmd uses cgroup/v1 and the test remounts the
  memory, freezer, cpuset and devices hierarchies read-write inside h2 and h3 before it
  starts slurmd. Those hierarchies are not split per machine, so Slurm's node-named
  directories (/slurm_h2, /slurm_h3) keep the jobs apart.
- Scope: each collector runs in its machine's PID namespace, and the kernel side records
  only the tasks of the namespace the collector runs in (docs/operations.md, "Scope";
  scope-pidns points it elsewhere), so each host records only its own machine. The
  aggregator's cgroup scope cannot name the machine from inside ("/" in the machine's
  cgroup namespace); from the host it can, and the test checks that too.
- The tree: debootstrap's base plus slurm-wlm, munge and snakemake from Debian, cached
  in /var/cache/tracer-it/bookworm-fleet (about 2 GB, 90 s the first time); each
  machine is an overlay on it, so booting three costs no copy.
"""
import os
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from harness import Failure  # noqa: E402
from nspawn import Container, configure_shipper, derived_rootfs  # noqa: E402
from ports import free_port  # noqa: E402
from slurm_cluster import SlurmCluster  # noqa: E402

FLEET_PACKAGES = ("slurm-wlm", "munge", "snakemake", "python3")
HOSTS = ("h1", "h2", "h3")

SLURM_CONF = """ClusterName=tracerfleet
SlurmctldHost=h1(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
{auth_info}
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
FirstJobId={first_job}
NodeName=h2 NodeAddr=127.0.0.1 Port={h2_port} CPUs=1 RealMemory=1000 State=UNKNOWN
NodeName=h3 NodeAddr=127.0.0.1 Port={h3_port} CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=fleet Nodes=h2,h3 Default=YES MaxTime=INFINITE State=UP
"""

CGROUP_CONF = """CgroupPlugin=cgroup/v1
ConstrainRAMSpace=yes
ConstrainCores=no
"""

# What a workload inside a machine starts from: none of the test's own environment.
CLEAN_ENV = ["env", "-i", "PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"]


def tree_uid(root, user):
    for line in open(os.path.join(root, "etc/passwd")):
        f = line.split(":")
        if f[0] == user:
            return int(f[2]), int(f[3])
    raise Failure(f"no user {user} in {root}")


class Machine(Container):
    def __init__(self, ctx, fleet, name):
        self.host, self.tag = name, f"tfleet-{name}-{fleet.tag}"
        self.machine_id = uuid.uuid4().hex
        self.upper = ctx.path(f"{name}-upper")
        root = ctx.path(f"{name}-root")
        super().__init__(ctx, root, name=self.tag, cgroup=f"machine.slice/machine-{self.tag}.scope",
                         extra=[f"--bind={fleet.shared}:/fleet"], cgroupns=True)

    def mount(self, lower):
        """The machine's root: an overlay on the cached tree (its writes in UPPER)."""
        work = self.upper + ".work"
        for d in (self.upper, work, self.root):
            os.makedirs(d, exist_ok=True)
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir={lower},upperdir={self.upper},workdir={work}", self.root], check=True)

    def unmount(self):
        subprocess.run(["umount", self.root], capture_output=True)

    def write(self, path, text, mode=0o644, owner=None):
        full = os.path.join(self.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        os.chmod(full, mode)
        if owner:
            os.chown(full, *owner)

    def sh(self, script, timeout=300, check=True):
        """SCRIPT with bash in the machine, in a scope of the machine's own systemd (so
        its processes are in the machine's cgroups, as a login's would be)."""
        p = self.run(*CLEAN_ENV, "systemd-run", "--scope", "--quiet", "--", "bash", "-c", script, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure(f"{self.host}: {script[:200]}: exit {p.returncode}\n{p.stdout[-800:]}\n{p.stderr[-800:]}")
        return p


class Fleet:
    def __init__(self, ctx):
        self.ctx = ctx
        self.tag = uuid.uuid4().hex[:6]
        self.shared = ctx.path("shared")  # /fleet in every machine: the cluster's shared filesystem
        os.makedirs(self.shared)
        os.chmod(self.shared, 0o755)
        self.machines = {}
        self.munge_key = os.urandom(1024)
        self.ports = {k: free_port() for k in ("ctld", "h2", "h3", "dbd")}
        self.first_job = 1000 + int(self.tag, 16) % 50_000 * 100

    def slurm_conf(self, auth_info=""):
        return SLURM_CONF.format(ctld_port=self.ports["ctld"], dbd_port=self.ports["dbd"],
                                 h2_port=self.ports["h2"], h3_port=self.ports["h3"],
                                 first_job=self.first_job, auth_info=auth_info)

    def prepare(self, deb):
        lower = derived_rootfs("fleet", FLEET_PACKAGES)
        for name in HOSTS:
            m = Machine(self.ctx, self, name)
            m.mount(lower)
            self.ctx.cleanups.append(m.unmount)
            self.machines[name] = m
            m.write("/etc/hostname", name + "\n")
            m.write("/etc/machine-id", m.machine_id + "\n", 0o444)
            m.write("/etc/hosts", "127.0.0.1 localhost " + " ".join(HOSTS) + "\n")
            m.write("/etc/slurm/slurm.conf", self.slurm_conf())
            m.write("/etc/slurm/cgroup.conf", CGROUP_CONF)
            m.write("/etc/munge/munge.key", self.munge_key, 0o400, tree_uid(m.root, "munge"))
            for d in ("slurmctld", "slurmd"):
                os.makedirs(os.path.join(m.root, "var/lib/slurm", d), exist_ok=True)
            # Started by the test once the cgroups are writable (slurmd) or the database is up.
            subprocess.run(["systemctl", f"--root={m.root}", "disable", "slurmd", "slurmctld"],
                           capture_output=True, check=True)
            subprocess.run(["cp", deb, os.path.join(m.root, "var/tmp/tracer.deb")], check=True)

    def boot(self, ch):
        for m in self.machines.values():
            self.ctx.cleanups.append(self.poweroff_one(m))
            state = m.boot()
            if state not in ("running", "degraded"):
                raise Failure(f"{m.host}: systemd says {state}")
            inst = m.run("dpkg", "-i", "/var/tmp/tracer.deb", timeout=300)
            if inst.returncode != 0:
                raise Failure(f"{m.host}: dpkg -i tracer.deb: {inst.stdout[-800:]} {inst.stderr[-800:]}")
            configure_shipper(m.root, ch)
            m.run("systemctl", "start", "tracer-shipper", check=True)

    def poweroff_one(self, m):
        def off():
            m.poweroff()
            # slurmd leaves its (v1) cgroup directories behind, under this test's own cgroup.
            for line in open("/proc/self/cgroup"):
                _, ctrl, path = line.rstrip("\n").split(":", 2)
                if ctrl not in ("memory", "freezer", "cpuset", "devices"):
                    continue
                top = f"/sys/fs/cgroup/{ctrl}{path.rstrip('/')}/slurm_{m.host}"
                for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                    try:
                        os.rmdir(dirpath)
                    except OSError:
                        pass
        return off

    def start_slurm(self, timeout=90):
        """slurmdbd and MariaDB on the host (its munged has the fleet's key), slurmctld on
        h1, slurmd on h2 and h3; returns the host-side SlurmCluster whose env runs sacct."""
        host = SlurmCluster(self.ctx.path("slurm-host"), accounting=True)
        os.makedirs(host.dir)
        self.ctx.cleanups.append(host.stop)
        host.start_munge(key=self.munge_key)
        with open(os.path.join(host.dir, "slurm.conf"), "w") as f:
            f.write(self.slurm_conf(auth_info=f"AuthInfo=socket={host.munge_sock}\n"
                                    f"AccountingStoragePass={host.munge_sock}"))
        host.start_accounting(self.ports["dbd"])
        h1 = self.machines["h1"]
        h1.run("sacctmgr", "-i", "add", "cluster", "tracerfleet", check=True)
        h1.run("systemctl", "start", "slurmctld", check=True)
        for name in ("h2", "h3"):
            m = self.machines[name]
            for ctrl in ("memory", "freezer", "cpuset", "devices"):
                m.run("mount", "-o", "remount,bind,rw", f"/sys/fs/cgroup/{ctrl}", check=True)
            m.run("systemctl", "start", "slurmd", check=True)
        end = time.time() + timeout
        while True:
            p = h1.run("sinfo", "-h", "-N", "-o", "%N %T")
            nodes = dict(line.split() for line in p.stdout.splitlines() if len(line.split()) == 2)
            if nodes == {"h2": "idle", "h3": "idle"}:
                return host
            if time.time() > end:
                logs = h1.run("journalctl", "-b", "--no-pager", "-n", "30", "-u", "slurmctld").stdout
                raise Failure(f"the Slurm nodes did not come up idle: {nodes} {p.stderr[-300:]}\n{logs[-2000:]}")
            time.sleep(1)

    def fleet_config(self, ch):
        """[fleet] for the fleet verbs on h1, its credentials in a 0600 file."""
        h1 = self.machines["h1"]
        h1.write("/root/fleet.cred", f"user = {ch.user}\npassword = {ch.password}\n", 0o600)
        h1.write("/root/fleet.conf", f"[fleet]\nurl = clickhouse://127.0.0.1:{ch.http_port}/tracer\n"
                 "credentials = /root/fleet.cred\n", 0o600)
        return "/root/fleet.conf"

    def host_of(self, machine_id):
        return next((m.host for m in self.machines.values() if m.machine_id == machine_id), machine_id)

