"""`DTSim`: DeepRM's discrete-time cluster with RLSchert's runtime re-estimates and kill-and-requeue.

Time moves in steps (5 minutes in RLSchert). At each step the scheduler takes any number of
actions, then the void action moves time on:

- `0 .. num_nw-1`: allocate visible waiting job i. It is placed at the earliest offset of the
  `time_horizon`-step canvas where its estimated length fits (DeepRM); at offset 0 it starts now,
  later it waits in the running queue as a *ready* job (RLSchert §3.3's ready queue).
- `num_nw`: void. Running jobs progress one step; a job finishes after `real` steps of running.
  The canvas is then rebuilt from the current estimates: running jobs from now to now + their
  estimated remaining time (at least one step while they run), ready jobs re-placed at their
  earliest fit in their former order, so ready jobs move when estimates change (RLSchert §3.3:
  "resources will be added or deleted in advance"). Jobs arriving at the new step join the queue.
- `num_nw+1+k`: kill the job in running slot k. It goes back to the end of the waiting queue and
  will restart from zero; a killed running job's pre-run estimate becomes its latest re-estimate
  (RLSchert §4: killed jobs are rescheduled "after re-estimating the runtime"; `requeue_estimate`
  keeps the pre-run one instead). Killing a ready job only undoes its allocation (not counted as a kill).

Invariant: the jobs running at any step never hold more than `res_slot` units, because a job
starts only where the canvas, which counts every running job at offset 0, has room at offset 0.
"""

from __future__ import annotations

import numpy as np

from schedrl.dtsim.canvas import earliest_fit
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.jobs import JobTable
from schedrl.dtsim.metrics import JobRecords
from schedrl.dtsim.sequence import JobSequence


class DTSim:
    """One episode of the discrete-time cluster over a job sequence.

    Per-job state is kept in plain lists indexed by the job's position in the sequence (read them,
    do not write them): `arrival`, `units`, `real`, `len_param` (the estimate a waiting or ready job
    is placed with), `start` (-1 unless running), `elapsed`, `finish`, `kills`, `predictable` (the job
    follows its re-estimates while it runs; `DTSimConfig.predictable`). `queue` lists the
    waiting jobs (the first `num_nw` are visible), `slots` the running queue (-1: empty), `free` the
    canvas (free units at now + offset). Use the methods to change anything.
    """

    def __init__(self, table: JobTable, sequence: JobSequence, config: DTSimConfig = DTSimConfig()) -> None:
        biggest = int(table.units.max())
        if biggest > config.res_slot:
            raise ValueError(f"res_slot={config.res_slot} is smaller than the largest job of {table.source or 'the job table'} "
                             f"({biggest} units); raise res_slot to at least {biggest}")
        if len(sequence) and int(sequence.row.max()) >= len(table):
            raise ValueError(f"the sequence refers to row {int(sequence.row.max())} of a {len(table)}-job table")
        self.config = config
        rows = np.asarray(sequence.row)
        self.n = len(rows)
        self.arrival: list[int] = sequence.arrival.tolist()
        self.units: list[int] = table.units[rows].tolist()
        self.real: list[int] = table.real[rows].tolist()
        self.prerun: list[int] = np.clip(table.prerun[rows], 1, config.job_len).tolist()
        self.len_param: list[int] = list(self.prerun)
        self._preds: list[list[int]] | None = None
        self.predictable: list[bool] = [config.estimates == "running"] * self.n
        """Whether each job follows its recorded re-estimates while it runs (else it keeps `len_param`)."""
        if config.estimates == "running":
            self._preds = [np.clip(table.predictions(r), 1, config.job_len).tolist() for r in rows.tolist()]
            if config.predictable < 1.0:
                if sequence.predictability is None and config.predictable > 0.0:
                    raise ValueError(f"predictable={config.predictable} needs the sequence's predictability draws; "
                                     "draw it with sample_sequence under that config, or give JobSequence.predictability")
                draws = np.zeros(self.n) if sequence.predictability is None else np.asarray(sequence.predictability)
                # an unpredictable job has no re-estimates: it keeps len_param while it runs (as estimates="prerun")
                for j in np.flatnonzero(draws >= config.predictable).tolist():
                    self._preds[j] = []
                    self.predictable[j] = False
        self.start = [-1] * self.n
        self.elapsed = [0] * self.n
        self.finish = [-1] * self.n
        self.kills = [0] * self.n
        self._dropped = [False] * self.n
        self._placed = [-1] * self.n
        self.queue: list[int] = []
        self.slots: list[int] = [-1] * config.num_kill
        self.free = np.full(config.time_horizon, config.res_slot, dtype=np.int64)
        self.now = 0
        self._next = 0
        self._finished = 0
        self._n_dropped = 0
        self._admit()

    # ---- what the scheduler sees -------------------------------------------------------------

    @property
    def visible(self) -> list[int]:
        """The waiting jobs in the visible slots, oldest first (action i allocates visible[i])."""
        return self.queue[:self.config.num_nw]

    @property
    def done(self) -> bool:
        """Every job finished or dropped, or the step cap reached."""
        return self.truncated or (self._next == self.n and not self.queue and self._finished + self._n_dropped == self.n)

    @property
    def truncated(self) -> bool:
        """The episode hit the `max_seq` step cap with jobs unfinished."""
        return self.now >= self.config.max_seq

    def estimate(self, j: int) -> int:
        """Job j's current estimate of its total run time, steps (the recorded re-estimate once it has run)."""
        e = self.elapsed[j]
        if e == 0 or self._preds is None or not self._preds[j]:
            return self.len_param[j]
        p = self._preds[j]
        return p[min(e, len(p)) - 1]

    def remaining(self, j: int) -> int:
        """Estimated steps left for running job j: at least one while it runs."""
        return max(self.estimate(j) - self.elapsed[j], 1)

    def running(self, j: int) -> bool:
        """Job j has started and not finished."""
        return self.start[j] >= 0 and self.finish[j] < 0

    def earliest_fit(self, units: int, length: int) -> int:
        """Earliest canvas offset where `units` are free for `length` steps, or -1 if none within the horizon."""
        return earliest_fit(self.free, units, length)

    def start_offsets(self) -> list[int]:
        """Earliest-fit offset of each visible job (-1: it cannot be allocated now: no room, or no free running slot)."""
        if -1 not in self.slots:
            return [-1] * len(self.visible)
        free, units, lengths = self.free, self.units, self.len_param
        return [earliest_fit(free, units[j], lengths[j]) for j in self.queue[:self.config.num_nw]]

    def valid_actions(self) -> np.ndarray:
        """Boolean mask over the `config.n_actions` actions; all False once the episode is done."""
        cfg = self.config
        mask = np.zeros(cfg.n_actions, dtype=bool)
        if self.done:
            return mask
        for i, offset in enumerate(self.start_offsets()):
            mask[i] = offset >= 0
        mask[cfg.num_nw] = True
        for k, j in enumerate(self.slots):
            mask[cfg.num_nw + 1 + k] = j >= 0
        return mask

    def slowdown_penalty(self) -> float:
        """RLSchert Eq. 9 for the current step: -sum of 1 / estimated length over every job in the system."""
        total = 0.0
        for j in self.slots:
            if j >= 0:
                total += 1.0 / self.estimate(j)
        for j in self.queue:
            total += 1.0 / self.len_param[j]
        return -total

    # ---- acting ------------------------------------------------------------------------------

    def step(self, action: int) -> None:
        """Apply one action; ValueError naming the reason when the mask forbids it."""
        cfg = self.config
        if self.done:
            raise ValueError(f"action {action}: the episode is over (step {self.now})")
        if not 0 <= action < cfg.n_actions:
            raise ValueError(f"action {action} is out of range: 0..{cfg.n_actions - 1} "
                             f"({cfg.num_nw} allocations, void {cfg.num_nw}, {cfg.num_kill} kills)")
        if action < cfg.num_nw:
            self._allocate(action)
        elif action == cfg.num_nw:
            self._advance()
        else:
            self._kill(action - cfg.num_nw - 1)

    def _allocate(self, i: int) -> None:
        if i >= len(self.queue):
            raise ValueError(f"action {i}: visible slot {i} is empty ({len(self.queue)} jobs waiting)")
        if -1 not in self.slots:
            raise ValueError(f"action {i}: all {self.config.num_kill} running slots are held; "
                             "void or kill before allocating")
        j = self.queue[i]
        length = self.len_param[j]
        offset = self.earliest_fit(self.units[j], length)
        if offset < 0:
            raise ValueError(f"action {i}: job {j} ({self.units[j]} units x {length} steps) does not fit "
                             f"within the {self.config.time_horizon}-step horizon")
        del self.queue[i]
        self.slots[self.slots.index(-1)] = j
        self._place(j, offset)

    def _place(self, j: int, offset: int) -> None:
        self.free[offset:offset + self.len_param[j]] -= self.units[j]
        if offset == 0:
            self.start[j] = self.now
            self.elapsed[j] = 0
            self._placed[j] = -1
        else:
            self._placed[j] = self.now + offset

    def _kill(self, k: int) -> None:
        j = self.slots[k]
        if j < 0:
            raise ValueError(f"action {self.config.num_nw + 1 + k}: running slot {k} is empty")
        if self.start[j] >= 0:
            self.kills[j] += 1
            if self.config.requeue_estimate == "latest":
                self.len_param[j] = self.estimate(j)
            self.start[j] = -1
            self.elapsed[j] = 0
        self._placed[j] = -1
        self.slots[k] = -1
        self.queue.append(j)
        self._rebuild()

    def _advance(self) -> None:
        self.now += 1
        for k, j in enumerate(self.slots):
            if j >= 0 and self.start[j] >= 0:
                self.elapsed[j] += 1
                if self.elapsed[j] >= self.real[j]:
                    self.finish[j] = self.now
                    self.slots[k] = -1
                    self._finished += 1
        self._rebuild()
        self._admit()

    def _rebuild(self) -> None:
        """Redraw the canvas from current estimates; re-place ready jobs in their former order."""
        free = self.free
        free[:] = self.config.res_slot
        ready = []
        for j in self.slots:
            if j >= 0:
                if self.start[j] >= 0:
                    free[:self.remaining(j)] -= self.units[j]
                else:
                    ready.append(j)
        if not ready:
            return
        ready.sort(key=lambda j: self._placed[j])
        for j in ready:
            offset = self.earliest_fit(self.units[j], self.len_param[j])
            if offset >= 0:
                self._place(j, offset)
            else:
                # estimates grew until the job no longer fits in the horizon: back to the queue front
                k = self.slots.index(j)
                self.slots[k] = -1
                self._placed[j] = -1
                self.queue.insert(0, j)

    def _admit(self) -> None:
        cap = self.config.num_nw + self.config.backlog
        while self._next < self.n and self.arrival[self._next] <= self.now:
            j = self._next
            if len(self.queue) < cap:
                self.queue.append(j)
            else:
                self._dropped[j] = True
                self._n_dropped += 1
            self._next += 1

    # ---- results -----------------------------------------------------------------------------

    def records(self) -> JobRecords:
        """Per-job records of the episode so far."""
        return JobRecords(arrival=np.array(self.arrival, dtype=np.int64),
                          start=np.array(self.start, dtype=np.int64),
                          finish=np.array(self.finish, dtype=np.int64),
                          real=np.array(self.real, dtype=np.int64),
                          units=np.array(self.units, dtype=np.int64),
                          prerun=np.array(self.prerun, dtype=np.int64),
                          kills=np.array(self.kills, dtype=np.int64),
                          dropped=np.array(self._dropped, dtype=bool))
