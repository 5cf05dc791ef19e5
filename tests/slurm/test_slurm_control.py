"""The site keeps control (issue 57), on the in-memory Slurm: the bounded handle never moves a job across a QOS tier
or past a fair-share difference the admin does not allow, no option bypasses a configuration check, nonsensical
options are refused at parse time alike in `run` and `report`, a dead adapter's lease lapses at once, every bad input
of the `slurm` commands is one error line, and the watchdog rolls a losing live policy back to shadow."""

from __future__ import annotations

import gzip
import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_slurm import FakeSlurm
from schedrl.cli.main import main
from schedrl.slurm.adapter import Adapter, AdapterError, AdapterOptions, serve
from schedrl.slurm.lease import Lease
from schedrl.slurm.mechanism import MechanismError, NiceBands, protect
from schedrl.slurm.reset import reset
from schedrl.slurm.watch import EXIT_ROLLED_BACK, Watchdog
from test_slurm_adapter import adapter, queue

DEAD_PID = 999_999_999
"""Beyond any pid_max: no process has it."""


# --- the bounded handle ------------------------------------------------------------------------------------------

@settings(max_examples=120, deadline=None, derandomize=True)
@given(n=st.integers(2, 14), k=st.integers(1, 8), tiers=st.integers(1, 3), cap=st.integers(60, 5000),
       seed=st.integers(0, 10 ** 6))
def test_bonuses_never_cross_a_qos_tier_nor_a_fair_share_difference_past_the_cap(n, k, tiers, cap, seed):
    """Whatever the policy's order, the final priorities (own + bonus) keep every job that Slurm had ahead of another
    with a higher QOS, or a fair share `cap` or more higher, ahead of it; no bonus exceeds the cap; and a job passes
    another only where their priorities without the bonus differ by less than the cap."""
    rnd = random.Random(seed)
    jobs = list(range(1, n + 1))
    qos = {j: 1000.0 * rnd.randrange(tiers) for j in jobs}
    fairshare = {j: float(rnd.randrange(0, 3 * cap)) for j in jobs}
    base = {j: int(qos[j] + fairshare[j] + rnd.randrange(0, 2 * cap)) for j in jobs}
    slurm_order = sorted(jobs, key=lambda j: (-base[j], j))
    wanted = rnd.sample(jobs, min(k, n))
    bands = NiceBands(k, max(1, cap // (3 * (k + 1))), cap, "site-factor")
    order = protect(wanted, slurm_order, qos, fairshare, cap, k)
    assert len(order) <= k and len(set(order)) == len(order)
    bonus = {c.job: c.new for c in bands.plan(order, dict.fromkeys(jobs, 0), {})}
    assert all(0 < b <= cap for b in bonus.values())
    final = {j: base[j] + bonus.get(j, 0) for j in jobs}
    rank = {j: r for r, j in enumerate(sorted(jobs, key=lambda j: (-final[j], slurm_order.index(j))))}
    for a in jobs:
        for b in jobs:
            if slurm_order.index(a) < slurm_order.index(b) and rank[b] < rank[a]:  # b passed a
                assert qos[b] >= qos[a] and fairshare[a] - fairshare[b] < cap and base[a] - base[b] < cap


def test_a_high_qos_job_stays_ahead_of_every_normal_qos_job(tmp_path):
    """SJF wants the short normal-QOS jobs first; the long high-QOS job keeps its place ahead of all of them, and the
    ranked ones come after it in SJF's order."""
    slurm = FakeSlurm(config={"PriorityWeightQOS": "1000", "PriorityWeightAge": "1000",
                              "PriorityWeightJobSize": "1000"})
    queue(slurm, [1, 2, 3, 60, 4])
    slurm.jobs[4]["qos"] = 1000.0  # the 60-minute job runs in the high QOS
    before = slurm.order()
    lines: list[str] = []
    a = adapter(slurm, tmp_path, lines=lines)
    record = a.cycle()
    after = slurm.order()
    assert before == [4, 1, 2, 3, 5] and record["order"] == [1, 2, 3, 5]
    assert after[0] == 4 and after[1:] == [1, 2, 3, 5] and record["lifted"] == [4]
    assert record["bonus_order"] == [4, 1, 2, 3]  # K = 4: the high-QOS job takes one of the ranks
    assert max(j["site"] for j in slurm.jobs.values()) <= a.bands.ceiling <= 2000  # age + job size weights
    a.stop()


def test_no_option_bypasses_a_configuration_check():
    for config in ({"PriorityType": "priority/basic"}, {"PrioritySiteFactorPlugin": "site_factor/example"},
                   {"PriorityFlags": "NO_NORMAL_ALL"}):
        full = {**FakeSlurm().config_values, **config}
        for handle in ("site-factor", "nice"):
            for options in ({}, {"step": 5000}, {"step": 100000, "max_bonus": 10 ** 9}, {"scale": 0.1}):
                with pytest.raises(MechanismError, match="slurm.conf"):
                    NiceBands.for_config(full, 8, handle=handle, **options)
    with pytest.raises(MechanismError, match="--max-bonus 10 leaves less than 1"):
        NiceBands.for_config(FakeSlurm().config_values, 8, max_bonus=10)
    with pytest.raises(MechanismError, match="--band-step 1,000 with --top 8 needs bonuses up to 27,000"):
        NiceBands.for_config(FakeSlurm().config_values, 8, step=1000, max_bonus=5000)


def test_a_dry_run_with_band_step_is_refused_under_a_site_factor_plugin(tmp_path):
    slurm = FakeSlurm(config={"PrioritySiteFactorPlugin": "site_factor/example"})
    queue(slurm, [9, 5])
    for handle in ("site-factor", "nice"):
        with pytest.raises(MechanismError, match="PrioritySiteFactorPlugin=site_factor/example"):
            adapter(slurm, tmp_path, mode="dry-run", band_step=100000, handle=handle)
    assert not slurm.updates and not slurm.lock_jobs("schedrl-lock")


# --- options refused at parse time ------------------------------------------------------------------------------

def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # refused while the command line is parsed
        return int(e.code)


RUN = ["slurm", "run", "--policy", "sjf", "--partition", "p", "--dry-run"]
BAD_RUN = [["--band-step", "0"], ["--max-changes-per-minute", "0"], ["--size-tolerance", "0"],
           ["--size-tolerance", "-1"], ["--size-tolerance", "nan"], ["--bonus-scale", "nan"], ["--bonus-scale", "inf"],
           ["--bonus-scale", "0"], ["--max-bonus", "0"], ["--top", "0"], ["--watch-margin", "nan"],
           ["--watch-margin", "-1"], ["--watch-jobs", "5"], ["--interval", "1" + "0" * 400 + "s"], ["--cycles", "0"],
           ["--trained-cpus", "0"], ["--top", "9" * 5000]]
BAD_GATE = [["--gate-jobs", "0"], ["--gate-margin", "nan"], ["--gate-margin", "inf"], ["--gate-margin=-inf"]]


@pytest.mark.parametrize("bad", BAD_RUN + BAD_GATE, ids=lambda b: " ".join(b)[:40])
def test_run_refuses_nonsense_at_parse_time(bad, capsys, tmp_path):
    assert _status([*RUN, "--state-dir", str(tmp_path / "s"), *bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {bad[0].split('=')[0]}: must be" in err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("bad", BAD_GATE + [["--windows", "1"]], ids=lambda b: " ".join(b))
def test_report_refuses_the_same_nonsense_alike(bad, capsys, tmp_path):
    assert _status(["slurm", "report", str(tmp_path / "log.jsonl"), "--state-dir", str(tmp_path / "s"), *bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {bad[0].split('=')[0]}: must be" in err


@pytest.mark.parametrize("argv, message", [
    (["--shadow", "--watch-jobs", "40"], "--watch-jobs is an option of the live watchdog, which --shadow leaves out"),
    (["--dry-run", "--slurmctld-log", "x.log", "--watch-margin", "2"],
     "--watch-margin, --slurmctld-log are options of the live watchdog, which --dry-run leaves out"),
    (["--force", "--no-watch", "--watch-metric", "wait"], "--watch-metric is an option of the live watchdog, which "
                                                         "--no-watch leaves out"),
    (["--shadow", "--max-bonus", "5000", "--handle", "nice"], "--max-bonus, --handle shape the bonuses, which --shadow "
                                                              "never sets"),
    (["--dry-run", "--no-watch"], "--no-watch is for live mode; --dry-run has no watchdog to turn off"),
    (["--force", "--log", "c.jsonl", "--slurmctld-log", "/dev/zero"], "slurmctld log /dev/zero is not a regular file"),
])
def test_an_option_the_mode_would_ignore_is_refused(argv, message, capsys, tmp_path):
    assert _status([*RUN[:6], "--state-dir", str(tmp_path / "s"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "s").exists()


def test_replay_refuses_a_scale_that_is_not_a_positive_number(capsys):
    for scale in ("nan", "inf", "0", "-1"):
        assert _status(["slurm", "replay", "default", "--scale", scale, "--partition", "p"]) == 2
        assert "argument --scale: must be" in capsys.readouterr().err


# --- a dead adapter's lease ------------------------------------------------------------------------------------

def _killed(slurm: FakeSlurm, tmp_path) -> Adapter:
    """An adapter killed after one cycle: its pid (in the state file and its lock job) no longer runs."""
    a = adapter(slurm, tmp_path)
    a.cycle()
    a.lock.release()
    a.lost = True
    lock = slurm.jobs[a.slurm_lock.job]
    lock["comment"] = lock["comment"].replace(f"pid={os.getpid()} ", f"pid={DEAD_PID} ")
    lease = Lease.load(tmp_path / "state", "fake")
    lease.pid = DEAD_PID
    lease.save()
    return a


def test_reset_expired_does_not_wait_for_the_lease_of_a_dead_adapter(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    _killed(slurm, tmp_path)
    assert Lease.load(tmp_path / "state", "fake").expired() is False
    lines: list[str] = []
    reset(tmp_path / "state", "fake", True, lines.append, client=slurm)
    assert lines[0].startswith(f"reset --expired: the adapter of the lease (pid {DEAD_PID} on ")
    assert "no longer running" in lines[0] and lines[-1].startswith("reset: 4 pending job(s) back")
    assert all(j["site"] == 0 for job, j in slurm.jobs.items() if j["name"] != "schedrl-lock")


def test_a_live_lease_still_waits_and_the_takeover_line_names_the_old_adapter(tmp_path):
    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7, 1, 3])
    _killed(slurm, tmp_path)
    lines: list[str] = []
    b = adapter(slurm, tmp_path, lines=lines)
    took = [line for line in lines if line.startswith("continuing the order of an earlier adapter (")]
    assert len(took) == 1 and f"(pid {DEAD_PID} on " in took[0] and "no longer running" in took[0]
    assert "pid 0 on ," not in "\n".join(lines)
    b.stop()
    # marks alone (the state directory lost): the marks' line, and no line naming a process it does not know
    c = _killed(slurm, tmp_path / "c")
    assert c.lease.original
    lines.clear()
    d = adapter(slurm, tmp_path / "d", lines=lines)
    assert any("carry the marks of lock jobs no longer live" in line for line in lines)
    assert not any("pid 0" in line or "on ," in line for line in lines)
    d.stop()


# --- bad inputs: one line, exit 2, nothing written ---------------------------------------------------------------

def _shadow_log(path, jobs: int = 24):
    t = 1_000_000.0
    lines = [{"kind": "header", "time": t, "cluster": "c", "partition": "p", "policy": "sjf", "top": 4,
              "mode": "shadow"}]
    lines += [{"kind": "job", "job": j, "submit": t + j, "cpus": 2, "limit": 60, "priority": 1} for j in range(1, jobs)]
    lines += [{"kind": "started", "job": j, "start": t + j} for j in range(1, jobs)]
    lines += [{"kind": "ended", "job": j, "end": t + j + 5, "state": "COMPLETED", "exact": True}
              for j in range(1, jobs)]
    lines += [{"kind": "cycle", "n": 1, "time": t, "usable": 10, "order": [1], "slurm": [1]},
              {"kind": "cycle", "n": 2, "time": t + 30, "usable": 10, "order": [2], "slurm": [2]}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _ctld(path, stamp: str = "2026-11-28T10:00:00.000", job: str = "5"):
    path.write_text(f"[{stamp}] _slurm_rpc_submit_batch_job: JobId={job} InitPrio=1 usec=5\n")
    return path


def _bad_inputs(tmp_path):
    log = _shadow_log(tmp_path / "good.jsonl")
    text = log.read_text()
    (tmp_path / "random.jsonl").write_bytes(random.Random(7).randbytes(4096))
    (tmp_path / "plain.jsonl.gz").write_text(text)
    (tmp_path / "twice.jsonl").write_text(text + text)
    (tmp_path / "nan.jsonl").write_text(text.replace('"submit": 1000001.0', '"submit": NaN', 1))
    (tmp_path / "long.jsonl").write_text('{"kind": "header", "pad": "' + "x" * (17 << 20) + '"}\n')
    with gzip.open(tmp_path / "bomb.jsonl.gz", "wb") as f:  # one 17 MiB line, decompressed
        f.write(b"{" + b" " * (17 << 20))
    return {
        "random bytes": ([str(tmp_path / "random.jsonl")], "not text (UTF-8)"),
        "not gzip": ([str(tmp_path / "plain.jsonl.gz")], "not gzip-compressed, or cut short"),
        "concatenated": ([str(tmp_path / "twice.jsonl")], "two logs concatenated (or one log twice)"),
        "nan": ([str(tmp_path / "nan.jsonl")], "is not a finite number"),
        "long line": ([str(tmp_path / "long.jsonl")], "a line longer than 16,777,216 bytes"),
        "gzip bomb": ([str(tmp_path / "bomb.jsonl.gz")], "a line longer than 16,777,216 bytes"),
        "dev zero": (["/dev/zero"], "is not a regular file"),
        "ctld dev zero": ([str(log), "--slurmctld-log", "/dev/zero"], "is not a regular file"),
        "ctld impossible date": ([str(log), "--slurmctld-log", str(_ctld(tmp_path / "d.log", "2026-13-45T10:00:00"))],
                                 "impossible time stamp '2026-13-45T10:00:00'"),
        "ctld long id": ([str(log), "--slurmctld-log", str(_ctld(tmp_path / "i.log", job="9" * 5000))],
                         "a job id of 5,000 digits"),
        "ctld matching nothing": ([str(log), "--slurmctld-log", str(_ctld(tmp_path / "n.log", job="777"))],
                                  "names none of the 23 jobs of"),
        "ctld binary": ([str(log), "--slurmctld-log", str(tmp_path / "random.jsonl")], "names none of the 23 jobs"),
    }


def test_every_bad_input_of_report_is_one_line_and_writes_nothing(tmp_path, capsys):
    for name, (args, message) in _bad_inputs(tmp_path).items():
        state = tmp_path / f"state-{name.replace(' ', '-')}"
        assert _status(["slurm", "report", *args, "--state-dir", str(state), "--windows", "2"]) == 2, name
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and err.startswith("schedrl slurm: error: ") and message in err, (name, err)
        assert not state.exists() or not any(state.iterdir()), name


@settings(max_examples=40, deadline=None, derandomize=True)
@given(cut=st.integers(0, 4000), flips=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), max_size=4),
       copies=st.integers(1, 2), nan=st.booleans())
def test_a_damaged_cycle_log_is_a_report_or_one_error_line(tmp_path_factory, cut, flips, copies, nan):
    """A good log cut short, with bytes replaced, given twice or with a NaN: `slurm report` answers with a report
    (exit 0) or one error line (exit 2), never a traceback, and saves nothing when it refuses."""
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("damaged")
    data = bytearray(_shadow_log(tmp / "good.jsonl").read_bytes())
    if nan:
        data = bytearray(bytes(data).replace(b'"start": 1000003.0', b'"start": NaN', 1))
    for at, value in flips:
        data[at % len(data)] = value
    data = (bytes(data[:max(cut, 1)]) if cut < len(data) else bytes(data)) * copies
    (tmp / "log.jsonl").write_bytes(data)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = _status(["slurm", "report", str(tmp / "log.jsonl"), "--windows", "2", "--metric", "wait",
                          "--state-dir", str(tmp / "state")])
    if status == 0:
        assert err.getvalue() == "" and "replay of" in out.getvalue()
    else:
        assert status == 2 and err.getvalue().count("\n") == 1 and "error: " in err.getvalue(), err.getvalue()
        assert not (tmp / "state").exists() or not any((tmp / "state").iterdir())


def test_a_discrete_time_policy_is_refused_with_why(tmp_path):
    class SlotPolicy:  # decides on the discrete-time cluster's slots (DeepRM, RLSchert): act, no pick
        name = "deeprm"

        def act(self, observation):
            return 0

    slurm = FakeSlurm()
    queue(slurm, [9, 5])
    options = AdapterOptions(partition="debug", state_dir=tmp_path / "state", log=tmp_path / "c.jsonl")
    with pytest.raises(AdapterError, match="policy deeprm cannot order a Slurm queue: it decides on the discrete-time"):
        serve(Adapter(SlotPolicy(), options, slurm, say=print, policy_name="deeprm"), 1)
    assert not (tmp_path / "c.jsonl").exists() and not slurm.lock_jobs("schedrl-lock")


def test_force_that_then_fails_never_says_going_live(tmp_path, capsys, monkeypatch):
    from schedrl.slurm import adapter as adapter_module, client as client_module

    slurm = FakeSlurm(config={"PriorityType": "priority/basic"})
    queue(slurm, [9, 5])
    monkeypatch.setattr(client_module, "SlurmClient", lambda *a, **k: slurm)
    monkeypatch.setattr(adapter_module, "SlurmClient", lambda *a, **k: slurm)
    argv = ["slurm", "run", "--policy", "sjf", "--partition", "debug", "--force", "--state-dir",
            str(tmp_path / "state"), "--log", str(tmp_path / "c.jsonl"), "--cycles", "1"]
    assert _status(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "PriorityType is priority/basic" in err
    assert not (tmp_path / "c.jsonl").exists() and not slurm.updates


# --- the watchdog ------------------------------------------------------------------------------------------------

def _drive(slurm: FakeSlurm, a: Adapter, arrivals: list[tuple[float, int]], until: int, step_s: float = 6.0) -> int:
    """Jobs of half the machine each, started in Slurm's order as the adapter left it while the head fits (a main
    scheduler without backfilling), each running its time limit; every `step_s` the adapter cycles. Returns the
    cycles run (until the adapter is no longer live, or `until`)."""
    ends: dict[int, float] = {}
    next_id, steps = 1, 0
    while a.mode == "live" and steps < until:
        steps += 1
        while next_id <= len(arrivals) and arrivals[next_id - 1][0] <= slurm.now:
            slurm.add(next_id, slurm.cpus // 2, arrivals[next_id - 1][1], arrivals[next_id - 1][0])
            next_id += 1
        for job in [job for job, end in ends.items() if end <= slurm.now]:
            slurm.end_job(job)
            ends.pop(job)
        a.cycle()
        for head in slurm.order():
            if len(ends) == 2:
                break
            slurm.start_job(head)
            ends[head] = slurm.now + slurm.jobs[head]["limit"]
        slurm.now += step_s
    return steps


def _arrivals(slurm: FakeSlurm, n: int, seed: int = 1) -> list[tuple[float, int]]:
    """Jobs arriving 10 s apart on average (exponential), one in five long (120 s), the rest short (6 s)."""
    rnd, t, out = random.Random(seed), slurm.now, []
    for _ in range(n):
        out.append((t, 120 if rnd.random() < 0.2 else 6))
        t += rnd.expovariate(1 / 10.0)
    return out


def test_the_watchdog_rolls_a_losing_policy_back_to_shadow(tmp_path):
    """LJF on a queue of long and short jobs: over the last 40 jobs it is worse than Slurm's own order (FCFS here)
    beyond the margin, and the adapter goes back to shadow on its own."""
    slurm = FakeSlurm(cpus=8)
    lines: list[str] = []
    a = adapter(slurm, tmp_path, "ljf", lines, watch_margin_pct=5.0, watch_jobs=40, watch_metric="wait")
    steps = _drive(slurm, a, _arrivals(slurm, 120), 200)
    assert a.mode == "shadow" and a.rolled_back, lines[-3:]
    rolled = [line for line in lines if "rolled back to shadow: watchdog: over the last 40 jobs" in line]
    assert len(rolled) == 1 and "worse beyond the +5% margin" in rolled[0]
    assert all(j["site"] == 0 for j in slurm.jobs.values() if j["state"] == "PENDING")  # bonuses reset
    assert not slurm.lock_jobs("schedrl-lock") and a.lock is None  # the cluster is free for another adapter
    records = [json.loads(x) for x in (tmp_path / "cycles.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in records].count("rollback") == 1
    audit = [json.loads(x) for x in (tmp_path / "state" / "fake.audit.jsonl").read_text().splitlines()]
    assert [r.get("kind") for r in audit].count("watchdog") == 1
    print(f"LJF rolled back after {steps} cycles, {len(a.log.ended)} jobs ended: {rolled[0]}")
    updates = len(slurm.updates)
    a.cycle()  # shadow from here on: nothing changes
    assert len(slurm.updates) == updates
    a.stop()
    reset(tmp_path / "state", "fake", False, lines.append, client=slurm)  # the audit's watchdog line is read too


def test_the_watchdog_keeps_a_policy_that_does_not_lose(tmp_path):
    slurm = FakeSlurm(cpus=8)
    a = adapter(slurm, tmp_path, "sjf", watch_margin_pct=5.0, watch_jobs=40, watch_metric="wait")
    _drive(slurm, a, _arrivals(slurm, 120), 80)
    looks = [json.loads(x) for x in (tmp_path / "cycles.jsonl").read_text().splitlines() if '"watch"' in x]
    assert a.mode == "live" and looks and not any(r["worse"] for r in looks)
    a.stop()


def test_the_cli_exits_with_the_rollbacks_status_and_says_why(tmp_path, capsys, monkeypatch):
    from schedrl.slurm import adapter as adapter_module, client as client_module, watch

    slurm = FakeSlurm()
    queue(slurm, [9, 5, 7])
    monkeypatch.setattr(client_module, "SlurmClient", lambda *a, **k: slurm)
    monkeypatch.setattr(adapter_module, "SlurmClient", lambda *a, **k: slurm)
    monkeypatch.setattr(watch.Watchdog, "due", lambda self, seen: True)  # a losing verdict at the first look
    monkeypatch.setattr(watch.Watchdog, "look", lambda self, seen: watch.Verdict(20, 4, 30.0, [12.0, 48.0], True))
    argv = ["slurm", "run", "--policy", "sjf", "--partition", "debug", "--force", "--state-dir",
            str(tmp_path / "state"), "--log", str(tmp_path / "c.jsonl"), "--cycles", "3", "--interval", "1s",
            "--watch-jobs", "20"]
    assert _status(argv) == EXIT_ROLLED_BACK == 3
    out, err = capsys.readouterr()
    assert "going live with --force" in out.splitlines()[0]
    assert "cycle 1: rolled back to shadow: watchdog: over the last 20 jobs (4 windows) the policy's bsld is +30.0%" \
           in out
    assert err.startswith("schedrl slurm: the watchdog rolled sjf back to shadow: ") and err.count("\n") == 1
    assert all(j["site"] == 0 for j in slurm.jobs.values() if j["state"] == "PENDING")
    assert Watchdog is watch.Watchdog


def test_a_torn_line_is_skipped_only_where_a_kill_left_it(tmp_path):
    """A killed adapter's torn last line, and the same line once an adapter continued the log (a header next), are
    skipped; a torn-looking line with other records after it is an error naming its line."""
    from schedrl.slurm.cyclelog import CycleLog, CycleLogError, numbered

    path = _shadow_log(tmp_path / "log.jsonl")
    good = len(list(numbered(path)))
    with open(path, "a") as f:
        f.write('{"kind":"cycle","n":3,"ti')  # killed mid-line
    assert len(list(numbered(path))) == good
    log = CycleLog(path)  # an adapter continuing it ends the torn line first
    log.write({"kind": "header", "time": 1_000_100.0, "cluster": "c", "partition": "p", "policy": "sjf", "top": 4})
    log.close()
    assert len(list(numbered(path))) == good + 1
    lines = path.read_text().splitlines()
    torn = next(k for k, line in enumerate(lines, 1) if line.endswith('"ti'))
    path.write_text("\n".join(lines[:-1] + [lines[0].replace("header", "cycle")]) + "\n")  # no header after it
    with pytest.raises(CycleLogError, match=f"log.jsonl:{torn}: not a JSON record"):
        list(numbered(path))
