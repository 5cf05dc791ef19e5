"""`Adapter`: a policy ordering one Slurm partition's queue, one cycle at a time.

Each cycle reads squeue and sinfo (`snapshot.Snapshot`), puts the guard's starving jobs first (`guard`), asks the
policy for its top K (`order.OrderWorker`), and, live, adds the bonuses to the site factors (or, `--handle nice`,
the nice values) that make Slurm's own scheduler, its backfilling left on, start jobs in that order
(`mechanism.NiceBands`), marking each job it changes (`marks`), and writes why it placed each job it moved
(`explain`: the decision path of a tree, the site's overrides) into the audit log. Modes:

- `live`: holds the cluster's lock on Slurm's side (`lock.SlurmLock`, a held lock job, besides the state
  directory's flock), writes its lease before every batch of changes (`lease.Lease`), records every change
  (`audit.AuditLog`), changes at most `max_changes_per_minute`, keeps every bonus within the site's bounds
  (`mechanism.protect`: below `max_bonus`, never across a QOS tier), and, with its watchdog (`watch.Watchdog`),
  returns to shadow on its own when the policy loses;
- `shadow`: changes nothing; the cycle log records each snapshot, the order and what Slurm started;
- `dry-run`: changes nothing and prints the changes a live cycle would make.

A failed Slurm command or an unreadable snapshot costs one cycle (one line, nothing changed); a policy that fails
or takes longer than its budget leaves the order as it was (one line); the guard still applies.

Expiry: leftovers are harmless by design, and a lease bounds them. The bonuses only raise at most K pending jobs
above the rest, in an order that was the policy's; they never lower a job. If the adapter dies (SIGKILL), those
jobs start first, as last ordered, and leave the queue, and Slurm's own order is all that remains: no job waits
behind more than K jobs it would not have waited behind without the adapter. Nothing can starve, because nothing
is ever pushed down. Once the lease expires, `schedrl slurm reset --expired` (cron or a systemd timer) gives every
job still pending its own site factor back (`restore`); an adapter started again instead takes the jobs over from the
state file and goes on ordering (it restores those its order leaves out).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from schedrl.slurm import guard
from schedrl.slurm.audit import AuditLog
from schedrl.slurm.client import SlurmClient, SlurmError
from schedrl.slurm.cyclelog import CycleLog
from schedrl.slurm.explain import Explainer
from schedrl.slurm.lease import Lease, LeaseError
from schedrl.slurm import marks
from schedrl.slurm.lock import LOCK_NAME, ClusterLock, LockError, LockLost, SlurmLock, lease_alive
from schedrl.slurm.mechanism import FIELD, HANDLES, SIGN, Change, NiceBands, priority_spread, protect
from schedrl.slurm.model import config_subset
from schedrl.slurm.order import OrderWorker, PolicyError, check_machine, runnable
from schedrl.slurm.watch import Watchdog
from schedrl.slurm.snapshot import Snapshot, SnapshotError, parse_sinfo

MODES = ("live", "shadow", "dry-run")
GONE = ("already finished", "no longer pending", "Invalid job id")
"""scontrol's refusals for a job that started or ended since the snapshot: nothing to do, nothing to report."""
ALONE_LINES = 20
"""Left-alone jobs named per cycle; past that, one line counts the rest (the cycle log has them all)."""
SLOW_S = 2.0
"""A cycle whose Slurm commands took longer than this says so (slurmctld slow, or down and retried by the client)."""


def default_state_dir() -> Path:
    return Path.home() / ".local" / "state" / "schedrl" / "slurm"


STATE_FILES = ("*.lock", "*.state.json", "*.audit.jsonl", "*.shadow-report.json", "*.tmp[0-9]*")
"""What a state directory holds: per cluster its lock, state (lease) file and audit log, per cluster and partition
the shadow report kept for the go-live gate, and a save interrupted between its temporary file and the rename."""


def is_state_dir(path: Path) -> bool:
    """Whether `path` is a directory holding nothing but what the adapter keeps there (an empty one included)."""
    from fnmatch import fnmatch

    try:
        return path.is_dir() and all(any(fnmatch(p.name, pattern) for pattern in STATE_FILES) for p in path.iterdir())
    except OSError:
        return False


def claim_outputs(command: str, state_dir: Path, log: Path | None = None, policy: str | None = None) -> None:
    """The state directory (and `run`'s cycle `log`) are continued, never replaced: refuse (`schedrl.outputs`'
    OutputError), before Slurm is asked anything, a state directory holding other files, a log that is not a cycle
    log, a path of the wrong kind, and a log that is one of the state directory's files or `policy`'s file."""
    from fnmatch import fnmatch

    from schedrl.outputs import In, Out, OutputError, claim
    from schedrl.slurm.cyclelog import is_cycle_log

    state = Out("--state-dir", Path(state_dir), "dir", mark=False, continues=is_state_dir,
                continues_what="an adapter's state directory (only *.lock, *.state.json, *.audit.jsonl and "
                               "*.shadow-report.json files)")
    claim(command, [state])
    if log is None:
        return
    log_path, state_path = Path(log).expanduser().absolute(), Path(state_dir).expanduser().absolute()
    if log_path.parent == state_path and any(fnmatch(log_path.name, pattern) for pattern in STATE_FILES):
        raise OutputError(f"--log {log} is one of the adapter's own state files in --state-dir "
                          f"{state_dir}: choose another path for the cycle log")
    kind, _, rest = str(policy or "").partition(":")
    inputs = [In("--policy", Path(rest))] if rest and kind in ("checkpoint", "tuned") else []
    claim(command, [Out("--log", Path(log), continues=is_cycle_log, continues_what="a schedrl cycle log")], inputs)


@dataclass(frozen=True)
class AdapterOptions:
    """How the adapter orders one partition."""

    partition: str
    """The partition whose pending jobs it orders (never another's)."""
    top: int = 32
    """K: the jobs the policy ranks each cycle; the rest keep Slurm's order behind them."""
    interval_s: float = 30.0
    """Seconds between the starts of two cycles."""
    mode: str = "live"
    """`live`, `shadow` or `dry-run`."""
    starvation_limit_s: float = guard.DEFAULT_LIMIT_S
    """A job that has waited longer goes first, whatever the policy says."""
    policy_timeout_s: float = 10.0
    """The policy's time budget per cycle; over it, the order stays as it was."""
    max_changes_per_minute: int = 600
    """Nice changes per minute at most (a token bucket); the rest wait for the next cycle."""
    lease_s: float = 600.0
    """How long an order stays maintained without a cycle renewing it."""
    size_tolerance: float = 2.0
    """Refuse a policy trained for a machine more than this many times smaller or larger."""
    trained_cpus: int | None = None
    """The policy's training machine in CPUs, where its run record's trace cannot be loaded here."""
    band_step: int | None = None
    """Bands this far apart instead of ceil(bonus_scale (the priority weights' sum + 2))."""
    handle: str = "site-factor"
    """The job field the bonuses go to: `site-factor` (SiteFactor=) or `nice` (Nice=, the fallback)."""
    bonus_scale: float = 1.0
    """How much the policy may outweigh Slurm's other factors: bands ceil(scale (W + 2)) apart; >= 1 is strict."""
    max_bonus: int | None = None
    """The largest bonus, in priority units (None: `mechanism.default_max_bonus`, from the site's weights): a job
    passes another only where their priorities without the bonus differ by less, never across a QOS tier, never
    past a fair-share factor this much higher (`mechanism.protect`)."""
    watch_margin_pct: float | None = None
    """Live: roll back to shadow once the policy is worse than the model of Slurm's own order by more than this (%
    of the site's metric, the lower end of the report's 95% interval; `watch.Watchdog`); None: no watchdog."""
    watch_jobs: int = 1000
    """The watchdog judges the last this many jobs seen to arrive (not before that many have)."""
    watch_metric: str = "bsld"
    """The site's metric the watchdog judges on (as `schedrl slurm report --metric`)."""
    slurmctld_log: Path | None = None
    """slurmctld's log, for the watchdog's replays on its times."""
    state_dir: Path = field(default_factory=default_state_dir)
    """The lock, the lease and the audit log."""
    log: Path | None = None
    """The cycle log (JSON lines) for `schedrl slurm report`."""
    cluster: str | None = None
    """The cluster's name (the lock's and state files' name); default: slurm.conf's ClusterName."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {self.mode!r}")
        if self.top < 1:
            raise ValueError(f"--top must be >= 1, got {self.top}")
        if self.interval_s <= 0 or self.policy_timeout_s <= 0 or self.lease_s <= 0:
            raise ValueError("--interval, --policy-timeout and --lease must be positive")
        if self.handle not in HANDLES:
            raise ValueError(f"--handle must be one of {', '.join(HANDLES)}; got {self.handle!r}")
        if not (self.bonus_scale > 0 and self.bonus_scale < float("inf")):
            raise ValueError(f"--bonus-scale must be a positive number; got {self.bonus_scale}")
        if self.max_changes_per_minute < 1:
            raise ValueError(f"--max-changes-per-minute must be >= 1; got {self.max_changes_per_minute}")
        if not self.size_tolerance >= 1.0 or self.size_tolerance == float("inf"):
            raise ValueError(f"--size-tolerance must be a finite number >= 1; got {self.size_tolerance}")
        if self.band_step is not None and self.band_step < 1:
            raise ValueError(f"--band-step must be >= 1; got {self.band_step}")
        if self.max_bonus is not None and self.max_bonus < 1:
            raise ValueError(f"--max-bonus must be >= 1; got {self.max_bonus}")
        if self.watch_margin_pct is not None:
            from schedrl.slurm.watch import check_options

            check_options(self.watch_margin_pct, self.watch_jobs, self.watch_metric, self.mode, self.log)


class RateLimit:
    """A token bucket: `per_minute` changes a minute, in bursts of at most that many."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute, self.clock = per_minute, clock
        self.tokens, self.last = float(per_minute), clock()

    def take(self, wanted: int) -> int:
        now = self.clock()
        self.tokens = min(float(self.per_minute), self.tokens + (now - self.last) * self.per_minute / 60.0)
        self.last = now
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted


def apply(client: SlurmClient, lease: Lease, audit: AuditLog, changes: list[Change], mode: str = "live",
          lock: int | None = None, comments: dict[int, str] | None = None) -> dict[int, str]:
    """Write the lease (write-ahead), set the values in one scontrol batch (with each job's mark in its
    AdminComment where `lock` is given: `comments` are the jobs' AdminComments now), audit them; returns the refused
    (job -> scontrol's reason), leaving out jobs that started or ended since the snapshot."""
    field = FIELD[lease.handle]
    for c in changes:
        lease.original.setdefault(c.job, c.old if c.own is None else c.own)
        lease.set[c.job] = c.new
    lease.save()
    lines = []
    for c in changes:
        comment = None
        if comments is not None and c.job in comments and marks.writable(comments[c.job]):
            own = lease.original.get(c.job, c.old)
            mark = None if c.why in ("restore", "reset") or lock is None else marks.Mark(lock, field, own)
            new = marks.with_mark(comments[c.job], mark)
            comment = new if new != comments[c.job] else None
        lines.append((c.job, c.new, comment))
    refused = client.update(field, lines)
    audit.record(changes, refused, mode)
    for c in changes:
        if c.job in refused and not gone(refused[c.job]):
            lease.set[c.job] = c.old
        elif c.why in ("restore", "reset") or c.job in refused:
            lease.forget([c.job])
    lease.save()
    return {job: why for job, why in refused.items() if not gone(why)}


def gone(why: str) -> bool:
    """Whether scontrol refused a change because the job is no longer pending (it started or ended meanwhile)."""
    return any(text in why for text in GONE)


def current_values(client: SlurmClient, handle: str, jobs=None) -> dict[int, int]:
    """The pending jobs' present values of the handle's field: site factors from sprio, nice values from squeue."""
    if handle == "site-factor":
        return client.site_factors()
    jobs = _squeue_jobs(client) if jobs is None else jobs
    return {j.job_id: j.nice for j in jobs if j.state == "PENDING"}


def restore(client: SlurmClient, lease: Lease, audit: AuditLog, say: Callable[[str], None]) -> int:
    """Give every pending job the adapter changed its own value back (`schedrl slurm reset`, a clean stop, an
    expired lease) and take its mark off; forget the jobs no longer pending. Returns the number of jobs restored."""
    jobs = {j.job_id: j for j in _squeue_jobs(client)}
    values = current_values(client, lease.handle, list(jobs.values()))
    pending = {job for job, j in jobs.items() if j.state == "PENDING" and job in values}
    comments = client.admin_comments() if lease.original else {}
    changes = [Change(job, values[job], own, "reset", own) for job, own in sorted(lease.original.items())
               if job in pending and (values[job] != own or marks.parse(comments.get(job, ""))[1] is not None)]
    gone = [job for job in lease.original if job not in pending]
    lease.forget(gone)
    refused = apply(client, lease, audit, changes, "reset", None, comments) if changes else {}
    for job in [job for job in lease.original if job not in refused]:
        lease.forget([job])
    lease.expires = 0.0
    lease.save()
    if refused:
        say(f"reset: scontrol refused {len(refused)} job(s): {_refusals(refused)}")
    return len(changes) - len(refused)


def _squeue_jobs(client: SlurmClient):
    from schedrl.slurm.snapshot import parse_squeue

    return parse_squeue(client.squeue())


def _jobs(jobs: list[int]) -> str:
    return ", ".join(map(str, jobs[:8])) + (f", ... ({len(jobs)} in all)" if len(jobs) > 8 else "")


def _refusals(refused: dict[int, str]) -> str:
    by_why: dict[str, list[int]] = {}
    for job, why in refused.items():
        by_why.setdefault(why, []).append(job)
    return "; ".join(f"{why} (job{'s' if len(jobs) > 1 else ''} {', '.join(map(str, jobs[:5]))}"
                     f"{', ...' if len(jobs) > 5 else ''})" for why, jobs in by_why.items())


class Adapter:
    """One partition's adapter: `start()`, then `cycle()` every interval (`run`), then `stop()`."""

    def __init__(self, policy, options: AdapterOptions, client: SlurmClient | None = None,
                 say: Callable[[str], None] = print, policy_name: str | None = None, explain_with=None):
        self.policy, self.options = policy, options
        self.client = client or SlurmClient()
        self.say = say
        self.policy_name = policy_name or getattr(policy, "name", type(policy).__name__)
        self.worker = OrderWorker(policy, options.top, options.policy_timeout_s, explain_with)
        self.explainer = Explainer(self.policy_name)
        """Why each moved job was placed (`explain`), written to the audit log (live) or said (dry run)."""
        self.limit = RateLimit(options.max_changes_per_minute)
        self.n = 0
        self.previous: list[int] = []
        self.lock: ClusterLock | None = None
        self.lease: Lease | None = None
        self.audit: AuditLog | None = None
        self.bands: NiceBands | None = None
        self.log: CycleLog | None = None
        self.cluster = options.cluster or ""
        self.checked = False
        self.slurm_lock: SlurmLock | None = None
        self.lost = False
        """The Slurm lock was lost (`LockLost`): stop without touching the order or the lock jobs."""
        self.lock_jobs: set[int] = set()
        """Lock jobs seen (held, never run): left out of the snapshot."""
        self.mode = options.mode
        """The mode in force: the options' until the watchdog rolls a live policy back to shadow."""
        self.gate_line: str | None = None
        """The go-live gate's line, said once the adapter has started (never before a refusal)."""
        self.spread = 0
        """W, the sum of the site's priority weights."""
        self.watchdog: Watchdog | None = None
        self.rolled_back: str | None = None
        """Why the watchdog rolled the policy back (None: it did not)."""

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Read the configuration and the partition, check the policy (its machine size, that it can rank this
        partition's queue at all) and the mechanism, take the lock (live), adopt an earlier adapter's lease;
        SlurmError, SnapshotError, PolicyMachineError, PolicyError, MechanismError, LockError, LeaseError or
        CycleLogError say why it cannot, before anything is taken or changed."""
        o = self.options
        if not callable(getattr(self.policy, "pick", None)):  # before Slurm is asked anything
            runnable(self.policy, self.policy_name, 2)
        config = self.client.config()
        self.cluster = o.cluster or config.get("ClusterName", "cluster")
        # the machine-size check first, before anything is taken, and the warm-up on the partition's size
        machine = parse_sinfo(self.client.sinfo(o.partition), o.partition)
        line = check_machine(self.policy, machine.usable, o.size_tolerance, o.trained_cpus)
        self.checked = True
        warm = runnable(self.policy, self.policy_name, machine.usable, machine.nodes)
        if o.mode != "shadow":
            self.bands = NiceBands.for_config(config, o.top, o.band_step, o.bonus_scale, o.handle, o.max_bonus)
            self.spread = priority_spread(config, o.handle)
        self.lease = Lease.load(o.state_dir, self.cluster)
        if self.lease.original and self.lease.handle != o.handle and o.mode == "live":
            raise LeaseError(f"{self.lease.path}: the state file holds {FIELD[self.lease.handle]} values of "
                             f"{len(self.lease.original)} job(s) set by an adapter with --handle {self.lease.handle}: "
                             "run `schedrl slurm reset` first")
        self.lease.handle = o.handle
        log_existed = o.log is not None and Path(o.log).exists()
        if o.log is not None:
            self.log = CycleLog(o.log)  # read (and refused if unreadable) before anything is taken
        try:
            if o.mode == "live":
                self._go_live()
        except BaseException:
            if self.log is not None:
                self.log.close()
                if not log_existed:
                    Path(o.log).unlink(missing_ok=True)
                self.log = None
            raise
        for said in (self.gate_line, line):
            if said:
                self.say(said)
        if warm > 1.0:
            self.say(f"policy {self.policy_name}: first decision in {warm:.1f} s (compiling, loading)")
        if self.log is not None:
            self.log.write({"kind": "header", "time": time.time(), "cluster": self.cluster,
                            "partition": o.partition, "policy": self.policy_name, "top": o.top, "mode": o.mode,
                            "interval": o.interval_s, "starvation_limit": o.starvation_limit_s,
                            "band_step": self.bands.step if self.bands else None,
                            "bonus_ceiling": self.bands.ceiling if self.bands else None,
                            "handle": o.handle if o.mode != "shadow" else None,
                            "slurm_config": config_subset(config)})
            self.log.flush()
        if o.mode == "live" and o.watch_margin_pct is not None and o.log is not None:
            self.watchdog = Watchdog(o.log, self.policy, o.watch_margin_pct, o.watch_jobs, o.watch_metric,
                                     o.slurmctld_log)
        self.say(f"schedrl slurm {o.mode}: cluster {self.cluster}, partition {o.partition}, policy "
                 f"{self.policy_name}, top {o.top}, every {o.interval_s:g} s"
                 + (f", {self.bands.field} bonuses {self.bands.step:,} apart, at most {self.bands.ceiling:,} "
                    f"(--max-bonus; the weights' sum is {self.spread:,}"
                    + ("" if self.bands.strict(self.spread) else ": the factors may overturn ranks") + ")"
                    if self.bands else "")
                 + (f", lock job {self.slurm_lock.job}" if self.slurm_lock else "")
                 + (f", watchdog over the last {o.watch_jobs} jobs (+{o.watch_margin_pct:g}% {o.watch_metric})"
                    if self.watchdog else ""))

    def _go_live(self) -> None:
        """The flock, the lock on Slurm's side, the audit log, and what an earlier adapter left."""
        o = self.options
        earlier = len(self.lease.original)
        self.lock = ClusterLock(o.state_dir, self.cluster).acquire(f"schedrl slurm run ({o.partition})")
        try:
            self._take_slurm_lock()
        except BaseException:
            self.lock.release()
            raise
        if earlier:
            self.say(f"continuing the order of an earlier adapter ({self.lease.holder()}): {earlier} job(s) with "
                     f"{FIELD[o.handle]} values it set, from its state file")
        self.audit = AuditLog(o.state_dir / f"{self.cluster}.audit.jsonl", self.cluster, o.partition)

    def _take_slurm_lock(self) -> None:
        """The cluster's lock on Slurm's side, then the marks: a live foreign mark refuses, the marks of dead
        adapters are taken over (their own values kept)."""
        o = self.options
        self.slurm_lock = SlurmLock(self.client, self.cluster, o.partition, o.lease_s, o.state_dir).acquire()
        mine = self.slurm_lock.job
        try:
            locks = self.client.lock_jobs(LOCK_NAME)
            self.lock_jobs = {j[0] for j in locks}
            live = {j[0] for j in locks if lease_alive(j[2], time.time())} - {mine}
            field = FIELD[o.handle]
            adopted = 0
            for job, comment in self.client.admin_comments().items():
                mark = marks.parse(comment)[1]
                if mark is None or mark.lock == mine:
                    continue
                if mark.lock in live:
                    raise LockError(f"cluster {self.cluster}: job {job} carries the mark of the live adapter of lock "
                                    f"job {mark.lock} ({marks.PREFIX}...): one adapter per cluster")
                if mark.field == field and job not in self.lease.original:
                    self.lease.original[job] = mark.own
                    adopted += 1
            if adopted:
                self.say(f"continuing the order of an earlier adapter: {adopted} pending job(s) carry the marks of "
                         f"lock jobs no longer live; their own {field} values are kept")
        except BaseException:
            self.slurm_lock.release()
            raise

    def stop(self, restore_order: bool = True) -> None:
        """End cleanly: live, give the jobs their own values back (unless `restore_order` is False) and
        release the lock."""
        self.worker.close()
        if self.log is not None:  # the starts and ends since the last cycle, for the report
            try:
                self.log.jobs(self.read())
            except (SlurmError, SnapshotError):
                pass
        try:
            if self.mode == "live" and self.lease is not None and restore_order and not self.lost:
                restored = restore(self.client, self.lease, self.audit, self.say) if self.lease.original else 0
                self.say(f"stopped: {restored} pending job(s) back to their own {FIELD[self.options.handle]} values")
        except SlurmError as e:
            self.say(f"stopped without restoring ({e}); `schedrl slurm reset` restores them")
        finally:
            if self.log is not None:
                self.log.close()
            self._release()

    def _release(self) -> None:
        """Both locks given back (the lock job left alone where another adapter took the cluster)."""
        if self.slurm_lock is not None and not self.lost:
            try:
                self.slurm_lock.release()
            except SlurmError:
                pass
        self.slurm_lock = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def roll_back(self, why: str) -> None:
        """The watchdog's rollback: every job its own value back, one line in the output, the cycle log and the audit
        log, the locks released; the adapter goes on in shadow (`EXIT_ROLLED_BACK` when it stops)."""
        line = f"rolled back to shadow: {why}"
        self.rolled_back = why
        try:
            restored = restore(self.client, self.lease, self.audit, self.say) if self.lease.original else 0
            line += f"; {restored} pending job(s) back to their own {FIELD[self.options.handle]} values"
        except SlurmError as e:
            line += f"; restoring failed ({e}): `schedrl slurm reset` restores them"
        self.say(f"cycle {self.n}: {line}")
        if self.audit is not None:
            self.audit.note("watchdog", line)
        self._log({"kind": "rollback", "time": time.time(), "n": self.n, "why": line})
        self.mode = "shadow"
        self.watchdog = None
        self._release()

    def run(self, cycles: int | None = None, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Cycle every `interval_s` until `cycles` have run or `should_stop()`; no wait after the last cycle."""
        next_at = time.monotonic()
        while (cycles is None or self.n < cycles) and not should_stop():
            self.cycle()
            if cycles is not None and self.n >= cycles:
                break
            next_at += self.options.interval_s
            while not should_stop() and time.monotonic() < next_at:
                time.sleep(min(0.2, max(next_at - time.monotonic(), 0.0)))
            next_at = max(next_at, time.monotonic())

    # --- one cycle ---------------------------------------------------------------------------------------------

    def read(self) -> Snapshot:
        now = time.time()
        return Snapshot.read(self.client.squeue(), self.client.sinfo(self.options.partition), self.options.partition,
                             now, ignore=frozenset(self.lock_jobs))

    def cycle(self) -> dict:
        """One cycle; returns its record (as logged). LockLost (live) when another adapter holds the cluster."""
        self.n += 1
        o = self.options
        record: dict = {"kind": "cycle", "n": self.n, "time": time.time()}
        t0 = time.monotonic()
        try:
            if self.slurm_lock is not None:
                try:
                    self.slurm_lock.check()
                except LockLost:
                    self.lost = True
                    raise
            snap = self.read()
        except (SlurmError, SnapshotError) as e:
            self.say(f"cycle {self.n}: {e} (after {time.monotonic() - t0:.1f} s); nothing changed this cycle")
            return self._log({**record, "problem": str(e)})
        slurm_s = time.monotonic() - t0
        if slurm_s > SLOW_S:
            self.say(f"cycle {self.n}: squeue and sinfo took {slurm_s:.1f} s (slurmctld slow, or unreachable and "
                     "retried by Slurm's client)")
        record["slurm_s"] = round(slurm_s, 3)
        try:  # priorities as sprio shows them: the site factors (the handle), and each new job's fixed part
            prio = self.client.sprio()
        except SlurmError as e:
            prio, record["sprio"] = None, str(e)
        if not self.checked:
            line = check_machine(self.policy, snap.machine.usable, o.size_tolerance, o.trained_cpus)
            self.checked = True
            if line:
                self.say(line)
        self._left_alone(snap, self._static(prio))
        record.update(time=snap.time, usable=snap.machine.usable, nodes=snap.machine.nodes, free=snap.machine.idle,
                      other=snap.other_cpus, pending=len(snap.pending), running=len(snap.running),
                      slurm=[j.job_id for j in snap.pending[:o.top]])
        first = guard.starving(snap, o.starvation_limit_s)
        ranked = self.worker.rank(snap, first)
        record["policy_s"] = round(ranked.seconds, 6)
        if ranked.order is None:
            pending = {j.job_id for j in snap.pending}
            order = first + [j for j in self.previous if j in pending and j not in first]
            self.say(f"cycle {self.n}: {ranked.problem}: the order is left as it was"
                     + (f" (the guard still puts {len(first)} job(s) first)" if first else ""))
            record["problem"] = ranked.problem
        else:
            order = ranked.order
        order = order[:o.top]
        self.previous = order
        record.update(order=order, guard=first)
        if self.mode != "shadow":
            decisions = ranked.decisions if ranked.order is not None else None  # no new decision to explain
            record.update(self._enforce(snap, order, frozenset(first), prio, record.get("sprio"), decisions))
        record = self._log(record)
        if self.watchdog is not None and self.log is not None and self.watchdog.due(len(self.log.seen)):
            self._watch()
        return record

    def _watch(self) -> None:
        """The watchdog's look (`watch.Watchdog`): logged; a rollback where the policy is worse beyond the margin."""
        from schedrl.slurm.report import ReportError

        try:
            verdict = self.watchdog.look(len(self.log.seen))
        except ReportError as e:
            self.say(f"cycle {self.n}: watchdog: {e}")
            return
        except Exception as e:  # a look that fails costs that look, never the adapter (the next one tries again)
            first = (str(e).splitlines() or [""])[0][:200]
            self.say(f"cycle {self.n}: watchdog: the look failed ({type(e).__name__}: {first}); the order stays")
            return
        if verdict is None:
            return
        o = self.options
        line = verdict.line(o.watch_metric, o.watch_margin_pct)
        self._log({"kind": "watch", "time": time.time(), "n": self.n, **Watchdog.record(verdict)})
        if verdict.worse:
            self.roll_back(line)

    def _static(self, prio) -> dict[int, float] | None:
        """Job -> its priority less the weighted age and less the adapter's own bonus (the part that stays)."""
        if prio is None:
            return None
        own = self.lease.original if self.lease is not None and self.options.handle == "site-factor" else {}
        return {job: float(f.priority - f.age - (f.site - own[job] if job in own else 0)) for job, f in prio.items()}

    def _left_alone(self, snap: Snapshot, static: dict[int, float] | None = None) -> None:
        if self.log is not None:
            new = self.log.jobs(snap, static)
        else:
            seen = getattr(self, "_alone_seen", set())
            new = [(j.job_id, why) for j, why in snap.left_alone if (j.job_id, why) not in seen]
            seen.update(new)
            self._alone_seen = seen
        for job, why in new[:ALONE_LINES]:
            self.say(f"job {job}: {why}: left alone")
        if len(new) > ALONE_LINES:
            self.say(f"... and {len(new) - ALONE_LINES} more job(s) left alone this cycle"
                     + (f" (all in {self.options.log})" if self.log is not None else ""))

    def _enforce(self, snap: Snapshot, order: list[int], guarded: frozenset[int], prio=None,
                 problem: str | None = None, decisions: list[dict] | None = None) -> dict:
        """The changes that put `order` first, within the site's bounds (`mechanism.protect`, the bands' ceiling):
        printed (dry run) or applied (live), and why (`_explain`)."""
        lease, field = self.lease, self.bands.field
        if prio is None:  # the bounds need every job's factors
            self.say(f"cycle {self.n}: {problem}; nothing changed this cycle")
            return {"changes": 0, "applied": 0, "problem": problem}
        if self.options.handle == "site-factor":
            values = {job: f.site for job, f in prio.items()}
        else:
            values = {j.job_id: j.nice for j in snap.pending}
        pending = {j.job_id for j in snap.pending}
        value_now = {job: v for job, v in values.items() if job in pending and job in prio}
        alive = pending | {j.job_id for j, _ in snap.left_alone}
        if self.mode == "live":
            lease.forget([job for job in list(lease.original) if job not in alive])
            for job in [job for job in lease.set if job in value_now and value_now[job] != lease.set[job]]:
                self.say(f"cycle {self.n}: job {job}'s {field} was changed outside the adapter "
                         f"({lease.set[job]} -> {value_now[job]}): adopted as its own, the bonus goes on top")
                lease.original[job] = value_now[job]
                lease.set[job] = value_now[job]
        own = {job: value for job, value in lease.original.items() if job in value_now}
        sign = SIGN[self.options.handle]
        # each job's priority without the adapter's bonus, and Slurm's own order by it (ties as Slurm breaks them)
        base = {job: prio[job].priority - (sign * (value_now[job] - own[job]) if job in own else 0)
                for job in value_now}
        submit = {j.job_id: j.submit for j in snap.pending}
        slurm_order = sorted(base, key=lambda job: (-base[job], submit.get(job, 0.0), job))
        wanted = [job for job in order if job in value_now]
        order = protect(wanted, slurm_order, {job: prio[job].qos for job in value_now},
                        {job: prio[job].fairshare for job in value_now}, self.bands.ceiling, self.options.top)
        # the jobs put ahead of their rank (or into the order) so that no ranked job passes them
        rank = {job: r for r, job in enumerate(wanted)}
        lifted = [job for r, job in enumerate(order) if rank.get(job, len(wanted)) > r]
        changes = self.bands.plan(order, value_now, own, guarded)
        extra = {"bonus_order": order, "lifted": lifted} if lifted else {}
        placed = (snap, slurm_order, wanted, order, base, value_now, own, changes, guarded)
        if self.mode == "dry-run":
            for c in changes:
                self.say(f"would set job {c.job}: {field} {c.old} -> {c.new} ({c.why})")
            self._explain(placed, decisions, len(changes), {})
            if lifted:
                self.say(f"cycle {self.n}: {len(lifted)} job(s) put ahead of ranked ones they must not be passed by "
                         f"(a higher QOS, or fair share {self.bands.ceiling:,} or more higher): {_jobs(lifted)}")
            self.say(f"cycle {self.n}: dry run: {len(changes)} change(s) not applied")
            return {"changes": len(changes), "applied": 0, **extra}
        granted = self.limit.take(len(changes))
        if granted < len(changes):
            self.say(f"cycle {self.n}: rate limit ({self.options.max_changes_per_minute}/min): "
                     f"{len(changes) - granted} change(s) wait for the next cycle")
        lease.renew(self.options.partition, self.options.lease_s)
        try:
            comments = self.client.admin_comments() if granted else {}
            refused = apply(self.client, lease, self.audit, changes[:granted], "live",
                            self.slurm_lock.job if self.slurm_lock else None, comments)
        except SlurmError as e:
            self.say(f"cycle {self.n}: {e}; the order may be partly applied (the lease names every job)")
            return {"changes": len(changes), "applied": 0, "problem": str(e), **extra}
        self._explain(placed, decisions, granted, refused)
        if refused:
            self.say(f"cycle {self.n}: scontrol refused {len(refused)} of {granted} change(s): {_refusals(refused)}")
        if getattr(self.client, "marks_refused", 0) and not getattr(self, "_marks_said", False):
            self._marks_said = True
            self.say(f"cycle {self.n}: slurmctld refused the marks in AdminComment (AdminLevel=Administrator, root or "
                     "the SlurmUser may write it; this account may set site factors only): the jobs are changed "
                     "unmarked, the lock job still holds the cluster, and `reset` needs this state directory")
        return {"changes": len(changes), "applied": granted - len(refused), "refused": len(refused),
                "applied_at": time.time(), **extra}

    def _explain(self, placed: tuple, decisions: list[dict] | None, granted: int, refused: dict[int, str]) -> None:
        """Why each job this cycle moved was placed (`explain`): written to the audit log (live) or said (dry run);
        nothing where the policy failed or was too slow (`decisions` None: the last order kept, decided before)."""
        from schedrl.slurm.explain import placement, say_entries, write

        if decisions is None:
            return
        where = placement(*placed, granted, refused, SIGN[self.options.handle], self.bands.ceiling,
                          self.options.starvation_limit_s)
        entries, left_out = self.explainer.entries(where, decisions)
        if self.mode == "dry-run":
            say_entries(self.say, self.n, self.policy_name, entries, left_out)
        elif self.audit is not None:
            write(self.audit, self.n, self.policy_name, entries, left_out)

    def _log(self, record: dict) -> dict:
        if self.log is not None:
            self.log.write(record)
            self.log.flush()
        return record


class AdapterError(ValueError):
    """Why the adapter could not start or had to stop (`serve`): one line."""


def serve(adapter: "Adapter", cycles: int | None = None) -> str | None:
    """Run `adapter` as a service: start it, cycle until `cycles` have run or SIGTERM/SIGINT asks it to stop, and stop
    cleanly (live: the jobs' own values back, unless another adapter took the lock). AdapterError says why it could
    not start (Slurm, the partition, the policy, the mechanism, the lock, the lease, the cycle log) or stopped early
    (the policy's machine, the lock lost). Returns why the watchdog rolled the policy back to shadow, if it did."""
    import signal

    from schedrl.slurm.cyclelog import CycleLogError
    from schedrl.slurm.mechanism import MechanismError
    from schedrl.slurm.order import PolicyMachineError

    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    try:
        adapter.start()
    except (SlurmError, MechanismError, LockError, LeaseError, PolicyMachineError, PolicyError, SnapshotError,
            CycleLogError) as e:
        adapter.worker.close()
        raise AdapterError(str(e)) from None
    try:
        adapter.run(cycles, should_stop=lambda: bool(stopping))
    except PolicyMachineError as e:
        adapter.stop()
        raise AdapterError(str(e)) from None
    except LockLost as e:
        adapter.stop(restore_order=False)
        raise AdapterError(str(e)) from None
    adapter.stop()
    return adapter.rolled_back


__all__ = ["Adapter", "AdapterError", "AdapterOptions", "LockLost", "MODES", "PolicyError", "RateLimit", "apply",
           "claim_outputs", "current_values",
           "default_state_dir", "is_state_dir", "restore", "serve"]
