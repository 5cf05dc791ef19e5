"""A policy as an order over a partition's pending jobs: its pick, that job removed, its next pick, ... for the top K.

`rank` asks the policy at a snapshot (`snapshot.simulator`) K times; the jobs it never picked keep Slurm's order
behind them. The guard's jobs (`guard.starving`) are taken out first and go ahead of the policy's. A policy that
inspects its base rule's proposals (`Inspecting`: the inspector, a distilled tree) is asked as the simulator asks it,
`defer` then `pick`: a rejected proposal is deferred, set aside for this pass while the base proposes again among the
rest, and the deferred jobs follow the accepted ones in the order they were proposed (at most `max_deferrals` a
pass; past them the base's proposals are taken as they come). Each inspection's reason is kept (`Decision`) where the
policy explains itself (`Explaining`), or where an explaining policy is given beside it (a tree beside its network). `OrderWorker`
runs the policy in a thread with a time budget, so a policy that fails or hangs costs one cycle's order, never the
adapter. `check_machine` refuses a policy trained for a machine size far from the partition's.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from schedrl.agents.base import Explaining, Inspecting
from schedrl.sim.queues import queue_remove
from schedrl.sim.state import Q_LEN
from schedrl.slurm.snapshot import Machine, QueueJob, Snapshot, simulator


class PolicyMachineError(ValueError):
    """A policy trained for a machine size far from the partition's; the message has both sizes."""


class PolicyError(ValueError):
    """A policy that cannot order a Slurm queue (a discrete-time one, or one that fails on a two-job queue): one
    line."""


def runnable(policy, name: str, cpus: int, nodes: int = 1) -> float:
    """PolicyError unless `policy` can rank a queue of a partition of `cpus` CPUs (it picks a waiting job, and does on
    a two-job queue: `warm_up`); returns the warm-up's seconds."""
    if not callable(getattr(policy, "pick", None)):
        raise PolicyError(f"policy {name} cannot order a Slurm queue: it decides on the discrete-time cluster's time "
                          "slots (act), not by picking a waiting job (pick), which is what the adapter asks; use a "
                          "heuristic, tuned:FILE, or a policy of the event simulator")
    try:
        return warm_up(policy, cpus, nodes)
    except Exception as e:  # a policy that cannot rank a two-job queue of this partition cannot run here
        first = (str(e).splitlines() or [""])[0][:200]
        raise PolicyError(f"policy {name} cannot rank a two-job queue of a partition of {cpus:,} CPUs: "
                          f"{type(e).__name__}: {first}") from None


def rank(policy, snapshot: Snapshot, k: int, first: Sequence[int] = (), decisions: list[dict] | None = None,
         explainer=None, max_deferrals: int | None = None) -> list[int]:
    """Job ids of the policy's top `k` pending jobs in its order, after the jobs `first` (ids, kept in front); an
    inspecting policy's deferred jobs after the ones it accepted (at most `max_deferrals`, default `k`). With
    `decisions`, one dict per inspected proposal is appended to it (`decision`)."""
    order = [j for j in first if j in snapshot.jobs]
    if not snapshot.pending or len(order) >= k:
        return order[:k]
    sim = simulator(snapshot)
    ids = np.asarray(sim.workload.job_id)
    position = {int(job): i for i, job in enumerate(ids)}
    state = sim.state_ref
    for job in order:
        if job in position:
            queue_remove(state, position[job])
    inspects = isinstance(policy, Inspecting)
    limit = k if max_deferrals is None else max_deferrals
    deferred: list[int] = []
    while len(order) < k and sim.state.iv[Q_LEN] > 0:
        queued = sim.queue
        asked = inspects and len(deferred) < limit
        rejected = asked and bool(policy.defer(sim))
        j = int(policy.pick(sim))  # after a rejection: the proposal it rejected (nothing has changed since)
        if not (queued == j).any():
            raise ValueError(f"{getattr(policy, 'name', type(policy).__name__)} picked job index {j}, which is not "
                             "waiting in the queue")
        if inspects and decisions is not None:
            decisions.append(decision(policy, explainer, sim, j, int(ids[j]), rejected, asked, limit))
        (deferred if rejected else order).append(int(ids[j]))
        queue_remove(state, j)
    return (order + deferred)[:k]


def decision(policy, explainer, sim, j: int, job: int, rejected: bool, asked: bool, limit: int) -> dict:
    """Why the inspecting `policy` accepted or rejected job index `j` (id `job`): `{"job", "decide", "by", "path"}`,
    from the policy's own `explain` or, where `explainer` is given (a tree beside a network), the explainer's path
    (`by`: `tree-beside`) with `"agree"`: whether it decided as the policy did."""
    decide = "reject" if rejected else "accept"
    out: dict = {"job": job, "decide": decide, "by": "policy", "path": []}
    if not asked:
        out.update(by="limit", path=[f"the pass's {limit} deferrals are spent: accepted as the base rule proposes"])
        return out
    source = explainer if explainer is not None else policy
    if isinstance(source, Explaining):
        why = source.explain(sim, j)
        out.update(by=str(why.get("by", "policy")), path=[str(line) for line in why.get("path", ())])
        if explainer is not None:
            out.update(by=f"{out['by']}-beside", agree=why.get("decide") == decide)
    return out


def warm_up(policy, cpus: int = 2, nodes: int = 1) -> float:
    """Rank a two-job queue once (compiles the simulator's and the policy's code, loads a network's weights on first
    use), so the first real cycle meets its time budget; returns the seconds it took. `cpus`, `nodes`: the
    partition's, so that a zoo policy's machine warning, if any, is about the partition, not the warm-up."""
    t0 = time.perf_counter()
    cpus = max(int(cpus), 2)
    jobs = tuple(QueueJob(k, str(k), "warm-up", "PENDING", k, 1, 60.0 * k, 0.0, None, None, 1, 0, "Priority", "(null)",
                          "(null)") for k in (1, 2))
    running = QueueJob(3, "3", "warm-up", "RUNNING", cpus - 1, 1, 600.0, 0.0, 0.0, None, 1, 0, "None", "(null)",
                       "(null)")
    snap = Snapshot(10.0, "warm-up", Machine(cpus - 1, 1, 0, cpus, max(int(nodes), 1), None), jobs, (running,), (), (),
                    jobs={j.job_id: j for j in (*jobs, running)})
    rank(policy, snap, 2)
    return time.perf_counter() - t0


@dataclass
class Ranked:
    """One cycle's ranking: the order, or why there is none."""

    order: list[int] | None
    """Job ids, guard first; None when the policy failed or was too slow."""
    seconds: float
    problem: str | None = None
    decisions: list[dict] = field(default_factory=list)
    """An inspecting policy's decisions, one per proposal (`decision`)."""


class OrderWorker:
    """Runs `rank` in one worker thread with a time budget per cycle.

    A policy still busy from an earlier cycle is not asked again until it returns (its late answer is dropped)."""

    def __init__(self, policy, k: int, timeout_s: float, explainer=None):
        self.policy, self.k, self.timeout_s, self.explainer = policy, k, timeout_s, explainer
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedrl-policy")
        self._busy: concurrent.futures.Future | None = None

    def rank(self, snapshot: Snapshot, first: Sequence[int] = ()) -> Ranked:
        t0 = time.perf_counter()
        if self._busy is not None and not self._busy.done():
            return Ranked(None, 0.0, f"the policy is still busy with an earlier cycle (over {self.timeout_s:g} s)")
        decisions: list[dict] = []
        self._busy = self._pool.submit(rank, self.policy, snapshot, self.k, first, decisions, self.explainer)
        try:
            order = self._busy.result(timeout=self.timeout_s)
        except concurrent.futures.TimeoutError:
            return Ranked(None, time.perf_counter() - t0, f"the policy took over {self.timeout_s:g} s")
        except Exception as e:  # any failure of the policy's own code costs this cycle's order only
            first_line = (str(e).splitlines() or [""])[0][:200]
            return Ranked(None, time.perf_counter() - t0, f"the policy failed: {type(e).__name__}: {first_line}")
        return Ranked(order, time.perf_counter() - t0, decisions=decisions)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def trained_cpus(policy) -> int | None:
    """CPUs of the machine a trained policy's training trace ran on (its run record's trace); None for heuristics and
    rules, which read no machine size."""
    record = getattr(policy, "record", None)
    if record is None:
        return None
    from schedrl.agents import get_agent

    agent = get_agent(record.agent)
    env = agent.env_config_class.from_dict(dict(record.env_config))
    try:
        workload = agent.judge(env).load()
    except (FileNotFoundError, ValueError) as e:
        raise PolicyMachineError(f"cannot tell the machine size {getattr(policy, 'name', 'the policy')} was trained "
                                 f"for: its training trace does not load here ({str(e).splitlines()[0]}); give "
                                 "--trained-cpus N") from None
    return int(workload.max_procs)


def check_machine(policy, usable_cpus: int, tolerance: float, trained: int | None = None) -> str | None:
    """Raise PolicyMachineError if the policy was trained for a machine more than `tolerance` times smaller or
    larger than the partition's usable CPUs; returns a line saying what was checked (None: nothing to check)."""
    trained = trained if trained is not None else trained_cpus(policy)
    if trained is None:
        return None
    name = getattr(policy, "name", type(policy).__name__)
    ratio = max(trained, usable_cpus) / max(min(trained, usable_cpus), 1)
    if ratio > tolerance:
        raise PolicyMachineError(
            f"{name} was trained for a machine of {trained:,} CPUs; this partition has {usable_cpus:,} usable CPUs "
            f"({ratio:.1f}x {'larger' if usable_cpus > trained else 'smaller'}, more than --size-tolerance "
            f"{tolerance:g}): train it on this site's trace (docs/slurm.md)")
    return f"{name}: trained for {trained:,} CPUs, this partition has {usable_cpus:,} (within {tolerance:g}x)"
