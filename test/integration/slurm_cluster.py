"""A single-node Slurm cluster (slurm-wlm from Debian) living in a test
directory: munged, slurmctld and slurmd as plain processes, listening on
127.0.0.1 only, with cgroup process tracking and memory constraint so job
steps get their own cgroups (/slurm_<node>/uid_<uid>/job_<id>/step_<n>).
With accounting, also a MariaDB server (its socket only, no network) and
slurmdbd, so sacct reports each step's TotalCPU and MaxRSS."""
import os
import pwd
import random
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
{accounting}
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
FirstJobId={first_job}
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=2048 State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""

NO_ACCOUNTING = """JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none"""

ACCOUNTING = """JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoragePass={munge_sock}"""

SLURMDBD_CONF = """AuthType=auth/munge
AuthInfo=socket={munge_sock}
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile={dir}/slurmdbd.pid
LogFile={dir}/slurmdbd.log
"""

CGROUP_CONF = """CgroupPlugin=autodetect
ConstrainRAMSpace=yes
ConstrainCores=no
"""



class SlurmCluster:
    def __init__(self, directory, accounting=False):
        self.dir = directory
        self.accounting = accounting
        self.procs = []
        self.node = socket.gethostname()
        self.env = dict(os.environ, SLURM_CONF=os.path.join(directory, "slurm.conf"))
        # Clusters that other tests start on this host at the same time share the node name,
        # so their jobs' cgroup paths (/slurm_<node>/uid_0/job_<id>) would collide if their
        # ids did: each starts its ids somewhere else.
        self.first_job = random.randrange(1000, 60_000_000, 1000)

    def start(self, timeout=60):
        d = self.dir
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        self.start_munge(timeout=timeout)
        accounting = NO_ACCOUNTING
        if self.accounting:
            dbd_port = free_port()
            self.start_accounting(dbd_port, timeout)
            accounting = ACCOUNTING.format(dbd_port=dbd_port, munge_sock=self.munge_sock)
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(SLURM_CONF.format(node=self.node, ctld_port=free_port(), slurmd_port=free_port(),
                                      munge_sock=self.munge_sock, dir=d, cpus=os.cpu_count(),
                                      first_job=self.first_job,
                                      accounting=accounting))
        with open(os.path.join(d, "cgroup.conf"), "w") as f:
            f.write(CGROUP_CONF)
        if self.accounting:
            self.register_cluster()
        for daemon in ("slurmctld", "slurmd"):
            self.procs.append(subprocess.Popen([daemon, "-D", "-f", self.env["SLURM_CONF"]], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(self._node_idle, timeout, "slurm node to become idle")

    def start_munge(self, key=None, timeout=60):
        """munged with KEY (random if None) on a socket of its own (self.munge_sock)."""
        # munged refuses directories that others can write (the test dir is 0777).
        self.munge_dir = tempfile.mkdtemp(prefix="tracer-munge-")
        m = self.munge_dir
        os.makedirs(os.path.join(m, "key"))
        munge = pwd.getpwnam("munge")
        key_file = os.path.join(m, "key/munge.key")
        with open(key_file, "wb") as f:
            f.write(key or os.urandom(1024))
        for path, mode in ((m, 0o755), (os.path.join(m, "key"), 0o700), (key_file, 0o400)):
            os.chown(path, munge.pw_uid, munge.pw_gid)
            os.chmod(path, mode)
        self.munge_sock = os.path.join(m, "munge.socket")
        self.procs.append(subprocess.Popen(
            ["runuser", "-u", "munge", "--", "munged", "--foreground", "--key-file", key_file,
             "--socket", self.munge_sock, "--pid-file", os.path.join(m, "munged.pid"),
             "--log-file", os.path.join(m, "munged.log"), "--seed-file", os.path.join(m, "munged.seed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(lambda: os.path.exists(self.munge_sock), timeout, "munged")

    def start_accounting(self, dbd_port, timeout=60):
        """MariaDB on a socket in the test directory (clients find it by MYSQL_UNIX_PORT), then
        slurmdbd, then the cluster registered with sacctmgr."""
        d = self.dir
        data, sock = os.path.join(d, "mysql"), os.path.join(d, "mysql.sock")
        subprocess.run(["mariadb-install-db", "--user=root", f"--datadir={data}",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)
        self.env["MYSQL_UNIX_PORT"] = sock
        self.procs.append(subprocess.Popen(
            ["mariadbd", "--no-defaults", "--user=root", f"--datadir={data}", f"--socket={sock}",
             "--skip-networking", f"--pid-file={d}/mysql.pid", f"--log-error={d}/mysql.err",
             "--innodb-buffer-pool-size=32M"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(lambda: os.path.exists(sock), timeout, "mariadbd")
        conf = os.path.join(d, "slurmdbd.conf")
        with open(conf, "w") as f:
            f.write(SLURMDBD_CONF.format(munge_sock=self.munge_sock, dbd_port=dbd_port, dir=d))
        os.chmod(conf, 0o600)
        # slurmdbd reads slurmdbd.conf beside $SLURM_CONF.
        self.procs.append(subprocess.Popen(["slurmdbd", "-D"], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(lambda: self._port_open(dbd_port), timeout, "slurmdbd")

    @staticmethod
    def _port_open(port):
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def register_cluster(self):
        """sacctmgr needs slurm.conf (AccountingStorage*) to find slurmdbd."""
        subprocess.run(["sacctmgr", "-i", "add", "cluster", "tracertest"], env=self.env,
                       capture_output=True, text=True, timeout=60)

    def sacct(self, job):
        """Per step of JOB and for the job itself (key JOB): (TotalCPU in ns, MaxRSS in KiB,
        State, ExitCode as "code:signal"), as sacct reports them."""
        p = subprocess.run(["sacct", "-j", job, "-P", "-n", "--format=JobID,TotalCPU,MaxRSS,State,ExitCode"],
                           env=self.env, capture_output=True, text=True, timeout=60)
        out = {}
        for line in p.stdout.splitlines():
            step, total, rss, state, code = (line.split("|") + ["", "", "", ""])[:5]
            out[step] = (parse_slurm_time(total), parse_slurm_kb(rss), state, code)
        return out

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

    def srun_wait(self, name, shell_command):
        """Runs SHELL_COMMAND with bash as a job of its own (srun, no batch step); returns
        (job id, srun's exit code, stderr). The job writes its id where the test reads it."""
        id_file = os.path.join(self.dir, f"srun-{name}.jobid")
        p = subprocess.run(["srun", "-J", name, "bash", "-c", f"echo $SLURM_JOB_ID > {id_file}; {shell_command}"],
                           env=self.env, capture_output=True, text=True, timeout=300)
        try:
            with open(id_file) as f:
                job = f.read().strip()
        except OSError:
            job = ""
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
    def available(accounting=False):
        tools = ("slurmctld", "slurmd", "sbatch", "munged")
        if accounting:
            tools += ("slurmdbd", "sacct", "sacctmgr", "mariadbd", "mariadb-install-db")
        return all(shutil.which(t) for t in tools)


def parse_slurm_time(text):
    """sacct's [D-][HH:]MM:SS[.mmm] as ns; None if empty."""
    if not text:
        return None
    days, _, rest = text.rpartition("-")
    parts = [float(x) for x in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    h, m, sec = parts
    return int(round(((int(days or 0) * 24 + h) * 3600 + m * 60 + sec) * 1e9))


def parse_slurm_kb(text):
    """sacct's MaxRSS (1234K, 12M, 1.5G) as KiB; None if empty."""
    if not text:
        return None
    units = {"K": 1, "M": 1024, "G": 1024 * 1024}
    if text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text) // 1024
