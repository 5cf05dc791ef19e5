"""The adapter's cycle on a queue in memory (fake_slurm.FakeSlurm): the order reaches Slurm's queue, the guard,
a failing or slow policy, the rate limit, the dry run, the lock, the lease written ahead, the audit log, the way
back (restore, reset), and a restart continuing an earlier adapter's order."""

from __future__ import annotations

import json
import os
import time

import pytest

from fake_slurm import FakeSlurm
from schedrl.eval.policies import resolve_policy
from schedrl.slurm.adapter import Adapter, AdapterOptions, RateLimit, restore
from schedrl.slurm.audit import AuditLog
from schedrl.slurm.lease import Lease
from schedrl.slurm.lock import LockError, LockLost
from schedrl.slurm.order import PolicyMachineError


def queue(slurm: FakeSlurm, limits: list[int], start_id: int = 1) -> None:
    """A 256-CPU job running, and pending jobs of 16 CPUs each with these time limits (minutes), in submit order."""
    slurm.add(100, 256, 3600, slurm.now - 100, state="RUNNING", start=slurm.now - 50, reason="None")
    for k, minutes in enumerate(limits):
        slurm.add(start_id + k, 16, 60 * minutes, slurm.now - 60 + k)


def adapter(slurm, tmp_path, policy="sjf", lines=None, **options) -> Adapter:
    options = {"partition": "debug", "top": 4, "interval_s": 0.05, "state_dir": tmp_path / "state",
               "log": tmp_path / "cycles.jsonl", **options}
    out = lines if lines is not None else []
    a = Adapter(resolve_policy(policy) if isinstance(policy, str) else policy, AdapterOptions(**options), slurm,
                say=out.append, policy_name=policy if isinstance(policy, str) else "test")
    a.start()
    return a


def test_a_live_cycle_puts_the_policys_top_k_first_in_slurms_queue(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3, 8])
    a = adapter(slurm, tmp_path)
    record = a.cycle()
    assert record["order"] == [4, 5, 2, 3] and record["applied"] == 4
    assert slurm.order() == [4, 5, 2, 3, 1, 6]  # the top 4 by SJF, then Slurm's order (FCFS here)
    assert [job for job, _ in slurm.updates[0]] == [4, 5, 2, 3]
    assert a.cycle()["applied"] == 0  # nothing to change
    slurm.start_job(4)
    assert a.cycle()["applied"] == 1  # the head started: only job 6 (8 minutes) enters the order
    assert slurm.order() == [5, 2, 3, 6, 1]
    audit = [json.loads(line) for line in (tmp_path / "state" / "fake.audit.jsonl").read_text().splitlines()]
    assert [(r["job"], r["from"], r["why"], r["result"]) for r in audit[:4]] == [
        (4, 0, "rank 1", "ok"), (5, 0, "rank 2", "ok"), (2, 0, "rank 3", "ok"), (3, 0, "rank 4", "ok")]
    a.stop()
    assert all(d["nice"] == 0 for d in slurm.jobs.values() if d["state"] == "PENDING")  # a clean stop restores them
    assert Lease.load(tmp_path / "state", "fake").original == {}


def test_the_lease_names_every_job_before_scontrol_changes_it(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7])
    a = adapter(slurm, tmp_path, top=2)
    seen = []
    slurm.before_update = lambda changes: seen.append((changes, Lease.load(tmp_path / "state", "fake")))
    a.cycle()
    changes, lease = seen[0]
    assert {job for job, _ in changes} <= set(lease.set) and lease.original == {2: 0, 3: 0}
    assert lease.expires > time.time()
    a.stop()


def test_the_guard_puts_a_job_waiting_past_the_limit_first_whatever_the_policy_says(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1])
    slurm.jobs[1]["submit"] = slurm.now - 3 * 86400  # the longest job, three days waiting
    a = adapter(slurm, tmp_path)
    record = a.cycle()
    assert record["guard"] == [1] and record["order"][:2] == [1, 4]
    assert slurm.order()[0] == 1
    a.stop()


def test_a_failing_or_slow_policy_leaves_the_order_as_it_was(tmp_path):
    class Flaky:
        name = "flaky"
        mode = "ok"

        def __init__(self):
            self.sjf = resolve_policy("sjf")

        def pick(self, sim):
            if self.mode == "fail":
                raise RuntimeError("CUDA error: out of memory\nsecond line")
            if self.mode == "slow":  # one slow decision
                self.mode = "ok"
                time.sleep(1.0)
            return self.sjf.pick(sim)

    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    policy = Flaky()
    lines: list[str] = []
    a = adapter(slurm, tmp_path, policy, lines, policy_timeout_s=0.3)
    a.cycle()
    before = slurm.order()
    slurm.add(50, 16, 30, slurm.now)  # the shortest job arrives
    policy.mode = "fail"
    assert a.cycle()["problem"] == "the policy failed: RuntimeError: CUDA error: out of memory"
    assert lines[-1] == "cycle 2: the policy failed: RuntimeError: CUDA error: out of memory: the order is left as it was"
    assert slurm.order()[:4] == before[:4]
    policy.mode = "slow"
    assert a.cycle()["problem"] == "the policy took over 0.3 s"
    assert a.cycle()["problem"].startswith("the policy is still busy")
    assert slurm.order()[:4] == before[:4]
    time.sleep(1.2)
    assert a.cycle().get("problem") is None and slurm.order()[0] == 50
    a.stop()


def test_changes_are_rate_limited(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines, max_changes_per_minute=3)
    assert a.cycle()["applied"] == 3
    assert lines[-1] == "cycle 1: rate limit (3/min): 1 change(s) wait for the next cycle"
    assert [job for job, _ in slurm.updates[0]] == [4, 5, 2]  # the top of the order first
    a.stop(restore_order=False)
    bucket = RateLimit(60, clock=iter([0.0, 0.0, 0.5, 10.0]).__next__)
    assert [bucket.take(100), bucket.take(5), bucket.take(100)] == [60, 0, 10]


def test_a_dry_run_prints_the_changes_and_makes_none(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7])
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines, mode="dry-run", top=2)
    a.cycle()
    assert [line.split(":")[0] for line in lines if line.startswith("would")] == ["would set job 2", "would set job 3"]
    assert "cycle 1: dry run: 2 change(s) not applied" in lines
    assert slurm.updates == [] and not (tmp_path / "state" / "fake.audit.jsonl").exists()
    a.stop()


def test_one_live_adapter_per_cluster(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [1])
    first = adapter(slurm, tmp_path)
    with pytest.raises(LockError, match=r"cluster fake: schedrl slurm run \(debug\) \(pid \d+ on .*\) holds .*fake.lock: "
                                        "one adapter per cluster"):
        adapter(slurm, tmp_path)
    adapter(slurm, tmp_path, mode="shadow").stop()  # shadow changes nothing and takes no lock
    first.stop()
    adapter(slurm, tmp_path).stop()


def test_slurm_failures_and_refusals_are_one_line_and_the_cycles_go_on(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7])
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines, top=2)
    slurm.down = True
    assert "Unable to contact slurm controller" in a.cycle()["problem"]
    assert lines[-1] == ("cycle 1: squeue failed (exit 1): slurm_load_jobs error: Unable to contact slurm controller "
                         "(connect failure) (after 0.0 s); nothing changed this cycle")
    slurm.down = False
    slurm.refuse = {2: "Access/permission denied", 3: "Access/permission denied"}
    record = a.cycle()
    assert record["refused"] == 2 and record["applied"] == 0
    assert lines[-1] == "cycle 2: scontrol refused 2 of 2 change(s): Access/permission denied (jobs 2, 3)"
    assert Lease.load(tmp_path / "state", "fake").set == {2: 0, 3: 0}
    slurm.refuse = {}
    assert a.cycle()["applied"] == 2
    a.stop()


def test_jobs_the_policy_cannot_represent_are_named_once(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5])
    slurm.add(20, 300, 60, slurm.now)
    slurm.add(21, 1, 60, slurm.now, held=True, reason="JobHeldUser")
    slurm.add(22, 1, 60, slurm.now, partition="gpu")
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines)
    a.cycle()
    a.cycle()
    assert [line for line in lines if line.startswith("job ")] == [
        "job 20: requests 300 CPUs, more than the partition's 256 usable: left alone",
        "job 21: held (JobHeldUser): left alone", "job 22: in partition gpu, not debug: left alone"]
    assert slurm.jobs[21]["nice"] == slurm.jobs[22]["nice"] == slurm.jobs[20]["nice"] == 0
    a.stop()


def test_a_policy_for_another_machine_size_is_refused(tmp_path):
    slurm = FakeSlurm(cpus=100_000)
    queue(slurm, [1])
    with pytest.raises(PolicyMachineError, match="256 CPUs; this partition has 100,000 usable CPUs"):
        adapter(slurm, tmp_path, trained_cpus=256)  # at start, before any lock is taken or any warning printed
    assert not slurm.lock_jobs("schedrl-lock")
    lines: list[str] = []
    adapter(slurm, tmp_path, trained_cpus=100_000, lines=lines).stop()
    assert lines[0] == "sjf: trained for 100,000 CPUs, this partition has 100,000 (within 2x)"


def test_one_cycle_exits_at_once_and_a_slow_slurm_says_so(tmp_path, monkeypatch):
    slurm = FakeSlurm()
    queue(slurm, [9, 5])
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines, interval_s=30.0)
    t0 = time.monotonic()
    a.run(cycles=1)
    assert time.monotonic() - t0 < 5.0  # not the 30 s interval
    squeue = slurm.squeue
    monkeypatch.setattr(slurm, "squeue", lambda: (time.sleep(2.2), squeue())[1])  # slurmctld answering late
    a.cycle()
    assert any(line.startswith("cycle 2: squeue and sinfo took 2.") and "slurmctld slow" in line for line in lines)
    a.stop()


def test_after_a_kill_the_next_adapter_continues_and_reset_gives_the_site_factors_back(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    slurm.jobs[5]["site"] = 10  # the site's own
    slurm.jobs[5]["nice"] = 500  # the user's own
    a = adapter(slurm, tmp_path)
    a.cycle()
    a.lock.release()  # as the kernel does for a killed process: no stop(), no restore
    a.lost = True  # and its lock job stays, with its lease; its pid on this host no longer runs:
    lock = slurm.jobs[a.slurm_lock.job]
    lock["comment"] = lock["comment"].replace(f"pid={os.getpid()} ", "pid=999999999 ")  # beyond any pid_max
    lease = Lease.load(tmp_path / "state", "fake")
    assert set(lease.original) == {2, 3, 4, 5} and lease.original[5] == 10 and lease.handle == "site-factor"
    assert slurm.jobs[5]["nice"] == 500 and slurm.jobs[5]["site"] > 10  # users' nice left alone
    lines: list[str] = []
    b = adapter(slurm, tmp_path, lines=lines)
    assert any(line.startswith("continuing the order of an earlier adapter") and "4 job(s)" in line for line in lines)
    assert b.cycle()["applied"] == 0  # the order it finds is its own
    b.lock.release()
    restored = restore(slurm, Lease.load(tmp_path / "state", "fake"),
                       AuditLog(tmp_path / "state" / "fake.audit.jsonl", "fake", "debug"), print)
    assert restored == 4 and slurm.jobs[5]["site"] == 10 and all(slurm.jobs[j]["site"] == 0 for j in (1, 2, 3, 4))
    assert slurm.jobs[5]["nice"] == 500
    assert all(slurm.jobs[j]["admin"] == "" for j in (1, 2, 3, 4, 5))  # the marks are off again
    assert Lease.load(tmp_path / "state", "fake").original == {}


def test_the_bonus_goes_on_the_site_factor_found_and_an_admins_change_is_adopted(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    slurm.jobs[4]["admin"] = "site: project X"  # what the site keeps in AdminComment stays
    slurm.jobs[1]["nice"] = 500  # a user's own nice
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines)
    a.cycle()
    lock = a.slurm_lock.job
    assert slurm.fields == ["SiteFactor"] and slurm.order()[:4] == [4, 5, 2, 3]
    assert slurm.jobs[4]["admin"] == f"site: project X;schedrl:lock={lock}:SiteFactor=0"
    assert slurm.jobs[5]["admin"] == f"schedrl:lock={lock}:SiteFactor=0"
    assert slurm.jobs[1]["nice"] == 500 and slurm.jobs[1]["admin"] == ""
    bonus3 = slurm.jobs[3]["site"]
    slurm.jobs[3]["site"] = 1000  # an admin sets job 3's site factor by hand
    a.cycle()
    assert any("job 3's SiteFactor was changed outside the adapter" in line for line in lines)
    assert slurm.jobs[3]["site"] == 1000 + bonus3  # the admin's value is its own now; the bonus on top
    assert Lease.load(tmp_path / "state", "fake").original[3] == 1000
    assert slurm.jobs[3]["admin"].endswith(":SiteFactor=1000")
    a.stop()
    assert slurm.jobs[3]["site"] == 1000 and slurm.jobs[4]["site"] == 0 and slurm.jobs[1]["nice"] == 500
    assert slurm.jobs[4]["admin"] == "site: project X" and slurm.jobs[3]["admin"] == ""
    assert slurm.jobs[lock]["state"] == "CANCELLED"  # the lock job goes with the adapter


def test_the_nice_fallback_keeps_the_users_nice_under_the_bonus(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7])
    slurm.jobs[3]["nice"] = 50  # a user's own nice: the bonus is taken off it, not put in its place
    a = adapter(slurm, tmp_path, handle="nice", top=2)
    a.cycle()
    assert slurm.fields == ["Nice"] and slurm.order()[:2] == [2, 3]
    lease = Lease.load(tmp_path / "state", "fake")
    assert lease.original == {2: 0, 3: 50} and lease.handle == "nice"
    assert slurm.jobs[2]["nice"] < slurm.jobs[3]["nice"] < 50 and slurm.jobs[2]["site"] == 0
    a.stop()
    assert slurm.jobs[2]["nice"] == 0 and slurm.jobs[3]["nice"] == 50


def test_two_adapters_passing_the_first_check_together_elect_exactly_one(tmp_path):
    from schedrl.slurm.lock import SlurmLock

    slurm = FakeSlurm()  # an empty queue: no mark anywhere, nothing to see but the lock jobs
    a = SlurmLock(slurm, "fake", "debug", 60.0, tmp_path / "a")
    b = SlurmLock(slurm, "fake", "debug", 60.0, tmp_path / "b")
    a.refuse_if_held()
    b.refuse_if_held()  # both saw no lock job
    first, second = b.submit(), a.submit()  # b's reached slurmctld first: the lower id
    assert first < second
    with pytest.raises(LockError, match=rf"the adapter of lock job {first} .* took the cluster's lock first \(lock job "
                                        rf"{second} cancelled\): one adapter per cluster"):
        a.elect()
    assert b.elect() is b and [j for j, _, _ in slurm.lock_jobs("schedrl-lock")] == [first]
    b.check()  # still its lock
    slurm.cancel(first)  # released or cancelled by hand: the adapter stops
    with pytest.raises(LockLost, match=f"lock job {first} is gone"):
        b.check()


def test_reset_gives_a_killed_adapters_site_factors_back_and_expired_waits_for_its_lease(tmp_path):
    """`schedrl slurm reset` (`schedrl.slurm.reset.reset`): with `--expired` nothing happens while the lease runs; then
    every job the killed adapter changed gets the site's own value back, and the lines say so."""
    from schedrl.slurm.reset import ResetError, reset

    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    slurm.jobs[5]["site"] = 10
    a = adapter(slurm, tmp_path)
    a.cycle()
    a.lock.release()  # killed: no stop(), no restore
    changed = {job for job, j in slurm.jobs.items() if j.get("site", 0) not in (0, 10) and job != a.slurm_lock.job}
    assert changed
    lines: list[str] = []
    reset(tmp_path / "state", "fake", True, lines.append, client=slurm)
    assert len(lines) == 1 and lines[0].startswith("reset --expired: ") and lines[0].endswith("nothing to do")
    # the killed adapter's lock job still holds the cluster: a plain reset is refused with one line
    with pytest.raises(ResetError) as refused:
        reset(tmp_path / "state", "fake", False, lines.append, client=slurm)
    assert "\n" not in str(refused.value) and "lock" in str(refused.value).lower()
    slurm.jobs.pop(a.slurm_lock.job)  # the lock job ends (scancel, or its time limit)
    lines.clear()
    reset(tmp_path / "state", "fake", False, lines.append, client=slurm)
    assert lines[-1].startswith("reset: ") and lines[-1].endswith("pending job(s) back to their own values; Slurm's "
                                                                   "own order applies")
    assert int(lines[-1].split()[1]) >= 1 and slurm.jobs[5]["site"] == 10
