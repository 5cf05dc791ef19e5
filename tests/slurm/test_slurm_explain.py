"""Issue 61, item 4 (on hand-built snapshots and the in-memory Slurm): an inspecting policy ranks a queue by its own
accept/reject (a rejected proposal is deferred behind the accepted ones), the adapter writes why it placed each job
it moved into the audit log (a tree's path, the site's overrides), and `schedrl slurm explain JOBID` prints it; every
bad input is one error line."""

from __future__ import annotations

import json

import pytest

from cli_process import run_cli
from fake_slurm import FakeSlurm
from schedrl.slurm.explain import site_lines
from schedrl.slurm.order import rank
from schedrl.slurm.snapshot import Machine, QueueJob, Snapshot
from schedrl.eval.policies import resolve_policy
from test_slurm_adapter import adapter

NOW = 1_000_000.0
CPUS = 256
SHARE = 0.2
"""The hand-built tree rejects every proposal asking for more than this share of the machine."""


def _job(job: int, state: str, cpus: int, limit_s: float, submit: float, start: float | None = None) -> QueueJob:
    return QueueJob(job, str(job), "debug", state, cpus, 1, limit_s, submit, start, None, 1000, 0,
                    "Priority" if state == "PENDING" else "None", "(null)", "(null)")


def _snapshot(pending: list[tuple[int, int, float]]) -> Snapshot:
    """One job running on 200 of the 256 CPUs for six hours (so a rejection has an event to wait for), and the
    pending (id, CPUs, time limit in s), submitted a second apart in this order."""
    running = (_job(1, "RUNNING", 200, 6 * 3600.0, NOW - 100, NOW - 90),)
    jobs = tuple(_job(job, "PENDING", cpus, limit, NOW - 50 + k) for k, (job, cpus, limit) in enumerate(pending))
    return Snapshot(NOW, "debug", Machine(200, 56, 0, CPUS, 1, None), jobs, running, (), (),
                    jobs={j.job_id: j for j in (*jobs, *running)})


def tree_policy(name: str = "tree-test"):
    """An inspector whose tree rejects a proposal wider than `SHARE` of the machine, over F1."""
    from schedrl.agents.inspector.policy import InspectorPolicy
    from schedrl.agents.inspector.tree import NETWORK, feature_names, tree_network

    tree = {"if": {"feature": "requested_share", "above": SHARE}, "then": {"decide": "reject"},
            "else": {"decide": "accept"}}
    module = tree_network({"network": NETWORK, "features": list(feature_names(False)), "tree": tree})
    return InspectorPolicy(module, {"base": "f1", "norm": {"time_scale": 86400.0}}, name)


PENDING = [(10, 60, 60.0), (11, 40, 86400.0), (12, 100, 600.0), (13, 50, 7200.0), (14, 30, 60.0), (15, 20, 86400.0)]
"""Shares 23%, 16%, 39%, 20%, 12%, 8%: the tree rejects 10 and 12; F1 proposes 10 before 15, 13 and 11."""


def test_a_tree_defers_exactly_the_proposals_it_rejects_behind_the_ones_it_accepts():
    snap = _snapshot(PENDING)
    base = rank(resolve_policy("f1"), snap, len(PENDING))
    wide = {job for job, cpus, _ in PENDING if cpus / CPUS > SHARE}
    assert wide == {10, 12} and base.index(10) < base.index(15)  # F1 proposes a wide job before a narrow one
    decisions: list[dict] = []
    order = rank(tree_policy(), snap, len(PENDING), (), decisions)
    assert order == [j for j in base if j not in wide] + [j for j in base if j in wide]
    assert {d["job"] for d in decisions if d["decide"] == "reject"} == wide
    assert [d["job"] for d in decisions] == [j for j in base]  # one inspection per proposal, in the base's order
    ten = next(d for d in decisions if d["job"] == 10)
    assert ten["by"] == "tree" and ten["path"] == ["the proposal's share of the machine > 20.0% (here 23.4%)",
                                                   "-> reject"]
    # at most one deferral a pass: the second wide job is taken where the base proposes it
    capped = rank(tree_policy(), snap, len(PENDING), (), decisions := [], max_deferrals=1)
    first_wide = next(j for j in base if j in wide)
    assert capped == [j for j in base if j != first_wide] + [first_wide]
    assert [d["by"] for d in decisions if d["job"] == ({10, 12} - {first_wide}).pop()] == ["limit"]
    # the top K: the deferred jobs fall out of it first
    assert rank(tree_policy(), snap, 3) == [j for j in base if j not in wide][:3]


def test_without_a_running_job_the_tree_is_not_asked_and_f1_stands():
    snap = _snapshot(PENDING)
    idle = Snapshot(NOW, "debug", Machine(0, CPUS, 0, CPUS, 1, None), snap.pending, (), (), (),
                    jobs={j.job_id: j for j in snap.pending})
    decisions: list[dict] = []
    assert rank(tree_policy(), idle, 6, (), decisions) == rank(resolve_policy("f1"), idle, 6)
    assert {d["by"] for d in decisions} == {"mask"} and "a rejection would wait for nothing" in decisions[0]["path"][0]


def test_a_tree_beside_a_network_explains_it_and_says_where_they_disagree():
    class Network:
        """Rejects job 14's proposal only (the tree rejects 10 and 12 instead)."""

        def __init__(self):
            self.inner = tree_policy()

        def defer(self, sim):
            return int(sim.workload.job_id[self.inner.pick(sim)]) == 14

        def pick(self, sim):
            return self.inner.pick(sim)

    decisions: list[dict] = []
    order = rank(Network(), _snapshot(PENDING), 6, (), decisions, explainer=tree_policy())
    assert order[-1] == 14
    by_job = {d["job"]: d for d in decisions}
    assert by_job[14]["decide"] == "reject" and by_job[14]["path"][-1] == "-> accept" and not by_job[14]["agree"]
    assert by_job[10]["decide"] == "accept" and by_job[10]["path"][-1] == "-> reject" and not by_job[10]["agree"]
    assert [job for job, d in by_job.items() if not d["agree"]] == [j for j in by_job if j in (10, 12, 14)]
    assert {d["by"] for d in decisions} == {"tree-beside"}


def _queue(slurm: FakeSlurm) -> None:
    """`PENDING` behind a job on 200 CPUs for six hours; jobs 10 and 11 submitted 1,000 s ago, the others 50 s ago."""
    slurm.add(100, 200, 6 * 3600, slurm.now - 2000, state="RUNNING", start=slurm.now - 1990, reason="None")
    for k, (job, cpus, limit) in enumerate(PENDING):
        slurm.add(job, cpus, limit, slurm.now - (1000 if k < 2 else 50) + k)


def test_the_audit_log_explains_each_moved_job_once_and_explain_prints_it(tmp_path, capsys):
    slurm = FakeSlurm()
    _queue(slurm)
    a = adapter(slurm, tmp_path, tree_policy(), top=6, starvation_limit_s=500.0)
    record = a.cycle()
    assert record["guard"] == [10, 11]  # past the limit
    assert record["order"][:2] == [10, 11] and record["order"][-1] == 12  # 12 deferred
    a.cycle()  # nothing new decided: nothing new written
    audit = tmp_path / "state" / "fake.audit.jsonl"
    explained = [r for r in map(json.loads, audit.read_text().splitlines()) if r.get("kind") == "explain"]
    assert len(explained) == 1 and explained[0]["cycle"] == 1 and explained[0]["policy"] == "test"
    entries = {e["job"]: e for e in explained[0]["jobs"]}
    assert entries[12]["decide"] == "reject" and entries[12]["path"][-1] == "-> reject"
    assert entries[10]["by"] == "guard" and entries[10]["overrides"][0].startswith("it has waited 1")
    assert "past the starvation limit of 8 min: first, whatever the policy says" in entries[10]["overrides"][0]
    a.stop()
    assert run_cli("slurm", "explain", "12", "--state-dir", str(tmp_path / "state")).returncode == 0
    out = run_cli("slurm", "explain", "12", "--state-dir", str(tmp_path / "state")).stdout.splitlines()
    assert out[0].startswith("job 12: ") and any(line.endswith("cycle 1: rank 6 (Slurm's own order: 3): deferred: "
                                                               "test rejected the base rule's proposal (by its tree)")
                                                 for line in out), out
    assert "    the proposal's share of the machine > 20.0% (here 39.1%)" in out and "    -> reject" in out
    assert any("(rank 6, live): ok" in line for line in out)  # its bonus, then its reset at the stop
    guard = run_cli("slurm", "explain", "10", "--state-dir", str(tmp_path / "state")).stdout
    assert "put first by the site's starvation guard" in guard and "site: it has waited 1" in guard


def test_a_cycle_whose_policy_fails_keeps_the_order_and_explains_nothing(tmp_path):
    slurm = FakeSlurm()
    _queue(slurm)
    policy = tree_policy()
    a = adapter(slurm, tmp_path, policy, top=6)
    a.cycle()

    def broken(sim):
        raise RuntimeError("out of memory")

    policy.defer = broken
    slurm.add(16, 8, 60, slurm.now)  # a new job, ahead in Slurm's order of the deferred one
    record = a.cycle()
    assert record["problem"].startswith("the policy failed: RuntimeError: out of memory")
    audit = tmp_path / "state" / "fake.audit.jsonl"
    assert [r["cycle"] for r in map(json.loads, audit.read_text().splitlines()) if r.get("kind") == "explain"] == [1]
    a.stop()


def test_the_bounded_handle_is_named_where_it_overrides_the_tree(tmp_path):
    slurm = FakeSlurm(config={"PriorityWeightQOS": "1000", "PriorityWeightAge": "1000",
                              "PriorityWeightJobSize": "1000"})
    _queue(slurm)
    slurm.jobs[15]["qos"] = 1000.0  # Slurm's first: no job of the normal QOS may pass it
    a = adapter(slurm, tmp_path, tree_policy(), top=6)
    record = a.cycle()
    assert record["lifted"] == [15]
    a.stop()
    explained = [r for r in map(json.loads, (tmp_path / "state" / "fake.audit.jsonl").read_text().splitlines())
                 if r.get("kind") == "explain"]
    entries = {e["job"]: e for e in explained[0]["jobs"]}
    assert entries[15]["overrides"][0].startswith("the bounded handle put it at rank 1 (the policy's rank ")
    kept = [job for job, e in entries.items() if any(o.startswith("the bounded handle kept it behind 1 job(s)")
                                                     for o in e.get("overrides", []))]
    assert kept and all(entries[job]["rank"] > 1 for job in kept)


def test_a_move_the_bonus_cannot_carry_is_named_with_the_lead_it_could_not_close():
    """Slurm's order 1, 2, 3 (priorities without bonuses 5,000, 100, 90); the policy wants 3, 1, 2 and the bonuses
    (at most 2,000) lift 3 to 2,090 only: job 1 keeps its lead, and the line says by how much."""
    base = {1: 5000.0, 2: 100.0, 3: 90.0}
    final = {1: 5000.0 + 1000, 2: 100.0, 3: 90.0 + 2000}
    lines = site_lines([1, 2, 3], [3, 1, 2], [3, 1, 2], base, final, 2000)
    assert lines == {3: [("capped", "1 job(s) the policy put behind it keep a higher priority (job 1's is 4,910 "
                                    "higher without bonuses): a bonus is at most 2,000 (--max-bonus)")]}
    assert site_lines([1, 2, 3], [3, 1, 2], [3, 1, 2], base, {1: 5000.0, 2: 100.0, 3: 5090.0}, 5000) == {}


def test_a_dry_run_says_what_it_would_explain(tmp_path):
    slurm = FakeSlurm()
    _queue(slurm)
    lines: list[str] = []
    a = adapter(slurm, tmp_path, tree_policy(), lines=lines, top=6, mode="dry-run")
    a.cycle()
    assert any(line.startswith("cycle 1: would explain job 12: rank 6") for line in lines), lines
    assert not (tmp_path / "state" / "fake.audit.jsonl").exists()
    a.stop()


@pytest.mark.parametrize("setup, message", [
    ("missing", "error: --state-dir {state}: no such directory"),
    ("file", "error: --state-dir {state}: not a directory"),
    ("empty", "error: --state-dir {state} holds no audit log (*.audit.jsonl)"),
    ("unknown", "error: job 12: no change or decision of the adapter is recorded for it in {state}"),
    ("corrupt", "error: {state}/c.audit.jsonl:2: not a JSON record"),
    ("no-jobs", "error: {state}/c.audit.jsonl:2: an explain record without its list of job entries"),
    ("no-time", "error: {state}/c.audit.jsonl:2: a record without its time"),
])
def test_every_bad_input_of_explain_is_one_error_line(tmp_path, setup, message):
    state = tmp_path / "state"
    first = json.dumps({"time": NOW, "kind": "explain", "what": "1 job(s) explained", "cycle": 1, "policy": "p",
                        "jobs": [{"job": 11, "rank": 1, "slurm": 2, "by": "tree", "decide": "accept",
                                  "path": ["-> accept"]}]})
    second = {"corrupt": "{not json", "no-jobs": json.dumps({"time": NOW, "kind": "explain", "jobs": 3}),
              "no-time": json.dumps({"kind": "explain", "jobs": [{"job": 12}]})}.get(setup)
    if setup == "file":
        state.write_text("")
    elif setup != "missing":
        state.mkdir()
    if setup not in ("missing", "empty", "file"):
        (state / "c.audit.jsonl").write_text(first + "\n" + (second + "\n" if second else ""))
    done = run_cli("slurm", "explain", "12", "--state-dir", str(state))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message.format(state=state) in done.stderr, done.stderr
    assert run_cli("slurm", "explain", "0", "--state-dir", str(state)).returncode == 2  # not a job id


def test_explain_with_is_refused_where_there_is_nothing_to_explain(tmp_path):
    for policy, beside, message in (("sjf", "zoo:inspector-lublin1-s0-tree3", "sjf does not inspect"),
                                    ("zoo:inspector-lublin1-s0-tree3", "sjf", "--explain-with sjf: not a policy that "
                                                                             "explains")):
        done = run_cli("slurm", "run", "--policy", policy, "--partition", "debug", "--dry-run", "--explain-with",
                       beside, "--state-dir", str(tmp_path / "s"))
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
