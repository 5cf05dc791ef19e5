"""The LP whose duals price `schedrl.bound.lagrange`'s relaxation, kept in one HiGHS instance (highspy), so that each
solve after the first starts from the last one's basis.

Columns: each job's candidate starts (`_Relaxation`'s, and any start a branch's domain ends at, added when first
needed), a column's cost the job's term there, its entries the job's demand times its time in each slot (capacity
rows), 1 (the job's row: its weights add up to 1) and its time in a slot (each row of jobs that cannot all run at
once in that slot, of which the job is one). Every inequality row also has an elastic column, its excess priced at
the whole window's metric at the upper side (`target`), so no LP is infeasible: where no schedule as good as the
upper side fits a branch, the excess is bought, and the bound at those prices passes the upper side.

A branch (`hold`) only changes the columns' upper bounds (0 outside each job's domain), so its solve is HiGHS's dual
simplex from the last basis: on `default`'s third 256-job test window 0.02 s a solve where a solve from nothing took
0.41 s (docs/experiments/bound.md). Rows, once added, stay for every later solve: each is met by every schedule.

`solve` returns the LP's prices, and L (`schedrl.bound.lagrange`'s module docstring) at them is the bound: any prices
>= 0 give one, so an inexact or elastic solve costs tightness, never validity.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np


def _highs():
    """A HiGHS instance that prints nothing: HiGHS writes a banner to the process's standard output from its first
    instance, before any option can be set, so that one is made with the output sent to /dev/null."""
    import highspy

    if getattr(_highs, "quiet", False):
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(devnull)
        _highs.quiet = True
    h.setOptionValue("output_flag", False)
    return h


def _spans(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """first[i], first[i] + 1, ..., first[i] + count[i] - 1 for every i, one after the other."""
    return np.repeat(first, count) + np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)


def _matches(haystack: np.ndarray, needles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i, j) with needles[i] == haystack[j], as (i's, j's), by i."""
    order = np.argsort(haystack, kind="stable")
    a0, a1 = np.searchsorted(haystack[order], needles, "left"), np.searchsorted(haystack[order], needles, "right")
    return np.repeat(np.arange(len(needles)), a1 - a0), order[_spans(a0, a1 - a0)]


def slot_time(bounds: np.ndarray, s: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each interval [s, end)'s time in each slot of `bounds` where it is positive: (interval, slot, seconds)."""
    K = len(bounds) - 1
    lo = np.clip(np.searchsorted(bounds, s, "right") - 1, 0, K - 1)
    hi = np.clip(np.searchsorted(bounds, end, "left") - 1, lo, K - 1)
    count = hi - lo + 1
    col = np.repeat(np.arange(len(s)), count)
    slot = _spans(lo, count)
    sec = np.clip(np.minimum(bounds[slot + 1], end[col]) - np.maximum(bounds[slot], s[col]), 0, None)
    keep = sec > 0
    return col[keep], slot[keep], sec[keep]


@dataclass(frozen=True)
class Priced:
    """One solve: L at its prices (a sum, not a mean), each column's g (its term plus its priced time; `np.inf` where
    the column is not allowed: outside its job's domain, or banned by `PricingLP.fix`), each job's least g, and the
    LP's weights on the columns."""

    value: float
    g: np.ndarray
    mins: np.ndarray
    weights: np.ndarray


class PricingLP:
    """The relaxation `x` (`schedrl.bound.lagrange._Relaxation`) as an LP in HiGHS, for schedules of total metric at
    most `target`."""

    def __init__(self, x, target: float):
        import highspy

        self.x, self.target = x, float(target)
        self.K, self.R, self.m = len(x.length), x.q.shape[1], x.run.size
        self.owner, self.s = x.owner.copy(), x.s.copy()
        self.f = x.f.copy()
        self.row_slot = np.zeros(0, np.int64)
        self.row_most = np.zeros(0)
        self.member_row = np.zeros(0, np.int64)  # (row, job) memberships of the rows of jobs that cannot all run
        self.member_job = np.zeros(0, np.int64)
        self.rows: list[tuple[int, tuple[int, ...], int]] = []
        self.seen: set[tuple[int, tuple[int, ...]]] = set()
        self.h = _highs()
        self.inf = highspy.kHighsInf
        K, R, m = self.K, self.R, self.m
        self.h.addRows(R * K, np.full(R * K, -self.inf), (x.capacity[:, None] * x.length[None, :]).ravel(), 0,
                       np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h.addRows(m, np.ones(m), np.ones(m), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self._elastic(np.arange(R * K))
        self.hcol = np.zeros(0, np.int64)  # each candidate's column in HiGHS (elastic columns come between)
        self._entries = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))  # (column, slot, seconds)
        self._add_columns(np.arange(len(self.s)))
        self.allowed = np.ones(len(self.s), bool)
        self.banned = np.zeros(len(self.s), bool)  # `fix`'s: never allowed again

    def _elastic(self, rows: np.ndarray) -> None:
        n = len(rows)
        self.h.addCols(n, np.full(n, self.target), np.zeros(n), np.full(n, self.inf), n,
                       np.arange(n, dtype=np.int32), rows.astype(np.int32), -np.ones(n))

    def _add_columns(self, cols: np.ndarray) -> None:
        """The columns of the candidates `cols` (positions in owner/s/f) into HiGHS, with their entries in every row
        so far."""
        x, K = self.x, self.K
        o = self.owner[cols]
        col, slot, sec = slot_time(x.bounds, self.s[cols], self.s[cols] + x.p[o])
        rows, vals, at = [], [], []
        for r in range(self.R):
            use = x.q[o[col], r] > 0
            rows.append(r * K + slot[use])
            vals.append(x.q[o[col[use]], r] * sec[use])
            at.append(col[use])
        rows.append(self.R * K + o)
        vals.append(np.ones(len(cols)))
        at.append(np.arange(len(cols)))
        if len(self.row_slot):  # the rows of jobs that cannot all run at once, where the column's job is one
            entry, member = _matches(self.member_job * K + self.row_slot[self.member_row], o[col] * K + slot)
            rows.append(self.R * K + self.m + self.member_row[member])
            vals.append(sec[entry])
            at.append(col[entry])
        at, rows, vals = np.concatenate(at), np.concatenate(rows), np.concatenate(vals)
        order = np.lexsort((rows, at))
        at, rows, vals = at[order], rows[order], vals[order]
        starts = np.searchsorted(at, np.arange(len(cols))).astype(np.int32)
        self.hcol = np.r_[self.hcol, self.h.getNumCol() + np.arange(len(cols))]
        self.h.addCols(len(cols), self.f[cols], np.zeros(len(cols)), np.full(len(cols), self.inf), len(rows),
                       starts, rows.astype(np.int32), vals)
        c0, s0, t0 = self._entries
        self._entries = (np.r_[c0, cols[col]], np.r_[s0, slot], np.r_[t0, sec])

    def add_rows(self, found: list[tuple[int, tuple[int, ...], int]]) -> None:
        """Rows (slot, jobs, how many of them at once) not added before: the jobs' time in the slot at most that many
        times its length, each with its elastic column."""
        found = [(k, jobs, most) for k, jobs, most in found if (k, jobs) not in self.seen]
        if not found:
            return
        K = self.K
        first = len(self.row_slot)
        new_job = np.array([j for _, jobs, _ in found for j in jobs], np.int64)
        new_row = np.repeat(np.arange(len(found)), [len(jobs) for _, jobs, _ in found])
        new_slot = np.array([k for k, _, _ in found], np.int64)
        col, slot, sec = self._entries
        membership, pick = _matches(self.owner[col] * K + slot, new_job * K + new_slot[new_row])
        row_of = new_row[membership]
        # HiGHS takes rows row-wise: sort the entries by row
        by = np.argsort(row_of, kind="stable")
        cols = self.hcol[col[pick]][by].astype(np.int32)
        starts = np.searchsorted(row_of[by], np.arange(len(found))).astype(np.int32)
        most = np.array([float(most) for _, _, most in found])
        self.h.addRows(len(found), np.full(len(found), -self.inf), most * self.x.length[new_slot], len(cols), starts,
                       cols, sec[pick][by])
        self._elastic(self.R * K + self.m + first + np.arange(len(found)))
        for k, jobs, most_ in found:
            self.seen.add((k, jobs))
            self.rows.append((k, jobs, most_))
        self.row_slot = np.r_[self.row_slot, new_slot]
        self.row_most = np.r_[self.row_most, most]
        self.member_row = np.r_[self.member_row, first + new_row]
        self.member_job = np.r_[self.member_job, new_job]

    def hold(self, domains: dict[int, tuple[int, int]]) -> bool:
        """Each job of `domains` (an index into the relaxation's running jobs) held to the starts [first, last] within
        its own [arrival, latest start] (past it: its first start alone, a valid if weak bound), every other job
        released to its own; a domain's ends become candidates where they are not. False where a job is left no
        column: every column of its domain banned by `fix` (a column is added only where none is), so no schedule of
        total metric at most `target` starts it there, and the branch holds none."""
        x = self.x
        lo, hi = x.lo.copy(), x.hi.copy()
        for i, (first, last) in domains.items():
            lo[i], hi[i] = max(lo[i], first), min(hi[i], max(last, first))
        hi = np.maximum(hi, lo)
        ends = [(i, v) for i in domains for v in {lo[i], hi[i]}]
        new = [(i, v) for i, v in ends if not np.any((self.owner == i) & (self.s == v))]
        if new:
            at = len(self.s)
            o = np.array([i for i, _ in new], np.int64)
            v = np.array([v for _, v in new], np.float64)
            d = x.divisor[o]
            self.owner, self.s = np.r_[self.owner, o], np.r_[self.s, v]
            self.f = np.r_[self.f, np.maximum(x.floor, x.floor + (v - x.knee[o]) / d)]
            self.allowed = np.r_[self.allowed, np.ones(len(new), bool)]
            self.banned = np.r_[self.banned, np.zeros(len(new), bool)]
            self._add_columns(np.arange(at, len(self.s)))
        allowed = (self.s >= lo[self.owner]) & (self.s <= hi[self.owner]) & ~self.banned
        changed = np.flatnonzero(allowed != self.allowed)
        if changed.size:
            self.h.changeColsBounds(len(changed), self.hcol[changed].astype(np.int32), np.zeros(len(changed)),
                                    np.where(allowed[changed], self.inf, 0.0))
        self.allowed = allowed
        return bool(np.all(np.bincount(self.owner[allowed], minlength=self.m) > 0))

    def solve(self, time_limit: float) -> Priced | None:
        """The LP solved (from the last basis) within `time_limit` seconds, and L at its duals; None where HiGHS
        stopped without an optimum."""
        import highspy

        x, K, R = self.x, self.K, self.R
        # HiGHS's limit counts every run of the instance: this run may use `time_limit` more
        self.h.setOptionValue("time_limit", float(self.h.getRunTime() + max(time_limit, 0.05)))
        self.h.run()
        if self.h.getModelStatus() == highspy.HighsModelStatus.kUnknown:  # numerical trouble from the basis it
            self.h.clearSolver()  # started from (one branch in 760 on a 128-job window): once more from none
            self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        solution = self.h.getSolution()
        dual = np.maximum(0.0, -np.asarray(solution.row_dual))
        lam = dual[:R * K].reshape(R, K)
        mu = dual[R * K + self.m:]
        price = x.q @ lam  # (m, K): per job, per unit of time in each slot
        np.add.at(price, (self.member_job, self.row_slot[self.member_row]), mu[self.member_row])
        cum = np.concatenate([np.zeros((self.m, 1)), np.cumsum(price * x.length, axis=1)], axis=1)

        def spent(t, o):  # the integral of job o's price from the first boundary to t
            k = np.clip(np.searchsorted(x.bounds, t, "right") - 1, 0, K - 1)
            return cum[o, k] + (t - x.bounds[k]) * price[o, k]

        g = self.f + spent(self.s + x.p[self.owner], self.owner) - spent(self.s, self.owner)
        g = np.where(self.allowed, g, np.inf)
        mins = np.full(self.m, np.inf)
        np.minimum.at(mins, self.owner, g)
        value = float(mins.sum() - (lam * x.capacity[:, None] * x.length).sum()
                      - (mu * self.row_most * x.length[self.row_slot]).sum() + x.constant)
        weights = np.asarray(solution.col_value)[self.hcol]
        return Priced(value=value, g=g, mins=mins, weights=weights)

    def fix(self, priced: Priced) -> int:
        """Reduced-cost fixing at `priced`'s prices, for every later solve: a start whose g exceeds its job's least by
        more than the room left under `target` is used by no schedule of total metric at most `target`; a column is
        banned where its start and both its neighbours' (the job's candidates in start order) are, so that every
        start still allowed lies between two columns kept, and the least of g at any later prices over the columns
        kept is at most its least over the starts allowed (g is linear between neighbours). How many are banned."""
        if priced.value >= self.target:  # the bound passes the upper side already: nothing to fix against
            return 0
        room = self.target - priced.value + priced.mins
        out = priced.g > room[self.owner] + 1e-7 * max(1.0, self.target)
        order = np.lexsort((self.s, self.owner))
        o, out_sorted = self.owner[order], out[order]
        same_left = np.r_[False, o[1:] == o[:-1]]
        same_right = np.r_[o[:-1] == o[1:], False]
        left = np.where(same_left, np.r_[True, out_sorted[:-1]], True)
        right = np.where(same_right, np.r_[out_sorted[1:], True], True)
        banned = np.zeros_like(out)
        banned[order] = out_sorted & left & right
        self.banned |= banned
        return int(banned.sum())

    def basis(self) -> tuple[np.ndarray, np.ndarray]:
        """HiGHS's basis now (each column's and row's status), for `restore`."""
        b = self.h.getBasis()
        return (np.array([int(v) for v in b.col_status], np.int8), np.array([int(v) for v in b.row_status], np.int8))

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        """A basis saved by `basis` put back, the columns added since at their lower bound (0) and the rows added since
        basic; a column's bound is 0 or none, so every column not basic goes to its lower bound."""
        import highspy

        status = highspy.HighsBasisStatus
        cols, rows = saved
        b = highspy.HighsBasis()
        cols = np.r_[cols, np.zeros(self.h.getNumCol() - len(cols), np.int8)]
        b.col_status = [status.kBasic if v == int(status.kBasic) else status.kLower for v in cols]
        b.row_status = [status(int(v)) for v in rows] + [status.kBasic] * (self.h.getNumRow() - len(rows))
        b.valid = True
        self.h.setBasis(b)

    def usage(self, weights: np.ndarray) -> np.ndarray:
        """Each job's time in each slot under the LP's `weights`, over the slot's length: (m, K)."""
        col, slot, sec = self._entries
        used = np.zeros((self.m, self.K))
        np.add.at(used, (self.owner[col], slot), weights[col] * sec)
        return used / self.x.length[None, :]
