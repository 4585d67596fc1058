"""A single-node Slurm cluster (slurm-wlm from Debian) living in a test
directory: munged, slurmctld and slurmd as plain processes, listening on
127.0.0.1 only, with cgroup process tracking and memory constraint so job
steps get their own cgroups (/slurm_<node>/uid_<uid>/job_<id>/step_<n>)."""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

from ports import free_port

SLURM_CONF = """ClusterName=tracertest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_sock}
CredType=cred/munge
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/slurmd%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=2048 State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""

CGROUP_CONF = """CgroupPlugin=autodetect
ConstrainRAMSpace=yes
ConstrainCores=no
"""



class SlurmCluster:
    def __init__(self, directory):
        self.dir = directory
        self.procs = []
        self.node = socket.gethostname()
        self.env = dict(os.environ, SLURM_CONF=os.path.join(directory, "slurm.conf"))

    def start(self, timeout=60):
        d = self.dir
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        # munged refuses directories that others can write (the test dir is 0777).
        self.munge_dir = tempfile.mkdtemp(prefix="tracer-munge-")
        m = self.munge_dir
        os.makedirs(os.path.join(m, "key"))
        munge = pwd.getpwnam("munge")
        key = os.path.join(m, "key/munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        for path, mode in ((m, 0o755), (os.path.join(m, "key"), 0o700), (key, 0o400)):
            os.chown(path, munge.pw_uid, munge.pw_gid)
            os.chmod(path, mode)
        self.munge_sock = os.path.join(m, "munge.socket")
        self.procs.append(subprocess.Popen(
            ["runuser", "-u", "munge", "--", "munged", "--foreground", "--key-file", key,
             "--socket", self.munge_sock, "--pid-file", os.path.join(m, "munged.pid"),
             "--log-file", os.path.join(m, "munged.log"), "--seed-file", os.path.join(m, "munged.seed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(lambda: os.path.exists(self.munge_sock), timeout, "munged")
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(SLURM_CONF.format(node=self.node, ctld_port=free_port(), slurmd_port=free_port(),
                                      munge_sock=self.munge_sock, dir=d, cpus=os.cpu_count()))
        with open(os.path.join(d, "cgroup.conf"), "w") as f:
            f.write(CGROUP_CONF)
        for daemon in ("slurmctld", "slurmd"):
            self.procs.append(subprocess.Popen([daemon, "-D", "-f", self.env["SLURM_CONF"]], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(self._node_idle, timeout, "slurm node to become idle")

    def _node_idle(self):
        p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
        return p.returncode == 0 and p.stdout.strip() == "idle"

    def _wait(self, cond, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            if cond():
                return
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{what}: {p.args[0]} exited {p.returncode}; logs in {self.dir}")
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}; logs in {self.dir}")

    def sbatch_wait(self, script, *opts):
        """Submits SCRIPT, waits for the job to end; returns (job id, exit code)."""
        p = subprocess.run(["sbatch", "--parsable", "--wait", "-o", os.path.join(self.dir, "job-%j.out"),
                            *opts, script], env=self.env, capture_output=True, text=True, timeout=300)
        job = p.stdout.strip().split(";")[0]
        return job, p.returncode, p.stderr

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if getattr(self, "munge_dir", None):
            shutil.rmtree(self.munge_dir, ignore_errors=True)
        # slurmd leaves its cgroup hierarchy behind; remove what is empty.
        for root in ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/cpuset",
                     "/sys/fs/cgroup/devices", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
            top = os.path.join(root, f"slurm_{self.node}")
            if os.path.isdir(top):
                for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                    try:
                        os.rmdir(dirpath)
                    except OSError:
                        pass

    @staticmethod
    def available():
        return all(shutil.which(t) for t in ("slurmctld", "slurmd", "sbatch", "munged"))
