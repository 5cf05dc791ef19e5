"""RLSchert's state (§3.4, Figure 3), action mask and imitation teacher over a `DTSim` (numpy only).

`StateView` wraps one `DTSim` episode; the env and the trained policy (`policy.py`) both see the
cluster through it, so training and evaluation build the same observation and the same mask.

## Observation layout (defaults: res_slot R = 20, num_nw 5, job_width 10, horizon H = 120, backlog 600)

`image`, shape (H, R + num_nw x job_width + ceil(backlog / H)) = (120, 75), values 0 or 1, row t = t
steps from now (DeepRM's image; RLSchert's Figure 3 left part):

| columns | content |
|---|---|
| 0 .. R-1 | cluster canvas: cell (t, u) = 1 when u < R - free[t], i.e. the units allocated at offset t (running jobs for their estimated remaining time, ready jobs where they are placed), packed to the left (DeepRM colours each job; `DTSim` keeps counts, so we draw occupancy) |
| R + i·w .. R + (i+1)·w - 1, w = min(job_width, R) | visible waiting job i (i < num_nw): cell (t, u) = 1 for t < its estimated length (`len_param`), u < its units; zeros for an empty slot |
| R + num_nw·w .. | backlog: the k-th waiting job behind the visible ones sets cell (k mod H, R + num_nw·w + k div H) (DeepRM's backlog block) |

`running`, shape (num_kill, 7), row k = running-queue slot k (zeros when empty), steps divided by `job_len`:

| column | feature | RLSchert §3.4 |
|---|---|---|
| 0 | `len_param` / job_len: the estimate the job was placed with (its pre-run prediction; after a kill, the re-estimate it was requeued with) | S1, pre-run prediction |
| 1 | elapsed steps / job_len (0 for a ready job) | S2, elapsed |
| 2 | (current estimate - len_param) / len_param, clipped to [-1, 10] | S3, relative prediction change |
| 3 | current estimate / job_len | S4, current prediction |
| 4 | (now - arrival) / horizon: the job's time in the system since it entered | S5, entry time |
| 5 | units / res_slot | the job's size (the brief's sixth feature) |
| 6 | 1.0 running, 0.5 ready (allocated at a later offset), 0.0 empty slot | ours: tells kill-a-run from undo-an-allocation |

`extra`, shape (1,): steps since the latest arrival / horizon, clipped to 1 (§3.4's last column).
`action_mask`, shape (n_actions,): 1.0 for valid actions. `teacher`, shape (n_actions,): one-hot of
the teacher's action (the imitation target; the modules ignore it).

## Actions and masks

0 .. num_nw-1 allocate visible job i, num_nw void (advance one step), num_nw + 1 + k kill running
slot k (only with `kill`). Valid: `DTSim.valid_actions()`, and additionally a slot may not be killed
at the step its job was allocated (ours: without this an agent could allocate and kill the same job
forever without time moving on). The void action is always valid until the episode ends.

## Teacher (RLSchert §3.5)

The rule-based kill policy (`KillRule`, §3.3) when it names a job (kill envs only), else SAF's
allocation (smallest len_param x units among the jobs that can start now), else void.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.keys import OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING, OBS_TEACHER
from schedrl.dtsim import DTSim
from schedrl.dtsim.heuristics import SAF, KillRule, SAFHold

RUNNING_FEATURES = 7
"""Columns of the `running` block (table above)."""
# RLSchert §3.3: the relative change of a misestimated job is "> 1"; larger ones carry no more information
MAX_RELATIVE_CHANGE = 10.0


def backlog_columns(config: RLSchertEnvConfig) -> int:
    """Columns of the backlog block: ceil(backlog / horizon) (DeepRM)."""
    return math.ceil(config.backlog / config.horizon)


def image_shape(config: RLSchertEnvConfig) -> tuple[int, int]:
    """(horizon, res_slot + num_nw x job_width + backlog columns)."""
    return config.horizon, config.res_slot + config.num_nw * config.image_job_width + backlog_columns(config)


class StateView:
    """One `DTSim` episode as RLSchert's agent sees it: observation, mask, teacher; `step` applies an action."""

    def __init__(self, sim: DTSim, config: RLSchertEnvConfig):
        if sim.config != config.dtsim_config():
            raise ValueError("StateView: the sim's DTSimConfig differs from the env config's")
        self.sim = sim
        self.config = config
        self.n_actions = config.n_actions
        self._now = sim.now
        self._allocated_now: set[int] = set()
        self._saf = SAFHold() if config.teacher == "saf-hold" else SAF()
        self._rule = KillRule()

    def _sync(self) -> None:
        if self.sim.now != self._now:
            self._now = self.sim.now
            self._allocated_now.clear()

    # ---- masks and teacher ---------------------------------------------------------------------

    def mask(self) -> np.ndarray:
        """Boolean mask over the `n_actions` actions (all False once the episode is done)."""
        self._sync()
        sim, cfg = self.sim, self.config
        valid = sim.valid_actions()[:self.n_actions].copy()
        if cfg.kill:
            for k, j in enumerate(sim.slots):
                if j >= 0 and j in self._allocated_now:
                    valid[cfg.num_nw + 1 + k] = False
        if cfg.work_conserving and valid.any() and 0 in sim.start_offsets():
            valid[cfg.num_nw] = False  # no idling while a visible job can start now
        return valid

    def teacher(self, mask: np.ndarray | None = None) -> int:
        """The teacher's action now: the kill rule's kill, else SAF's allocation (or SAF + hold's, with the
        `saf-hold` teacher), else void (RLSchert §3.5)."""
        mask = self.mask() if mask is None else mask
        if not mask.any():
            return self.config.num_nw
        if self.config.kill:
            kill = self._rule.kill_action(self.sim)
            if kill is not None and mask[kill]:
                return kill
        action = self._saf.act(self.sim)
        return action if mask[action] else self.config.num_nw

    # ---- observation ---------------------------------------------------------------------------

    def image(self) -> np.ndarray:
        """The (horizon, columns) DeepRM image."""
        sim, cfg = self.sim, self.config
        h, width = image_shape(cfg)
        out = np.zeros((h, width), dtype=np.float32)
        used = cfg.res_slot - sim.free
        out[:, :cfg.res_slot] = np.arange(cfg.res_slot)[None, :] < used[:, None]
        base = cfg.res_slot
        for i, j in enumerate(sim.visible):
            left = base + i * cfg.image_job_width
            out[:sim.len_param[j], left:left + sim.units[j]] = 1.0
        waiting = len(sim.queue) - cfg.num_nw
        if waiting > 0:
            left = base + cfg.num_nw * cfg.image_job_width
            k = np.arange(min(waiting, h * backlog_columns(cfg)))
            out[k % h, left + k // h] = 1.0
        return out

    def running(self) -> np.ndarray:
        """The (num_kill, RUNNING_FEATURES) running-queue features."""
        sim, cfg = self.sim, self.config
        out = np.zeros((cfg.num_kill, RUNNING_FEATURES), dtype=np.float32)
        for k, j in enumerate(sim.slots):
            if j < 0:
                continue
            lp, est = sim.len_param[j], sim.estimate(j)
            out[k] = (lp / cfg.job_len, sim.elapsed[j] / cfg.job_len,
                      min(max((est - lp) / lp, -1.0), MAX_RELATIVE_CHANGE), est / cfg.job_len,
                      (sim.now - sim.arrival[j]) / cfg.horizon, sim.units[j] / cfg.res_slot,
                      1.0 if sim.running(j) else 0.5)
        return out

    def extra(self) -> np.ndarray:
        """(1,): steps since the latest arrival / horizon, clipped to 1."""
        sim = self.sim
        latest = bisect.bisect_right(sim.arrival, sim.now) - 1
        since = sim.now - sim.arrival[latest] if latest >= 0 else sim.now
        return np.array([min(since / self.config.horizon, 1.0)], dtype=np.float32)

    def observe(self, mask: np.ndarray | None = None, teacher: int | None = None) -> dict[str, np.ndarray]:
        """The Dict observation (keys in `keys.py`)."""
        mask = self.mask() if mask is None else mask
        teacher = self.teacher(mask) if teacher is None else teacher
        one_hot = np.zeros(self.n_actions, dtype=np.float32)
        one_hot[teacher] = 1.0
        return {OBS_IMAGE: self.image(), OBS_RUNNING: self.running(), OBS_EXTRA: self.extra(),
                OBS_ACTION_MASK: mask.astype(np.float32), OBS_TEACHER: one_hot}

    # ---- acting --------------------------------------------------------------------------------

    def note(self, action: int) -> None:
        """Record that `action` is about to be applied to the sim (by `step`, or by `dtsim.heuristics.run`)."""
        self._sync()
        if action < self.config.num_nw and action < len(self.sim.visible):
            self._allocated_now.add(self.sim.visible[action])

    def step(self, action: int) -> None:
        """Apply `action`; ValueError naming the reason when it is masked."""
        action = int(action)
        mask = self.mask()
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} is out of range 0..{self.n_actions - 1}")
        if not mask[action]:
            cfg = self.config
            if action > cfg.num_nw and self.sim.slots[action - cfg.num_nw - 1] in self._allocated_now:
                raise ValueError(f"action {action}: the job in running slot {action - cfg.num_nw - 1} was allocated at "
                                 "this step and cannot be killed before time moves on")
            if action == cfg.num_nw:
                raise ValueError(f"action {action} (void): work_conserving forbids idling while a visible job can "
                                 "start now")
            self.sim.step(action)  # raises ValueError with the cluster's own reason
            raise AssertionError("unreachable: a masked action was accepted by the sim")
        self.note(action)
        self.sim.step(action)
