"""MRSch's dynamic goal vector (Eq. 1) and the DFP objective it weights.

r_j = Σ_i P_ij·t_i / Σ_j Σ_i P_ij·t_i over the running and queued jobs i, where P_ij is job i's share
of resource j's capacity and t_i its remaining requested time (running) or requested time (queued):
the time the jobs' demand on resource j would take at full use of j, normalised over resources. The
scarcer resource gets the larger weight. Recomputed at every decision.
"""

from __future__ import annotations

import numpy as np

from schedrl.sim.state import QUEUED, RUNNING


def goal_vector(shares: np.ndarray, times: np.ndarray) -> np.ndarray:
    """MRSch Eq. (1): `shares` (N, R) the P_ij, `times` (N,) the t_i -> r (R,), summing to 1.

    With no demand at all (an empty system) every resource gets the same weight."""
    shares = np.asarray(shares, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    if shares.ndim != 2 or times.shape != shares.shape[:1]:
        raise ValueError(f"shares must be (N, R) and times (N,); got {shares.shape} and {times.shape}")
    demand = shares.T @ times
    total = demand.sum()
    if not total > 0:
        return np.full(shares.shape[1], 1.0 / shares.shape[1])
    return demand / total


def sim_goal(sim) -> np.ndarray:
    """The goal vector of a simulator's current state: its running and queued jobs."""
    s = sim.state
    now = sim.now
    jobs = np.flatnonzero((s.status == RUNNING) | (s.status == QUEUED))
    running = s.status[jobs] == RUNNING
    # user-supplied estimates: remaining for running jobs, whole for queued ones (MRSch Table II)
    times = np.where(running, np.maximum(s.start[jobs] + s.est[jobs] - now, 0.0), s.est[jobs])
    return goal_vector(s.req[jobs] / s.cap, times)


def decision_goal(sim, queue_weight: float = 0.0) -> np.ndarray:
    """The goal DFP acts on: Eq. (1) over the resources, then -`queue_weight` for the queue measurement
    when that option (ours) is on."""
    goal = sim_goal(sim)
    return np.append(goal, -float(queue_weight)) if queue_weight > 0 else goal


def objective_weights(goal: np.ndarray, offset_weights) -> np.ndarray:
    """(K, M) weights of DFP's objective Σ_τ Σ_j w_τ·g_j·Δm_{τ,j}: the goal over measurements times
    the temporal weight of each offset (DFP §3: the goal is the measurement weights at every offset)."""
    return np.outer(np.asarray(offset_weights, dtype=np.float64), np.asarray(goal, dtype=np.float64))
