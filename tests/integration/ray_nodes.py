"""A private two-node Ray cluster on this machine, and a teardown that stops only its processes.

`ray stop` stops every Ray process of the machine (other users' clusters, a long training run), so
it is never used here. Each `ray start` (and each driver) runs in a new session (`setsid`): the
GCS, raylets, agents and every worker a raylet spawns stay in that session even after `ray start`
exits and they are re-parented, and even though Ray workers move to process groups of their own.
A session id is never handed to another process while a member lives, so "every process whose
session is one we created" is exactly our cluster. (An environment-variable tag is set as well, to
find clusters of a pytest run that was SIGKILLed; it cannot be the main mechanism because Ray's
agents overwrite their environment block with their process title.)

Each cluster also gets its own `--temp-dir`: `ray start` records the cluster address in
`<temp-dir>/ray_current_cluster`, and with the default `/tmp/ray` every plain `ray.init()` on the
machine (another user's local run) would join the test cluster instead of starting its own.

Run as a script (`python ray_nodes.py watchdog PARENT_PID SESSION_FILE`) it waits until the pytest
process dies and then stops the sessions listed in the file: the fixture's teardown cannot run
when pytest itself is SIGKILLed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

TAG_VAR = "SCHEDRL_TEST_RAY_CLUSTER"
"""Environment variable naming the test cluster a process belongs to: `<pytest pid>-<random hex>`."""

RAY = str(Path(sys.executable).with_name("ray"))
OBJECT_STORE_BYTES = 100 * 1024 * 1024  # sample batches of a tiny kernel network; Ray's minimum is 75 MiB


@dataclass(frozen=True)
class Process:
    pid: int
    session: int
    cmdline: str


def live_processes() -> list[Process]:
    """Every live process of the machine readable to us (zombies left out: nothing to stop)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile
            continue
        # the command name in parentheses may contain spaces: fields resume after the last ')'
        state, _ppid, _pgrp, session = stat.rpartition(")")[2].split()[:4]
        if state not in ("Z", "X"):
            found.append(Process(int(entry.name), int(session), cmdline))
    return found


def environment_tag(pid: int) -> str | None:
    """`TAG_VAR` in a process's environment, or None (absent, unreadable or overwritten)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    prefix = TAG_VAR.encode() + b"="
    return next((item[len(prefix):].decode(errors="replace") for item in environ if item.startswith(prefix)), None)


def kill_sessions(sessions: set[int], grace_s: float = 3.0, timeout_s: float = 30.0) -> list[Process]:
    """SIGTERM every process of `sessions`, SIGKILL what is left after `grace_s`, until none remain.

    Scans again after each round: a raylet may spawn a worker between a scan and its kill.
    Returns the processes still alive after `timeout_s` (empty on success).
    """
    deadline = time.monotonic() + timeout_s
    first_seen: dict[int, float] = {}
    while True:
        procs = [p for p in live_processes() if p.session in sessions and p.pid != os.getpid()]
        if not procs or time.monotonic() > deadline:
            return procs
        now = time.monotonic()
        for p in procs:
            first_seen.setdefault(p.pid, now)
            try:
                os.kill(p.pid, signal.SIGTERM if now - first_seen[p.pid] < grace_s else signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def stale_sessions() -> set[int]:
    """Sessions of test clusters whose pytest process is gone (a run SIGKILLed before its teardown)."""
    stale = set()
    for p in live_processes():
        tag = environment_tag(p.pid)
        parent = (tag or "").partition("-")[0]
        if parent.isdigit() and not Path(f"/proc/{parent}").exists():
            stale.add(p.session)
    return stale


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class LocalCluster:
    """A head node (1 CPU, resource `head_node`) and a worker node (2 CPUs, resource `worker_node`)."""

    def __init__(self, head_cpus: int = 1, worker_cpus: int = 2) -> None:
        self.tag = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        # short on purpose: Ray's unix socket paths under it must stay below 108 bytes
        self.temp_dir = Path(tempfile.mkdtemp(prefix="srlray-", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.head_cpus, self.worker_cpus = head_cpus, worker_cpus
        self.log = self.temp_dir / "start.log"
        self.session_file = self.temp_dir / "sessions"
        self.roles: dict[int, str] = {}  # session id -> head, worker or driver
        self.nodes: list[dict] = []
        self.watchdog: subprocess.Popen | None = None

    def env(self, driver: bool = True) -> dict[str, str]:
        """Environment for a process of this cluster: auth off, tagged, and `RAY_ADDRESS` for drivers."""
        env = dict(os.environ)
        env.pop("RAY_ADDRESS", None)
        env.update({"RAY_AUTH_MODE": "disabled", "RAY_BACKEND_LOG_LEVEL": "fatal", "RAY_USAGE_STATS_ENABLED": "0",
                    TAG_VAR: self.tag})
        if driver:
            env["RAY_ADDRESS"] = self.address
        return env

    def _own(self, session: int, role: str) -> None:
        self.roles[session] = role
        self.session_file.write_text(" ".join(map(str, self.roles)))

    def popen(self, args: list[str], extra_env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
        """Start a driver (e.g. `schedrl train`) on this cluster in a session that teardown stops."""
        proc = subprocess.Popen(args, env={**self.env(), **(extra_env or {})}, start_new_session=True, **kwargs)
        self._own(proc.pid, "driver")
        return proc

    def run_driver(self, args: list[str], log: Path, timeout_s: float, poll=None,
                   extra_env: dict[str, str] | None = None) -> subprocess.Popen:
        """`popen(args)` with output appended to `log`, waited for; `poll(proc)` is called every 0.25 s
        meanwhile. A driver still running after `timeout_s` is killed and `TimeoutError` raised."""
        with open(log, "a") as sink:
            proc = self.popen(args, extra_env=extra_env, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise TimeoutError(f"{' '.join(args[:5])} did not finish in {timeout_s} s:\n{log.read_text()[-4000:]}")
            if poll is not None:
                poll(proc)
            time.sleep(0.25)
        return proc

    def _node_ports(self) -> list[str]:
        # every per-node port explicit: two nodes (and other users' Ray) share this machine
        return ["--node-manager-port", str(free_port()), "--object-manager-port", str(free_port()),
                "--dashboard-agent-listen-port", str(free_port()), "--dashboard-agent-grpc-port", str(free_port()),
                "--runtime-env-agent-port", str(free_port()), "--metrics-export-port", str(free_port())]

    def _ray_start(self, role: str, args: list[str]) -> None:
        with open(self.log, "a") as log:
            proc = subprocess.Popen([RAY, "start", *args, *self._node_ports(), "--disable-usage-stats",
                                     "--object-store-memory", str(OBJECT_STORE_BYTES)],
                                    env=self.env(driver=False), stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self._own(proc.pid, role)  # before waiting: a hung start is still cleaned up
        if proc.wait(timeout=120) != 0:
            raise RuntimeError(f"ray start ({role}) failed with {proc.returncode}:\n{self.log.read_text()[-3000:]}")

    def start(self) -> None:
        stale = stale_sessions()
        if stale:
            kill_sessions(stale)
        self.session_file.write_text("")
        self.watchdog = subprocess.Popen([sys.executable, __file__, "watchdog", str(os.getpid()), str(self.session_file)],
                                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._ray_start("head", ["--head", "--port", str(self.port), "--num-cpus", str(self.head_cpus),
                                 "--resources", json.dumps({"head_node": 1}), "--include-dashboard=false",
                                 "--dashboard-port", str(free_port()), "--ray-client-server-port", str(free_port()),
                                 "--temp-dir", str(self.temp_dir)])
        self._ray_start("worker", ["--address", self.address, "--num-cpus", str(self.worker_cpus),
                                   "--resources", json.dumps({"worker_node": 1})])
        self.nodes = self.wait_for_nodes(2)

    def wait_for_nodes(self, count: int, timeout_s: float = 60.0) -> list[dict]:
        """Alive nodes as `{"node_id", "resources"}` once `count` have joined (asked by a short-lived driver)."""
        script = (
            "import json, time, ray\n"
            "ray.init(log_to_driver=False)\n"
            f"deadline = time.monotonic() + {timeout_s}\n"
            "while True:\n"
            "    nodes = [n for n in ray.nodes() if n['Alive']]\n"
            f"    if len(nodes) >= {count} or time.monotonic() > deadline: break\n"
            "    time.sleep(0.5)\n"
            "print(json.dumps([{'node_id': n['NodeID'], 'resources': n['Resources']} for n in nodes]))\n"
        )
        proc = self.popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = proc.communicate(timeout=timeout_s + 60)
        if proc.returncode != 0:
            raise RuntimeError(f"cannot reach the test cluster at {self.address}:\n{stderr[-3000:]}")
        nodes = json.loads(stdout.strip().splitlines()[-1])
        if len(nodes) < count:
            raise RuntimeError(f"only {len(nodes)} of {count} nodes joined the test cluster: {nodes}")
        return nodes

    def processes(self, role: str | None = None) -> list[Process]:
        """Live processes of this cluster (of one role: head, worker or driver)."""
        return [p for p in live_processes() if self.roles.get(p.session) in ((role,) if role else ("head", "worker", "driver"))]

    def role_of(self, pid: int) -> str | None:
        """head, worker or driver: which of our sessions (so which node) process `pid` belongs to."""
        return next((self.roles.get(p.session) for p in live_processes() if p.pid == pid), None)

    def actor_processes(self, class_name: str) -> list[Process]:
        """Our processes titled `ray::<class_name>` (idle) or `ray::<class_name>.<method>` (running a task)."""
        return [p for p in self.processes() if p.cmdline.split(" ")[0].split(".")[0] == f"ray::{class_name}"]

    def stop(self) -> list[Process]:
        """Stop every process of this cluster, drivers included; returns survivors (empty on success)."""
        survivors = kill_sessions(set(self.roles))
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
        if not survivors:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        return survivors


def _watchdog(parent: int, session_file: Path) -> None:
    while Path(f"/proc/{parent}").exists():
        time.sleep(1.0)
    sessions = {int(s) for s in session_file.read_text().split()} if session_file.exists() else set()
    kill_sessions(sessions)
    shutil.rmtree(session_file.parent, ignore_errors=True)


if __name__ == "__main__" and sys.argv[1:2] == ["watchdog"]:
    _watchdog(int(sys.argv[2]), Path(sys.argv[3]))
