"""A private Slurm on localhost for tests: munged, slurmctld and slurmd (plus MariaDB and slurmdbd for
accounting), each on its own ports, files and munge key, stopped process by process.

Another Slurm may run on the machine, so nothing here uses a default path or port: the cluster has
its own `slurm.conf` (clients find it through `SLURM_CONF`, see `env()`), its own munge socket and
key (`AuthInfo=socket=...`), its own state, spool and log directories under one temporary root, and
ports chosen free at start. Every process it starts carries `TAG_VAR` in its environment, and so do
the job steps slurmd forks (they inherit the daemon's and the submitter's environment): `stop()`
cancels the jobs, terminates the daemons it started, then kills anything still tagged.

    cluster = SlurmCluster(cpus=8)
    cluster.start()
    job_id = cluster.sbatch("--wrap", "sleep 1")
    cluster.run("squeue", "--json")
    cluster.stop()

or, in a test marked `slurm`, the session's cluster: `from slurm_cluster import slurm_cluster` in
the test module makes the fixture `slurm_cluster` available there.

The daemons run as the current user (`SlurmUser`, `SlurmdUser`); jobs of other users need root.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

TAG_VAR = "SCHEDRL_TEST_SLURM"
"""Environment variable naming the test cluster a process belongs to: `<pytest pid>-<random hex>`."""

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
ACCOUNTING = ("mariadbd", "mariadb-install-db", "mariadb", "slurmdbd", "sacctmgr", "sacct")
# slurm-wlm installs the daemons in /usr/sbin, which a non-root PATH often lacks
_SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"])


def missing_binaries(accounting: bool = False) -> list[str]:
    """The Slurm, munge (and MariaDB) programs this harness needs that are not installed."""
    names = DAEMONS + CLIENTS + (ACCOUNTING if accounting else ())
    return [n for n in names if shutil.which(n, path=_SEARCH_PATH) is None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tags() -> dict[int, str]:
    """pid -> `TAG_VAR` of every live process that has one (zombies left out: nothing to stop)."""
    found = {}
    prefix = f"{TAG_VAR}=".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X"):
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        tag = next((item[len(prefix):].decode(errors="replace") for item in environ if item.startswith(prefix)), None)
        if tag is not None:
            found[int(entry.name)] = tag
    return found


def tagged_processes(tag: str) -> list[int]:
    """Live processes of the test cluster `tag`."""
    return [pid for pid, t in _tags().items() if t == tag]


def kill_stale_clusters() -> list[int]:
    """SIGKILL the processes of test clusters whose creator is gone (a pytest run killed before its teardown)."""
    stale = [pid for pid, tag in _tags().items()
             if tag.partition("-")[0].isdigit() and not Path(f"/proc/{tag.partition('-')[0]}").exists()]
    for pid in stale:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return stale


class SlurmCluster:
    """`nodes` nodes `n1`, `n2`, ... of `cpus` CPUs each (whatever the machine has), one slurmd each on
    its own port, all in partition `debug`, or in `partitions` (`{name: "MaxTime=..."}`, the first
    the default; all nodes unless the options name `Nodes=`). `accounting` adds MariaDB and slurmdbd (for sacct);
    `job_acct_gather` samples the
    jobs' CPU time (sacct's TotalCPU). `scheduler_parameters` is slurm.conf's SchedulerParameters; `extra_conf`
    adds lines (`PriorityType=priority/multifactor` ...) to slurm.conf."""

    def __init__(self, cpus: int = 8, *, nodes: int = 1, accounting: bool = False,
                 partitions: dict[str, str] | None = None, job_acct_gather: bool = False,
                 cluster_name: str = "schedrltest", scheduler_parameters: str = "bf_interval=1",
                 extra_conf: str = "") -> None:
        self.tag = f"{os.getpid()}-{secrets.token_hex(6)}"
        # short on purpose: the munge and MariaDB unix sockets under it must stay below 108 bytes
        self.root = Path(tempfile.mkdtemp(prefix="srlslurm-", dir="/tmp"))
        self.cpus, self.accounting, self.cluster_name = cpus, accounting, cluster_name
        self.scheduler_parameters, self.extra_conf = scheduler_parameters, extra_conf
        # one slurmd per node, told apart by port (heterogeneous jobs need a node per component)
        self.nodes = {f"n{k + 1}": free_port() for k in range(nodes)}
        self.partitions = partitions or {"debug": "MaxTime=INFINITE"}
        self.job_acct_gather = job_acct_gather
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.ports = {name: free_port() for name in ("slurmctld", "slurmdbd", "mariadb")}
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.logs = self.root / "log"
        self.daemons: dict[str, subprocess.Popen] = {}

    # --- environment and commands ----------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for a Slurm client of this cluster: its `SLURM_CONF`, the tag, no inherited `SLURM_*`."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update({"SLURM_CONF": str(self.conf), TAG_VAR: self.tag, "PATH": _SEARCH_PATH})
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 30.0, user: str | None = None,
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run a Slurm client (`sbatch`, `squeue`, ...) against this cluster; as `user` via runuser when given."""
        argv = list(args) if user is None else ["runuser", "-u", user, "--", "env", f"SLURM_CONF={self.conf}",
                                                f"{TAG_VAR}={self.tag}", *args]
        result = subprocess.run(argv, env={**self.env(), **(extra_env or {})}, capture_output=True, text=True,
                                timeout=timeout, cwd=self.root / "jobs")
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}\n{self.log_tail()}")
        return result

    def sbatch(self, *args: str, user: str | None = None) -> str:
        """Submit a batch job as `user` (default: ours); returns its job id (`12`)."""
        return self.run("sbatch", "--parsable", *args, user=user).stdout.strip().split(";")[0]

    def wait_for(self, predicate, timeout_s: float, what: str, interval_s: float = 0.2):
        """Poll `predicate()` until it returns something truthy (returned); TimeoutError naming `what`."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"test Slurm: {what} not within {timeout_s:g} s\n{self.log_tail()}")
            time.sleep(interval_s)

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of each daemon log (for error messages)."""
        out = []
        for log in sorted(self.logs.glob("*.log")) if self.logs.is_dir() else []:
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    # --- configuration ---------------------------------------------------------------------------

    def _write_files(self) -> None:
        for d in ("munge", "log", "state", "spool", "jobs", "db"):
            (self.root / d).mkdir(mode=0o700, exist_ok=True)
        for node in self.nodes:
            (self.root / "spool" / node).mkdir(mode=0o755, exist_ok=True)
        # other users' clients reach munged's socket, their jobs run scripts from the spool and write output in jobs/
        (self.root / "munge").chmod(0o755)
        (self.root / "spool").chmod(0o755)
        (self.root / "jobs").chmod(0o1777)
        self.root.chmod(0o755)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        (self.root / "plugstack.conf").write_text("")  # not the site's /etc/slurm/plugstack.conf
        acct = (f"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\n"
                f"AccountingStoragePort={self.ports['slurmdbd']}\n"
                # without it, connections to slurmdbd authenticate through the default munge socket
                f"AccountingStoragePass={self.munge_socket}\n" if self.accounting
                else "AccountingStorageType=accounting_storage/none\n")
        gather = "jobacct_gather/linux\nJobAcctGatherFrequency=1" if self.job_acct_gather else "jobacct_gather/none"
        nodes = "".join(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs={self.cpus} "
                        "State=UNKNOWN\n" for name, port in self.nodes.items())
        extra = "".join(f"{line.strip()}\n" for line in self.extra_conf.splitlines() if line.strip())
        partitions = "".join(f"PartitionName={name} {'' if 'Nodes=' in opts else 'Nodes=ALL '}"
                             f"Default={'YES' if i == 0 else 'NO'} State=UP {opts}\n"
                             for i, (name, opts) in enumerate(self.partitions.items()))
        self.conf.write_text(
            f"ClusterName={self.cluster_name}\n"
            "SlurmctldHost=localhost\n"
            f"SlurmUser={self.user}\nSlurmdUser={self.user}\n"
            f"SlurmctldPort={self.ports['slurmctld']}\n"
            f"AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={self.munge_socket}\n"
            f"StateSaveLocation={self.root / 'state'}\nSlurmdSpoolDir={self.root / 'spool'}/%n\n"
            f"SlurmctldPidFile={self.root / 'slurmctld.pid'}\nSlurmdPidFile={self.root / 'slurmd-%n.pid'}\n"
            f"SlurmctldLogFile={self.logs / 'slurmctld.log'}\nSlurmdLogFile={self.logs / 'slurmd-%n.log'}\n"
            f"PlugStackConfig={self.root / 'plugstack.conf'}\n"
            "SlurmctldDebug=info\nSlurmdDebug=info\n"
            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nSlurmdParameters=config_overrides\n"
            "MpiDefault=none\nReturnToService=2\nJobCompType=jobcomp/none\n"
            f"JobAcctGatherType={gather}\n{acct}"
            # fast turnaround: backfill every second, one second between SIGTERM and SIGKILL at a time limit
            f"SchedulerType=sched/backfill\nSchedulerParameters={self.scheduler_parameters}\nKillWait=1\n"
            "InactiveLimit=0\nMessageTimeout=10\nMinJobAge=300\n"
            f"{extra}{nodes}{partitions}"
        )
        if self.accounting:
            dbd = self.root / "slurmdbd.conf"
            dbd.write_text(
                f"AuthType=auth/munge\nAuthInfo=socket={self.munge_socket}\n"
                f"DbdHost=localhost\nDbdPort={self.ports['slurmdbd']}\nSlurmUser={self.user}\n"
                f"PidFile={self.root / 'slurmdbd.pid'}\nLogFile={self.logs / 'slurmdbd.log'}\nDebugLevel=info\n"
                "StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\n"
                f"StoragePort={self.ports['mariadb']}\nStorageUser=slurm\nStoragePass=schedrltest\n"
                "StorageLoc=schedrl_acct_db\n"
            )
            dbd.chmod(0o600)  # slurmdbd refuses a readable config (it holds the database password)

    # --- lifecycle -------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.out", "a")
        proc = subprocess.Popen(argv, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=self.root)
        log.close()
        self.daemons[name] = proc
        return proc

    def _alive(self, name: str) -> bool:
        proc = self.daemons[name]
        if proc.poll() is not None:
            out = (self.logs / f"{name}.out").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"test Slurm: {name} exited with {proc.returncode}\n{out}\n{self.log_tail()}")
        return True

    def _start_mariadb(self) -> None:
        db, sock = self.root / "db", self.root / "mariadb.sock"
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={db}", f"--user={self.user}",
                        "--skip-test-db", "--auth-root-authentication-method=socket"],
                       env=self.env(), check=True, capture_output=True, timeout=120)
        self._spawn("mariadb", ["mariadbd", "--no-defaults", f"--datadir={db}", f"--socket={sock}",
                                f"--port={self.ports['mariadb']}", "--bind-address=127.0.0.1",
                                f"--user={self.user}", f"--pid-file={self.root / 'mariadb.pid'}",
                                f"--log-error={self.logs / 'mariadb.log'}", "--skip-name-resolve"])
        sql = ("CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'schedrltest';"
               "GRANT ALL ON schedrl_acct_db.* TO 'slurm'@'127.0.0.1';")
        self.wait_for(lambda: self._alive("mariadb") and subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={sock}", "-u", self.user, "-e", sql],
            env=self.env(), capture_output=True).returncode == 0, 60, "MariaDB accepting connections")

    def start(self, timeout_s: float = 60.0) -> None:
        """Write the configuration, start the daemons and wait until the node is idle."""
        kill_stale_clusters()
        self._write_files()
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={self.root / 'munge' / 'munge.key'}",
                               f"--pid-file={self.root / 'munge' / 'munged.pid'}",
                               f"--log-file={self.logs / 'munged.log'}",
                               f"--seed-file={self.root / 'munge' / 'munged.seed'}"])
        self.wait_for(lambda: self._alive("munged") and self.munge_socket.exists(), timeout_s, "munged's socket")
        if self.accounting:
            self._start_mariadb()
            self._spawn("slurmdbd", ["slurmdbd", "-D"])
            self.wait_for(lambda: self._alive("slurmdbd") and self.run(
                "sacctmgr", "-i", "add", "cluster", self.cluster_name, check=False).returncode == 0,
                timeout_s, "slurmdbd accepting sacctmgr")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self.wait_for(lambda: self._alive("slurmctld") and self.run("scontrol", "ping", check=False).returncode == 0,
                      timeout_s, "slurmctld answering `scontrol ping`")
        for node in self.nodes:
            self._spawn(f"slurmd-{node}", ["slurmd", "-D", "-N", node, "-f", str(self.conf)])

        def idle() -> bool:
            # one line per node and partition
            lines = self.run("sinfo", "--noheader", "--Node", "--format=%N %T", check=False).stdout.splitlines()
            states = dict(line.split() for line in lines if len(line.split()) == 2)
            return all(self._alive(f"slurmd-{node}") for node in self.nodes) and states == dict.fromkeys(self.nodes, "idle")

        self.wait_for(idle, timeout_s, f"{len(self.nodes)} node{'s' if len(self.nodes) > 1 else ''} idle")

    def stop(self, timeout_s: float = 30.0) -> list[int]:
        """Cancel every job, stop the daemons, kill what is left of ours; returns survivors (empty on success)."""
        if "slurmctld" in self.daemons and self.daemons["slurmctld"].poll() is None:
            jobs = self.run("squeue", "--noheader", "--format=%i", check=False).stdout.split()
            if jobs:
                self.run("scancel", "--full", *jobs, check=False)
        deadline = time.monotonic() + timeout_s
        # slurmd before slurmctld before slurmdbd before the database and munge, each given its own grace time
        for name in (*(f"slurmd-{node}" for node in self.nodes), "slurmctld", "slurmdbd", "mariadb", "munged"):
            proc = self.daemons.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=max(1.0, min(10.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        while True:
            survivors = tagged_processes(self.tag)
            if not survivors or time.monotonic() > deadline:
                break
            for pid in survivors:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        if not survivors:
            shutil.rmtree(self.root, ignore_errors=True)
        return survivors


@contextlib.contextmanager
def private_slurm(**options):
    """A started `SlurmCluster(**options)`, stopped (and checked stopped) at the end.

    Skipped where Slurm or munge is not installed, except on CI (`CI=true`), where that is a failure:
    .ci/run installs them.
    """
    missing = missing_binaries(options.get("accounting", False))
    if missing:
        reason = (f"Slurm is not installed (no {', '.join(missing)}): "
                  "apt-get install slurm-wlm munge to run the tests marked `slurm`")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    cluster = SlurmCluster(**options)
    try:
        cluster.start()
        yield cluster
    finally:
        survivors = cluster.stop()
        assert not survivors, f"test Slurm processes left running: {survivors}"


@pytest.fixture(scope="session")
def slurm_cluster():
    """A private Slurm (one node of 4 CPUs, partition `debug`) for the pytest session, stopped at its end."""
    with private_slurm(cpus=4) as cluster:
        yield cluster
