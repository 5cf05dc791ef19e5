"""Each heuristic's pick on a hand-made queue, tie-breaking, the RLScheduler-code variants, and the
reproduction of RLScheduler Table V on Lublin-1."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.heuristics import HEURISTICS, get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import DECIDE_PICK, SimConfig, Simulator
from schedrl.workload import CleaningRules, Workload, read_swf
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.sampling import sequence
from shared_traces import shared_trace

CAP = 10  # processors
BB_CAP = 100.0  # GB of burst buffer, when a case uses it
NOW = 100  # when the queue is decided


def queue_at_100(jobs, free: int = 4, bb_free: float | None = None) -> Simulator:
    """A simulator at t=100 deciding among `jobs` [(submit, procs, estimate[, bb])] with `free` processors.

    Job 0 fills the machine until t=100; job 1 (CAP - free processors, and the burst buffer not free)
    is held meanwhile and starts at t=100, so every job of `jobs` (submitted before 100) is queued then.
    """
    rows = [(0, CAP, 100, 0.0), (0, CAP - free, 10_000, 0.0 if bb_free is None else BB_CAP - bb_free)]
    rows += [(job[0], job[1], job[2], job[3] if len(job) > 3 else 0.0) for job in jobs]
    submit, procs, est, bb = (np.array(c) for c in zip(*rows))
    n = len(rows)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=est, time_req=est, procs_req=procs,
                   procs_alloc=procs, status=np.ones(n), user=np.ones(n))
    wl = Workload(columns, max_procs=CAP, max_nodes=CAP)
    if bb_free is not None:
        wl = wl.with_resources({"bb": bb.astype(float)}, capacity={"bb": BB_CAP})
    sim = Simulator(wl)
    for first in (0, 1):
        assert sim.advance() == DECIDE_PICK
        sim.pick(first)
    assert sim.advance() == DECIDE_PICK
    assert sim.now == NOW and sim.queue.tolist() == list(range(2, n))
    return sim


def pick(name: str, jobs, seed: int = 0, **kw) -> int:
    """Position in `jobs` of the job heuristic `name` picks."""
    return get_heuristic(name, seed).pick(queue_at_100(jobs, **kw)) - 2


# (heuristic, queue [(submit, procs, estimate)], expected position); now = 100, 4 of 10 processors free
CASES = [
    ("fcfs", [(10, 2, 100), (20, 1, 10)], 0),
    ("mrfcfs", [(10, 2, 100), (20, 1, 10)], 0),
    ("sjf", [(10, 2, 100), (20, 1, 50), (30, 1, 60)], 1),
    ("ljf", [(10, 2, 100), (20, 1, 500), (30, 1, 60)], 1),
    ("smallest", [(10, 4, 10), (20, 2, 100), (30, 3, 5)], 1),
    ("largest", [(10, 4, 10), (20, 8, 100), (30, 3, 5)], 1),
    # areas 400, 300, 400
    ("saf", [(10, 4, 100), (20, 1, 300), (30, 8, 50)], 1),
    # -(w/r)^3 n: (90/300)^3 = 0.027, (80/50)^3 * 2 = 8.192, (70/70)^3 * 8 = 8, (60/40)^3 = 3.375
    ("wfp3", [(10, 1, 300), (20, 2, 50), (30, 8, 70), (40, 1, 40)], 1),
    # -w / (log2(n) r): 90 / (1 * 100) = 0.9, 80 / (2 * 30) = 1.33, 60 / (3 * 20) = 1.0
    ("unicep", [(10, 2, 100), (20, 4, 30), (40, 8, 20)], 1),
    # log2(1) = 0 is floored, so a serial job ranks first
    ("unicep", [(10, 2, 10), (50, 1, 1000)], 1),
    # log10(r) n + 870 log10(s): 4 * 10 + 870 * 1 = 910, 1 * 1 + 870 * log10(11) = 907.01
    ("f1", [(10, 10, 10_000), (11, 1, 10)], 1),
    # the largest that fits the 4 free processors
    ("binpacking", [(10, 6, 10), (20, 2, 10), (30, 3, 10), (40, 4, 10), (50, 1, 10)], 3),
    # DRAS knapsack over the window: 2 + 2 fills the 4 free processors; the earlier of the two goes first
    ("optimization", [(10, 3, 10), (20, 2, 10), (30, 2, 10), (40, 5, 10)], 1),
]


@pytest.mark.parametrize("name, jobs, expected", CASES)
def test_pick_on_a_hand_made_queue(name, jobs, expected):
    assert pick(name, jobs) == expected


# free: 4 of 10 processors, 80 of 100 GB. Tetris scores sum (req/cap) * (free/cap) over the resources:
#   (4, 0): 0.4 * 0.4 = 0.16   (1, 60): 0.04 + 0.48 = 0.52   (3, 10): 0.12 + 0.08 = 0.20   (2, 90): does not fit
# Tetris* adds SJF, 0.5 * score + 0.5 * min_est / est with min_est = 10 over the whole window:
#   0.08 + 0.05 = 0.13         0.26 + 0.005 = 0.265          0.10 + 0.5 = 0.60
MULTI = [(10, 4, 100, 0.0), (20, 1, 1000, 60.0), (30, 3, 10, 10.0), (40, 2, 20, 90.0)]


@pytest.mark.parametrize("name, expected", [("tetris", 1), ("tetris*", 2), ("binpacking", 0)])
def test_packing_over_two_resources(name, expected):
    assert pick(name, MULTI, bb_free=80.0) == expected


def test_packing_when_nothing_fits_takes_the_queue_head():
    jobs = [(10, 6, 10), (20, 5, 10)]
    for name in ("binpacking", "tetris", "tetris*", "optimization"):
        assert pick(name, jobs) == 0, name


@pytest.mark.parametrize("name", ["fcfs", "sjf", "ljf", "wfp3", "unicep", "f1", "saf", "smallest", "largest",
                                  "binpacking", "tetris", "tetris*"])
def test_ties_go_to_the_earlier_submit_then_the_earlier_position(name):
    # identical jobs: the earlier submit wins (for wfp3, unicep and f1 by key: it waited longer); at the same
    # submit, the earlier trace position
    assert pick(name, [(20, 2, 50), (30, 2, 50), (30, 2, 50)]) == 0
    assert pick(name, [(30, 2, 50), (30, 2, 50)]) == 0


def test_random_is_seeded_and_picks_among_the_jobs_that_fit():
    jobs = [(10, 6, 10), (20, 2, 10), (30, 3, 10), (40, 8, 10)]  # positions 1 and 2 fit the 4 free processors
    picks = [pick("random", jobs, seed) for seed in range(30)]
    assert set(picks) == {1, 2}
    assert picks == [pick("random", jobs, seed) for seed in range(30)]
    # nothing fits: any queued job
    assert {pick("random", [(10, 6, 10), (20, 5, 10)], seed) for seed in range(30)} == {0, 1}


def test_rlscheduler_code_variants_of_wfp3_and_unicep():
    # RLScheduler's code takes w = -1 - submit instead of now - submit (our -rlscheduler variants):
    # wfp3:         -(90/10)^3 = -729        vs  -(10/1000)^3 = -1e-6        -> the first job
    # rlscheduler:  -(-11/10)^3 = +1.331     vs  -(-91/1000)^3 = +0.00075    -> the second job
    jobs = [(10, 1, 10), (90, 1, 1000)]
    assert (pick("wfp3", jobs), pick("wfp3-rlscheduler", jobs)) == (0, 1)
    # unicep:       -90/(1 * 10) = -9        vs  -10/(1 * 1000) = -0.01      -> the first job
    # rlscheduler:  11/(1 * 10) = 1.1        vs  91/(1 * 1000) = 0.091       -> the second job
    jobs = [(10, 2, 10), (90, 2, 1000)]
    assert (pick("unicep", jobs), pick("unicep-rlscheduler", jobs)) == (0, 1)


def test_every_heuristic_is_named_and_unknown_names_fail():
    assert {"fcfs", "sjf", "wfp3", "unicep", "f1", "saf", "smallest", "ljf", "binpacking", "random", "tetris",
            "tetris*", "optimization", "wfp3-rlscheduler", "unicep-rlscheduler"} <= set(HEURISTICS)
    assert get_heuristic("SJF").name == "sjf"
    with pytest.raises(ValueError, match="unknown heuristic 'edf'"):
        get_heuristic("edf")


# --- RLScheduler Table V on Lublin-1 ---------------------------------------------------------------

# RLScheduler (Zhang et al., SC 2020) Table V: the ten Lublin-1 sequences of 1,024 jobs its evaluation used
TABLE_V_STARTS = (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085)
# RLScheduler Table V: mean average bounded slowdown, as printed
TABLE_V = [
    (False, "fcfs", "7273.8"), (False, "sjf", "277.35"), (False, "f1", "258.37"),
    (True, "fcfs", "235.82"), (True, "sjf", "73.31"), (True, "f1", "75.07"),
]


@pytest.fixture(scope="module")
def lublin_1() -> Workload:
    return read_swf(shared_trace("lublin_256.swf.gz"), CleaningRules.rlscheduler())


@pytest.mark.parametrize("backfill, name, printed", TABLE_V)
def test_reproduces_rlscheduler_table_v(lublin_1, backfill, name, printed):
    bslds = [summarize(get_heuristic(name).run(Simulator(sequence(lublin_1, start, 1024),
                                                         SimConfig.rlscheduler(backfill=backfill)))).avg_bsld
             for start in TABLE_V_STARTS]
    decimals = len(printed.split(".")[1])
    assert f"{np.mean(bslds):.{decimals}f}" == printed
