"""The RLScheduler observation: one normalised feature row per visible job (paper §IV-B)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.agents.rlscheduler.job_rows import fill_job_rows
from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE
from schedrl.heuristics.heuristic import HEURISTICS
from schedrl.heuristics.keys import key_ranks
from schedrl.sim.simulator import Simulator
from schedrl.workload.workload import Workload

# per-job columns, then two per extra resource (request, free share), then one per key feature
FEATURES = ("wait", "requested_time", "requested_procs", "user", "group", "app", "can_start_now", "free_procs")

KEY_FEATURE_HEURISTICS = ("fcfs", "sjf", "wfp3", "unicep", "f1", "saf", "smallest", "ljf", "largest")
"""Heuristics whose priority rank can be a feature column (`key_features`): the ones that order jobs by a key."""


def check_key_features(names) -> tuple[str, ...]:
    """`names` as a tuple of known, distinct key-feature heuristics (ValueError naming the valid ones)."""
    names = tuple(str(n).strip().lower() for n in names)
    bad = [n for n in names if n not in KEY_FEATURE_HEURISTICS]
    if bad:
        raise ValueError(f"unknown key feature(s) {', '.join(map(repr, bad))}; choose among "
                         f"{', '.join(KEY_FEATURE_HEURISTICS)} (comma-separated), or none")
    if len(set(names)) != len(names):
        raise ValueError(f"key features repeat a heuristic: {', '.join(names)}")
    return names


ID_FIELDS = ("user", "group", "app")
"""The SWF id columns the observation carries (scaled by the training trace's largest id)."""


@dataclass(frozen=True)
class JobFeatures:
    """Normalisation constants, taken from the training trace and stored with checkpoints, so a policy
    trained on one trace sees the same scales on another (RLScheduler Table VII). Requests are
    normalised by the current machine's capacity, which is a property of the cluster, not the trace."""

    time_scale: float
    """Seconds mapped to 1.0 for requested times and waits (the training trace's largest request)."""
    user_scale: float
    """Largest user id of the training trace (ids above it clip to 1)."""
    group_scale: float
    """Largest group id."""
    app_scale: float
    """Largest executable id."""
    log_times: bool = True
    """Map waits and requested times through log1p before scaling. Job times span 1 s to days, so on a
    linear scale nearly every job sits near 0 and the small kernel network struggles to tell a 1-minute
    job from a 1-hour one; on a log scale they are far apart (our choice; the paper scales linearly)."""
    id_fields: tuple[str, ...] = ID_FIELDS
    """The id columns the training trace has (SWF writes -1 where a log has none). A column the training
    trace lacks was 0 in every observation the policy learned from, so it stays 0 on every trace: on a
    trace that has the ids they would otherwise clip to 1, an input the network never saw, whose first-layer
    weights training never moved from their random start (Lublin-model traces have no ids; PWA logs do)."""

    @classmethod
    def from_trace(cls, workload: Workload) -> "JobFeatures":
        def scale(column: np.ndarray) -> float:
            return float(max(column.max(initial=0), 1))

        ids = tuple(name for name in ID_FIELDS if getattr(workload, name).max(initial=-1) >= 1)
        return cls(scale(workload.time_req), scale(workload.user), scale(workload.group), scale(workload.app),
                   id_fields=ids)

    @classmethod
    def from_dict(cls, d) -> "JobFeatures":
        scales = {k: float(d[k]) for k in ("time_scale", "user_scale", "group_scale", "app_scale")}
        if "id_fields" in d:
            ids = tuple(str(name) for name in d["id_fields"])
            bad = [name for name in ids if name not in ID_FIELDS]
            if bad:
                raise ValueError(f"norm: unknown id field(s) {', '.join(map(repr, bad))}; "
                                 f"known: {', '.join(ID_FIELDS)}")
        else:
            # recorded before 2026-11-26: an id column the trace lacked was stored with scale 1 (its largest
            # id, -1, raised to 1); a trace whose only id is 1 looks the same and is read as lacking it too
            ids = tuple(name for name in ID_FIELDS if scales[f"{name}_scale"] > 1)
        return cls(**scales, log_times=bool(d.get("log_times", True)), id_fields=ids)

    def to_dict(self) -> dict:
        return {"time_scale": self.time_scale, "user_scale": self.user_scale,
                "group_scale": self.group_scale, "app_scale": self.app_scale, "log_times": self.log_times,
                "id_fields": list(self.id_fields)}


def n_features(n_resources: int, n_keys: int = 0) -> int:
    """Feature columns for a machine with `n_resources` resources and `n_keys` key features."""
    return len(FEATURES) + 2 * (n_resources - 1) + n_keys


class ObservationBuilder:
    """Fills the (MAX_OBSV_SIZE, F) job matrix and the action mask from the simulator state."""

    def __init__(self, workload: Workload, norm: JobFeatures, n_resources: int, key_features: tuple[str, ...] = ()):
        def ids(name: str) -> np.ndarray:
            column = np.asarray(getattr(workload, name), dtype=np.float64)
            if name not in norm.id_fields:  # the training trace had none: 0, as in training
                return np.zeros_like(column)
            return np.clip(column / getattr(norm, f"{name}_scale"), 0.0, 1.0)

        # static per-job columns, computed once per sequence
        self.user, self.group, self.app = (ids(name) for name in ID_FIELDS)
        self.time_scale = norm.time_scale
        self.log_times = norm.log_times
        self.n_resources = n_resources
        # key features: 1 / (1 + rank) of each visible job under a heuristic's priority key, so 1 for the
        # heuristic's first choice, 1/2 for its second: far apart where a choice is made (rank / queue length
        # put the first two choices 1/127 apart, and a clone by cross-entropy agreed with F1 on only 93%)
        self.key_kinds = tuple(HEURISTICS[name][0] for name in check_key_features(key_features))
        self.procs = np.asarray(workload.procs_req, dtype=np.float64)
        self.key_column = n_features(n_resources)  # the first key-feature column
        self.jobs = np.zeros((MAX_OBSV_SIZE, n_features(n_resources, len(self.key_kinds))), dtype=np.float32)
        self.mask = np.zeros(MAX_OBSV_SIZE, dtype=np.float32)
        self._visible = np.zeros(MAX_OBSV_SIZE, dtype=np.int64)

    def build(self, sim: Simulator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(jobs matrix, mask, visible job indices); the first MAX_OBSV_SIZE queued jobs in FCFS order (§IV-B)."""
        m = self.jobs
        k = fill_job_rows(sim.state_ref, m, self.mask, self._visible, self.user, self.group, self.app,
                          float(self.time_scale), bool(self.log_times))
        visible = self._visible[:k].copy()
        if self.key_kinds and k:
            for i, kind in enumerate(self.key_kinds):
                m[:k, self.key_column + i] = 1.0 / (1.0 + key_ranks(kind, sim.state_ref, visible, sim.now, self.procs))
        return m.copy(), self.mask.copy(), visible
