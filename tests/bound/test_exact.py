"""CP-SAT against the brute force (every order of the serial schedule-generation scheme) on tiny windows, and the
lower bounds never above the optimum."""

from __future__ import annotations

import numpy as np
import pytest
from instances import brute_force, make_workload, random_problem

from schedrl.bound.lower import load_bound, mean_busy_times, trivial_bound
from schedrl.bound.problem import infeasible, objective, window_problem
from schedrl.bound.sgs import serial
from schedrl.sim import SimConfig

pytest.importorskip("ortools")
pytest.importorskip("highspy")


def test_the_serial_scheme_goes_back_into_holes():
    # job 1 holds 2 of 3 procs over [0, 10); job 2 (3 procs) must wait for it; job 3 (1 proc, 5 s) placed last fits
    # in the hole beside job 1 before job 2, which plain list scheduling in order would not use
    wl = make_workload([0, 0, 0], [10, 10, 5], [10, 10, 5], [2, 3, 1], 3)
    p = window_problem(wl, SimConfig(), "wait")
    assert serial(p, [0, 1, 2]).tolist() == [0, 10, 0]
    assert serial(p, [1, 0, 2]).tolist() == [10, 0, 10]


def test_the_lp_schedule_by_hand():
    # one machine: job 0 (length 4) at 0, job 1 (length 1, heavier per unit) at 1 preempts it
    mean = mean_busy_times(np.array([0.0, 1.0]), np.array([4.0, 1.0]), np.array([1.0, 1.0]))
    assert mean[1] == pytest.approx(1.5)
    assert mean[0] == pytest.approx((1 * 0.5 + 3 * 3.5) / 4)


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_cpsat_finds_the_brute_force_optimum(metric):
    from schedrl.bound.windows import bound_window

    rng = np.random.default_rng(11 if metric == "bsld" else 12)
    sizes = [5, 6, 6, 7]
    for n in sizes:
        p = random_problem(rng, n, metric, capacity=4)
        best, arg = brute_force(p)
        assert infeasible(p, arg) is None
        fcfs = serial(p, np.argsort(p.release, kind="stable"))  # a feasible (poor) warm start
        w = bound_window(p, {"order": _Sched(fcfs + p.origin)}, time_limit=20, workers=1)
        assert w.status == "OPTIMAL", w
        assert w.upper == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert w.lower == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert trivial_bound(p) <= load_bound(p) + 1e-12 and load_bound(p) <= best + 1e-9
        assert objective(p, w.schedule - p.origin) == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_the_load_bound_beats_the_trivial_one_on_an_overloaded_window_and_stays_below_the_optimum():
    # five 2-proc, 20 s jobs at once on a 2-proc machine: waits 0, 20, 40, 60, 80 at best
    wl = make_workload([0] * 5, [20] * 5, [20] * 5, [2] * 5, 2)
    p = window_problem(wl, SimConfig(), "wait")
    assert brute_force(p)[0] == 40.0
    assert load_bound(p) == pytest.approx(40.0)  # exact here: the machine is one job wide
    q = window_problem(wl, SimConfig(), "bsld")
    assert 1.0 < load_bound(q) <= brute_force(q)[0] + 1e-12


def test_time_limit_zero_keeps_the_best_warm_start_and_the_solver_free_bounds():
    from schedrl.bound.windows import bound_window, offline_starts

    p = random_problem(np.random.default_rng(5), 6, "wait")
    a = serial(p, range(p.n))
    b = serial(p, range(p.n - 1, -1, -1))
    offline = offline_starts(p)
    assert set(offline) == {"offline SGS by run time", "offline SGS by area"}
    w = bound_window(p, {"a": _Sched(a + p.origin), "b": _Sched(b + p.origin)}, time_limit=0, lagrange_slots=0)
    assert w.status == "not run" and set(w.lowers) == {"trivial", "load"}
    assert set(w.warm) == {"a", "b"} | set(offline)
    assert w.upper == min(objective(p, a), objective(p, b), *(objective(p, s) for s in offline.values()))
    priced = bound_window(p, {"a": _Sched(a + p.origin)}, time_limit=0)
    assert set(priced.lowers) == {"trivial", "load", "cuts"} and priced.lower <= brute_force(p)[0] + 1e-9
    both = bound_window(p, {"a": _Sched(a + p.origin)}, time_limit=0, lp_slots=64)
    assert set(both.lowers) == {"trivial", "load", "cuts", "lp"} and both.lower <= brute_force(p)[0] + 1e-9
    plain = bound_window(p, {"a": _Sched(a + p.origin)}, time_limit=0, cut_rounds=0)
    assert plain.lowers["cuts"] <= priced.lowers["cuts"] + 1e-9 <= brute_force(p)[0] + 2e-9
    with pytest.raises(ValueError, match="the schedule of bad is not one of the window's offline problem: job"):
        bound_window(p, {"bad": _Sched(np.full(p.n, p.origin - 1.0))}, time_limit=0)


class _Sched:
    """A schedule as `bound_window` reads one: its start times (trace clock)."""

    def __init__(self, start):
        self.start = np.asarray(start, dtype=np.float64)


def test_the_slices_bound_stays_below_the_optimum():
    from schedrl.bound.decompose import slice_lower, slices

    rng = np.random.default_rng(21)
    for metric in ("bsld", "wait"):
        for _ in range(3):
            p = random_problem(rng, 6, metric, capacity=3)
            best, _ = brute_force(p)
            assert [len(s) for s in slices(p, 4)] == [4, 2]
            assert trivial_bound(p) <= slice_lower(p, 4, time_limit=10, workers=1) <= best + 1e-9
            # each slice solved as a window is: the local search, the Lagrangian and its fixing, CP-SAT
            full = slice_lower(p, 4, time_limit=10, workers=1, lns=0.5, lagrange_slots=64)
            assert trivial_bound(p) <= full <= best + 1e-9


def test_fixed_jobs_hold_their_capacity():
    from schedrl.bound import cpsat

    wl = make_workload([0, 5], [10, 10], [10, 10], [2, 1], 3)
    p = window_problem(wl, SimConfig(), "wait")
    alone = cpsat.solve(p, np.array([0, 5]), 0.0, time_limit=5, workers=1)
    assert alone.start.tolist() == [0, 5] and alone.status == "OPTIMAL"
    # a placed 2-proc job over [0, 20): the 2-proc job waits for it, the 1-proc one fits beside
    fixed = (np.array([0]), np.array([20]), np.array([[2]]))
    held = cpsat.solve(p, np.array([20, 5]), 10.0, time_limit=5, workers=1, fixed=fixed)
    assert held.start.tolist() == [20, 5] and held.lower == pytest.approx(10.0)


def test_a_second_resource_in_hundredths_is_a_second_cumulative():
    from schedrl.bound.windows import bound_window

    rng = np.random.default_rng(31)
    for metric in ("bsld", "wait"):
        base = random_problem(rng, 6, metric, capacity=4)
        bb = np.round(rng.uniform(0.5, 2.0, base.n), 2)  # MRSch's burst buffer: hundredths
        wl = base.workload.with_resources({"bb": bb}, capacity={"bb": 2.5})
        p = window_problem(wl, SimConfig(), metric)
        assert p.resources == ("procs", "bb") and p.capacity.tolist() == [4, 250]
        assert p.demand[:, 1].tolist() == [int(round(100 * b)) for b in bb]
        best, _ = brute_force(p)
        w = bound_window(p, {"order": _Sched(serial(p, range(p.n)) + p.origin)}, time_limit=20, workers=1)
        assert w.status == "OPTIMAL" and w.upper == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_the_profile_scheme_builds_the_serial_schemes_schedule():
    from schedrl.bound.sgs import profile_serial

    rng = np.random.default_rng(41)
    for _ in range(200):
        p = random_problem(rng, int(rng.integers(1, 9)), "bsld", capacity=int(rng.integers(1, 6)))
        order = rng.permutation(p.n)
        assert profile_serial(p, order).tolist() == serial(p, order).tolist()


def _relaxations(p, upper, until):
    """Every variant of the two relaxations on one window: the LP by slots (coarse: 3; one per arrival: 64), with and
    without the start slots and the even slots up to `until`; the Lagrangian by price slots and steps."""
    from schedrl.bound.lagrange import lagrangian_bound
    from schedrl.bound.lp import lp_bound

    for slots in (3, 64):
        for starts, end in ((False, None), (True, None), (False, until), (True, until)):
            b = lp_bound(p, upper, slots=slots, starts=starts, until=end)
            assert b.status == "optimal"
            yield ("lp", slots, starts, end), b.lower
    for slots, steps in ((2, 5), (64, 200)):
        yield ("lagrange", slots, steps), lagrangian_bound(p, upper, slots=slots, iterations=steps, until=until).lower


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_relaxations_stay_below_the_optimum(metric):
    # the LP's and the Lagrangian's every variant, with the optimum itself as the upper side (the tightest horizon)
    # and with a poor schedule's, on windows small enough for the brute force
    rng = np.random.default_rng(51 if metric == "bsld" else 52)
    beat = {"lp": 0, "lagrange": 0}
    for n in (4, 5, 6, 7):
        p = random_problem(rng, n, metric, capacity=int(rng.integers(2, 5)))
        best, arg = brute_force(p)
        poor = objective(p, serial(p, np.argsort(-p.duration, kind="stable")))
        for upper in (best, poor):
            for variant, lower in _relaxations(p, upper, int((arg + p.duration).max())):
                assert trivial_bound(p) <= lower <= best + 1e-9, (n, upper, variant, lower, best)
                beat[variant[0]] += lower > trivial_bound(p) + 1e-6
    assert min(beat.values()) > 0  # neither bound is the trivial one everywhere


def test_the_lp_bound_sees_the_backlog_on_a_machine_one_job_wide():
    # five 2-proc, 20 s jobs at once on a 2-proc machine: waits 0, 20, 40, 60, 80 (mean 40); even slots of 3.125 s
    # up to the schedule's end at 100 s bring the LP within the slots' width of it
    from schedrl.bound.lp import lp_bound

    wl = make_workload([0] * 5, [20] * 5, [20] * 5, [2] * 5, 2)
    p = window_problem(wl, SimConfig(), "wait")
    assert 40.0 - 3.125 <= lp_bound(p, 40.0, slots=64, until=100).lower <= 40.0 + 1e-9
    assert lp_bound(p, 40.0, slots=64).lower < 40.0 - 10  # without `until`, the tail's coarse slots lose a lot
    q = window_problem(wl, SimConfig(), "bsld")
    best = brute_force(q)[0]
    assert 1.0 < lp_bound(q, best, slots=64, until=100).lower <= best + 1e-9


def test_the_lagrangian_bound_prices_the_backlog():
    # five 2-proc, 20 s jobs at once on a 2-proc machine: mean wait 40 at best; each job whole, priced per slot
    from schedrl.bound.lagrange import lagrangian_bound

    wl = make_workload([0] * 5, [20] * 5, [20] * 5, [2] * 5, 2)
    p = window_problem(wl, SimConfig(), "wait")
    b = lagrangian_bound(p, 40.0, slots=64, iterations=2000, until=100)
    assert 35.0 <= b.lower <= 40.0 + 1e-9


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_lagranges_fixing_keeps_every_schedule_as_good_as_the_upper_side(metric):
    # reduced-cost fixing may only cut starts no schedule of metric <= upper uses: every active schedule (each order
    # of the serial scheme) at or under the optimum or a poor schedule's metric has each start inside its job's rows
    import itertools

    from schedrl.bound.cpsat import latest_starts
    from schedrl.bound.lagrange import lagrangian_bound

    rng = np.random.default_rng(61 if metric == "bsld" else 62)
    cut = 0
    for n in (4, 5, 6):
        p = random_problem(rng, n, metric, capacity=int(rng.integers(2, 5)))
        best, arg = brute_force(p)
        schedules = [serial(p, order) for order in itertools.permutations(range(n))]
        values = [objective(p, s) for s in schedules]
        for upper in (best, sorted(values)[len(values) // 2]):
            fixed = lagrangian_bound(p, upper, slots=64, iterations=200, until=int((arg + p.duration).max()),
                                     fix=True)
            assert fixed.lower <= best + 1e-9
            for s, v in zip(schedules, values):
                if v <= upper + 1e-12:
                    for j in range(n):
                        rows = fixed.starts[j]
                        assert ((rows[:, 0] <= s[j]) & (s[j] <= rows[:, 1])).any(), (n, upper, j, s[j], rows)
            room = int((latest_starts(p, upper) - p.release + 1).sum())
            cut += sum(int((r[:, 1] - r[:, 0] + 1).sum()) for r in fixed.starts) < room
    assert cut > 0  # the fixing cuts starts the latest starts alone leave


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_local_search_keeps_a_feasible_schedule_never_worse_and_reaches_the_optimum(metric):
    from schedrl.bound.lns import search
    from schedrl.bound.problem import replay

    rng = np.random.default_rng(71 if metric == "bsld" else 72)
    for n in (6, 7):
        p = random_problem(rng, n, metric, capacity=3)
        best, _ = brute_force(p)
        poor = serial(p, np.argsort(-p.duration, kind="stable"))
        # neighbourhoods of 3 of the jobs: never worse, every kept schedule feasible and scored as replay scores it
        small = search(p, poor, time_limit=1.0, size=3, step=0.2, seed=1)
        assert infeasible(p, small.start) is None
        assert small.value == pytest.approx(replay(p, small.start)) and small.value <= objective(p, poor) + 1e-12
        assert small.value >= best - 1e-9
        # the whole window as one neighbourhood: CP-SAT's optimum, and the search stops there
        whole = search(p, poor, time_limit=30.0, size=n, step=10.0)
        assert whole.value == pytest.approx(best, rel=1e-9, abs=1e-9) and whole.neighbourhoods == 1
        twice = [search(p, poor, time_limit=30.0, size=3, work=0.5, seed=2).start.tolist() for _ in range(2)]
        assert twice[0] == twice[1]  # a deterministic limit: the same search twice


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_conflict_cuts_stay_below_the_optimum_fix_no_good_schedule_and_beat_the_plain_lagrangian(metric):
    # cut_bound (the LP dual's prices with conflicting pairs' rows, and with covers' rows) on many tiny random windows,
    # with the optimum and a poor schedule as the upper side: never above the brute-force optimum, never under the
    # trivial bound, its fixing keeps every active schedule as good as the upper side, and it is above the
    # subgradient's bound somewhere
    import itertools

    from schedrl.bound.lagrange import cut_bound, lagrangian_bound

    rng = np.random.default_rng(81 if metric == "bsld" else 82)
    stronger = checked = covered = 0
    for n in (4, 4, 5, 5, 6, 6, 6, 7):
        p = random_problem(rng, n, metric, capacity=int(rng.integers(2, 5)))
        best, arg = brute_force(p)
        until = int((arg + p.duration).max())
        schedules = [serial(p, order) for order in itertools.permutations(range(n))] if n <= 6 else []
        values = [objective(p, s) for s in schedules]
        poor = objective(p, serial(p, np.argsort(-p.duration, kind="stable")))
        for upper in (best, poor):
            pairs = {}
            for slots, covers in ((2, False), (64, False), (64, True)):
                cut = cut_bound(p, upper, slots=slots, until=until, fix=True, covers=covers)
                assert trivial_bound(p) <= cut.lower <= best + 1e-9, (n, upper, slots, covers, cut, best)
                if covers:  # more rows: an LP optimum at least the pairs' alone
                    assert cut.lower >= pairs[slots] - 1e-6
                    covered += cut.lower > pairs[slots] + 1e-4
                else:
                    pairs[slots] = cut.lower
                    plain = lagrangian_bound(p, upper, slots=slots, iterations=500, until=until)
                    stronger += cut.lower > plain.lower + 1e-4
                for s, v in zip(schedules, values):
                    if v <= upper + 1e-12:
                        checked += 1
                        for j in range(n):
                            rows = cut.starts[j]
                            assert ((rows[:, 0] <= s[j]) & (s[j] <= rows[:, 1])).any(), (n, upper, j, s[j], rows)
    assert stronger > 0 and checked > 0, (stronger, checked, covered)


def test_the_conflict_cuts_see_that_a_full_machine_job_cannot_run_beside_another():
    # 4 processors: a 1-processor job of 100 s and a 4-processor job of 10 s arrive at 0; the best is the wide job
    # first (mean wait 5). The plain relaxation runs the wide job 3/4 of the way beside the narrow one and pays little.
    from schedrl.bound.lagrange import cut_bound, lagrangian_bound

    wl = make_workload([0, 0], [100, 10], [100, 10], [1, 4], 4)
    p = window_problem(wl, SimConfig(), "wait")
    assert brute_force(p)[0] == 5.0
    plain = lagrangian_bound(p, 5.0, slots=64, iterations=2000, until=110).lower
    cut = cut_bound(p, 5.0, slots=64, until=110)
    assert plain < 4.0 and 4.5 <= cut.lower <= 5.0 + 1e-9 and cut.cuts > 0, (plain, cut)


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_covers_rows_stay_below_the_optimum_fix_no_good_schedule_and_beat_the_pairs_somewhere(metric):
    # on 6 processors, where three jobs can exceed the machine while every two of them fit: cut_bound with the covers'
    # rows is never above the brute-force optimum nor under the pairs' bound, and its fixing keeps every active
    # schedule at or under the optimum
    import itertools

    from schedrl.bound.lagrange import cut_bound

    rng = np.random.default_rng(91 if metric == "bsld" else 92)
    covered = 0
    for n in (5, 6, 6, 7):
        p = random_problem(rng, n, metric, capacity=6)
        best, arg = brute_force(p)
        until = int((arg + p.duration).max())
        pairs = cut_bound(p, best, slots=64, until=until).lower
        cut = cut_bound(p, best, slots=64, until=until, covers=True, fix=True)
        assert pairs - 1e-6 <= cut.lower <= best + 1e-9, (n, pairs, cut, best)
        covered += cut.lower > pairs + 1e-4
        for order in itertools.permutations(range(n)) if n <= 6 else ():
            s = serial(p, order)
            if objective(p, s) <= best + 1e-12:
                for j in range(n):
                    rows = cut.starts[j]
                    assert ((rows[:, 0] <= s[j]) & (s[j] <= rows[:, 1])).any(), (n, j, s[j], rows)
    assert covered > 0


def _tiny(p, active: bool = True):
    """A tiny window's brute-force optimum, the horizon of its optimal schedule, every active schedule (`active` and
    at most 6 jobs) with its metric, and a poor schedule's metric (every job by longest first)."""
    import itertools

    best, arg = brute_force(p)
    schedules = [serial(p, order) for order in itertools.permutations(range(p.n))] if active and p.n <= 6 else []
    poor = objective(p, serial(p, np.argsort(-p.duration, kind="stable")))
    return best, int((arg + p.duration).max()), schedules, [objective(p, s) for s in schedules], poor


def _kept(fixed, schedules, values, upper) -> int:
    """Asserts that the fixing's rows keep every active schedule at or under `upper`; how many such schedules."""
    checked = 0
    for s, v in zip(schedules, values):
        if v <= upper + 1e-12:
            checked += 1
            for j in range(len(s)):
                rows = fixed.starts[j]
                assert ((rows[:, 0] <= s[j]) & (s[j] <= rows[:, 1])).any(), (upper, j, s[j], rows)
    return checked


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_widest_sets_rows_stay_below_the_optimum_fix_no_good_schedule_and_beat_the_covers_somewhere(metric):
    # on 6 processors: cut_bound with the rows of each slot's widest jobs (at most as many of them at once as fit)
    # is never above the brute-force optimum (with the optimum and a poor schedule as the upper side) nor under the
    # covers' bound, and its fixing keeps every active schedule at or under the upper side
    from schedrl.bound.lagrange import cut_bound

    rng = np.random.default_rng(101 if metric == "bsld" else 102)
    stronger = checked = 0
    for n in (5, 5, 6, 6, 6, 7):
        p = random_problem(rng, n, metric, capacity=6)
        best, until, schedules, values, poor = _tiny(p)
        for upper in (best, poor):
            covers = cut_bound(p, upper, slots=64, until=until, covers=True).lower
            cut = cut_bound(p, upper, slots=64, until=until, covers=True, sets=True, fix=True)
            assert covers - 1e-6 <= cut.lower <= best + 1e-9, (n, upper, covers, cut, best)
            stronger += cut.lower > covers + 1e-4
            checked += _kept(cut, schedules, values, upper)
    assert stronger > 0 and checked > 0, (stronger, checked)


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_branching_stays_below_the_optimum_never_under_its_root_and_beats_it_somewhere(metric):
    # branch_bound splits the start of the job its LP spreads most and keeps the least bound over the branches: on tiny
    # random windows, with the optimum and a poor schedule as the upper side, never above the brute-force optimum,
    # never under the unbranched cut_bound, and above it somewhere
    from schedrl.bound.lagrange import branch_bound, cut_bound

    rng = np.random.default_rng(111 if metric == "bsld" else 112)
    stronger = 0
    for n in (4, 5, 5, 6, 6, 6, 7):
        p = random_problem(rng, n, metric, capacity=int(rng.choice([3, 4, 6])))
        best, until, _, _, poor = _tiny(p, active=False)
        for upper in (best, poor):
            root = cut_bound(p, upper, slots=8, until=until, covers=True, sets=True)
            value, made = branch_bound(p, upper, slots=8, until=until, covers=True, sets=True, root=root, nodes=12)
            assert root.lower - 1e-9 <= value <= best + 1e-9, (n, upper, root.lower, value, best, made)
            stronger += value > root.lower + 1e-4
    assert stronger > 0, stronger



def test_the_branching_says_how_far_it_is_while_it_runs():
    # a progress line (`log`, every `every` seconds) with the branches made and the bound so far, which is the bound
    # it returns once it stops there
    from schedrl.bound.lagrange import branch_bound, cut_bound

    rng = np.random.default_rng(113)
    p = random_problem(rng, 6, "bsld", capacity=4)
    best, until, _, _, poor = _tiny(p, active=False)
    root = cut_bound(p, poor, slots=8, until=until, covers=True, sets=True)
    said = []
    value, made = branch_bound(p, poor, slots=8, until=until, covers=True, sets=True, root=root, nodes=6,
                               log=said.append, every=0.0)
    assert made > 0 and len(said) >= 2 and all(line.startswith("branching: ") for line in said)
    assert said[0].startswith("branching: 0 branches, bound ") and f"{root.lower:,.4f}" in said[0]
    assert float(said[-1].split("bound ")[1].split(",")[0]) <= value + 1e-4

def test_a_branch_no_schedule_fits_is_priced_past_the_upper_side():
    # two jobs as wide as the machine both held to start at 0: the LP is infeasible, and its elastic form's prices
    # give a bound past any schedule's, so branch_bound's cap closes that half
    from schedrl.bound.lagrange import cut_bound

    p = window_problem(make_workload([0, 0], [20, 20], [30, 30], [2, 2], 2), SimConfig(), "bsld")
    upper = objective(p, np.array([0, 20]))
    held = cut_bound(p, upper, slots=4, covers=True, sets=True, domains={0: (0, 0), 1: (0, 0)})
    assert held.iterations > 0 and held.lower > upper
    free = cut_bound(p, upper, slots=4, covers=True, sets=True)
    assert free.lower <= upper + 1e-9


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_the_pricing_lps_fixing_keeps_every_good_start_between_two_columns_it_keeps(metric):
    # PricingLP.fix bans a candidate start only where it and both its neighbours cost more than the room under the
    # upper side: every start of an active schedule at or under the upper side must still lie on a kept column or
    # between two kept neighbours (where g is linear at any later prices), and something is banned somewhere
    from schedrl.bound.lagrange import cut_bound

    rng = np.random.default_rng(121 if metric == "bsld" else 122)
    banned = checked = 0
    for n in (4, 5, 5, 6, 6):
        p = random_problem(rng, n, metric, capacity=int(rng.choice([3, 4, 6])))
        best, until, schedules, values, poor = _tiny(p)
        for upper in (best, poor):
            lp = cut_bound(p, upper, slots=8, until=until, covers=True, sets=True).lp
            again = lp.solve(10.0)
            banned += lp.fix(again)
            for s, v in zip(schedules, values):
                if v > upper + 1e-12:
                    continue
                for i, j in enumerate(lp.x.run):
                    kept = np.sort(lp.s[(lp.owner == i) & ~lp.banned])
                    at = np.searchsorted(kept, s[j])
                    on = at < len(kept) and kept[at] == s[j]
                    assert on or 0 < at < len(kept), (n, upper, j, s[j], kept, lp.s[lp.owner == i])
                    checked += 1
    assert banned > 0 and checked > 0, (banned, checked)
