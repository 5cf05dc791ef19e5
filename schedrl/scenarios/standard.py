"""The named standard scenarios: the paper setups the docs report, on the project's held-out protocol.

Each is plain data (the same shape as a user's scenario file, `schedrl scenarios show NAME --yaml`). The
`reference` of each is the best of its baselines on its validation sequences (`schedrl scenarios check`
re-derives it; a test keeps them true). Trace scenarios train on the first 70% of the cleaned trace and
validate and evaluate on the rest (validation first); the evaluation sequences are fixed by the definition.

Power: every scenario's evaluation holds at least 10 disjoint windows (`MIN_WINDOWS`), as many as its evaluation zone
holds (`placement: disjoint`, each window an independent sample). Where the paper's trace cannot hold them (Lublin-1's
10,000 jobs), the evaluation comes from an independent draw of the same workload model (`evaluation.trace`:
`lublin-heldout`), and the paper's own split stays as a `-paper` variant; where no held-out source exists (the 3,000
Theta jobs behind `dras-theta`), the windows overlap and the board says the row is underpowered. Validation holds the
disjoint windows of its zone, at most 10.
"""

from __future__ import annotations

RLSCHEDULER_BASELINES = ["fcfs", "sjf", "wfp3", "unicep", "f1"]
"""RLScheduler Table V's heuristics."""
DRAS_BASELINES = [
    {"policy": "fcfs", "label": "FCFS+EASY"},
    {"policy": "binpacking", "backfill": "none", "label": "BinPacking"},
    {"policy": "random", "backfill": "none", "label": "Random"},
    {"policy": "optimization", "backfill": "none", "label": "Optimization"},
    {"policy": "sjf", "label": "SJF+EASY"},
    {"policy": "f1", "label": "F1+EASY"},
]
"""DRAS §IV-A's heuristics on a window (FCFS with EASY; the others start jobs only at once) and, for reference,
SJF and F1 with EASY."""
MRSCH_BASELINES = [{"policy": p, "label": p.upper() + "+EASY"} for p in ("fcfs", "sjf", "wfp3", "unicep", "f1")]
"""MRSch's FCFS+EASY and the classic priority rules under the same list + EASY semantics (the GA stays the agent's
own baseline: it is a search, not a rule)."""

_RLSCHEDULER = {"agents": ["rlscheduler", "linear", "inspector"], "metric": "bsld", "baselines": RLSCHEDULER_BASELINES,
                "paper": "RLScheduler (SC'20) §V, on our held-out split"}
_PWA = {"trace": None, "preset": "rlscheduler", "cleaning": "rlscheduler"}
MIN_WINDOWS = 10
"""Disjoint evaluation windows every standard scenario holds at least (fewer only where it says it is underpowered)."""
MAX_VALIDATION = 10
"""Validation windows at most (training validates on all of them at every validation)."""


def _windows(count, jobs=1024, placement="disjoint", **extra):
    return {"count": count, "jobs": jobs, "seed": 0, "placement": placement, **extra}


def _rls(name, trace, backfill, description, reference, windows, validation=None, workload=None, split=None,
         evaluation=None, **extra):
    return {"name": name, "description": description, **_RLSCHEDULER,
            "workload": workload or {**_PWA, "trace": trace}, "sim": {"backfill": backfill},
            "split": split or {"train_fraction": 0.7, "validation_share": 0.25},
            "validation": validation or _windows(windows[0]),
            "evaluation": evaluation or _windows(windows[1]), "reference": reference, **extra}


_LUBLIN1_PAPER = {"validation": _windows(5, 375, "overlapping"), "evaluation": _windows(10, 1024, "overlapping")}
"""Lublin-1's own held-out zones (750 and 2,250 jobs): overlapping windows, 2 independent of each."""
_LUBLIN1 = {"validation": _windows(8, 375), "evaluation": _windows(20, trace="lublin-heldout"),
            "split": {"train_fraction": 0.7, "validation_share": 1.0}}
"""Lublin-1 trained on its first 70%, validated on the rest (8 disjoint 375-job windows of its last 3,000 jobs: the
evaluation needs none of them) and evaluated on 20 disjoint windows of an independent draw of its workload model
(`lublin-heldout`, 20,500 jobs, seed 2045)."""


def _dras(name, trace, window, description, reference, windows, jobs=1024, validation_jobs=1024,
          placement="disjoint", **extra):
    return {"name": name, "description": description, "agents": ["dras-pg", "dras-dql", "decima-pg", "inspector",
                                                         "rl-backfill"],
            "paper": "DRAS (IPDPS'21) §IV-V, on our held-out split",
            "workload": {"trace": trace}, "sim": {"discipline": "list", "window": window, "backfill": "easy"},
            "split": {"train_fraction": 0.7, "validation_share": 0.25},
            "validation": _windows(windows[0], validation_jobs), "evaluation": _windows(windows[1], jobs, placement),
            "metric": "wait", "baselines": DRAS_BASELINES, "reference": reference,
            "options": {"*": {"window": window}}, **extra}


def _mrsch(augment, reference, description, windows=(3, 11)):
    return {"name": f"mrsch-{augment.lower()}", "description": description, "agents": ["mrsch", "mrsch-scalar"],
            "paper": "MRSch §IV-V, Table III's " + augment,
            "workload": {"trace": "SDSC-SP2", "augment": augment},
            "sim": {"discipline": "list", "window": 10, "backfill": "easy", "allocation": "nodes"},
            "split": {"train_fraction": 0.7, "validation_share": 0.25},
            "validation": _windows(windows[0]), "evaluation": _windows(windows[1]),
            "metric": "wait", "baselines": MRSCH_BASELINES, "reference": reference,
            "options": {"*": {"window": 10}}}


STANDARD: list[dict] = [
    _rls("default", "default", "none",
         "The embedded 40,000-job Lublin-model trace (256 nodes), no backfilling, bounded slowdown: the README's "
         "main job (our simulator's standard semantics: walltime kill, processor allocation). Training on the first "
         "60%, so that the evaluation zone (12,000 jobs) holds 11 disjoint 1,024-job windows.", "F1", (3, 11),
         workload={"trace": "default"}, split={"train_fraction": 0.6, "validation_share": 0.25},
         paper="schedrl's own default trace; RLScheduler's kernel policy and PPO"),
    _rls("lublin1", "lublin_256", "none",
         "RLScheduler's Lublin-1 (10,000 jobs, 256 nodes), SchedGym semantics, no backfilling; trained on Lublin-1's "
         "first 70% and validated on the rest (8 disjoint 375-job windows), evaluated on 20 "
         "disjoint 1,024-job windows of an independent draw of the same Lublin-Feitelson model (`lublin-heldout`: "
         "the whole-sample parameters Lublin-1 matches, inter-arrival scale 1.0, 256 nodes, seed 2045), because "
         "Lublin-1's own 2,250-job evaluation zone holds only 2 (`lublin1-paper` keeps that split).",
         "F1", None, **_LUBLIN1),
    _rls("lublin1-bf", "lublin_256", "rlscheduler",
         "Lublin-1 as `lublin1` (evaluated on 20 windows of the independent `lublin-heldout` draw), with "
         "RLScheduler's backfilling variant.", "F1+RLSCHEDULER", None, **_LUBLIN1,
         agents=[*_RLSCHEDULER["agents"], "rl-backfill"]),
    _rls("lublin1-paper", "lublin_256", "none",
         "RLScheduler's Lublin-1 on the paper's trace alone, for the reproduction tables: validation windows of 375 "
         "jobs, and ten 1,024-job evaluation windows that overlap in the 2,250-job evaluation zone (2 independent: "
         "underpowered; `lublin1` is the powered variant).", "F1", None, **_LUBLIN1_PAPER),
    _rls("lublin1-bf-paper", "lublin_256", "rlscheduler",
         "`lublin1-paper` with RLScheduler's backfilling variant (overlapping windows, 2 independent: underpowered).",
         "F1+RLSCHEDULER", None, **_LUBLIN1_PAPER, agents=[*_RLSCHEDULER["agents"], "rl-backfill"]),
    _rls("sdsc-sp2", "SDSC-SP2", "none",
         "SDSC-SP2 (PWA, 128 procs), SchedGym semantics, no backfilling, bounded slowdown.", "F1", (4, 13)),
    _rls("hpc2n", "HPC2N", "none",
         "HPC2N (PWA, 240 procs), SchedGym semantics, no backfilling, bounded slowdown.", "F1", (10, 44)),
    {**_rls("hpc2n-slurm", "HPC2N", "slurm",
            "HPC2N (PWA, 240 procs in 120 nodes of 2) under Slurm's backfill scheduler with Slurm's defaults (a pass "
            "every 30 s, reservations on a 60-s grid holding whole nodes, 500 jobs a pass, a day ahead), bounded "
            "slowdown; our standard semantics otherwise (walltime kill, processor allocation, the default cleaning): "
            "what a site running Slurm out of the box schedules.", "F1+SLURM", (10, 44), workload={"trace": "HPC2N"},
            paper="schedrl's own (issue 59): a site running Slurm's defaults, on HPC2N's jobs"),
     "sim": {"backfill": "slurm", "node_procs": 2}},
    _dras("dras-sdsc-sp2", "SDSC-SP2", 10,
          "DRAS on SDSC-SP2: list scheduling from a 10-job window with EASY backfilling, average wait.", "F1+EASY",
          (3, 11)),
    _dras("dras-theta", "theta-cqgym", 50,
          "DRAS's Theta setup: 3,000 real Theta jobs (4,360 nodes), 50-job window with EASY, average wait. The "
          "held-out zones are small (225 and 675 jobs) and no other Theta jobs are at hand: one 200-job validation "
          "window and ten overlapping 256-job evaluation windows, 2 independent (underpowered).", "BinPacking",
          (1, 10), jobs=256, validation_jobs=200, placement="overlapping"),
    _dras("dras-sdsc-blue", "SDSC-BLUE", 10,
          "DRAS's capacity-reward setup on SDSC-BLUE (1,152 procs): 10-job window with EASY, average wait.",
          "F1+EASY", (10, 51), options={"*": {"window": 10}, "dras-pg": {"reward": "capacity"},
                               "dras-dql": {"reward": "capacity"}, "decima-pg": {"reward": "capacity"}}),
    _mrsch("S4", "SJF+EASY", "MRSch S4: SDSC-SP2 with burst-buffer requests (Table III S4), whole-node "
           "allocation, 10-job window with EASY, average wait."),
    _mrsch("S5", "F1+EASY", "MRSch S5: SDSC-SP2 with heavier burst-buffer requests (Table III S5)."),
    _mrsch("S9", "F1+EASY", "MRSch S9: SDSC-SP2 with burst-buffer and power requests (Table III S9)."),
    {"name": "rlschert-vasp", "agents": ["rlschert", "deeprm"],
     "description": "RLSchert's discrete-time cluster (20 units, 5-minute steps) fed with the real VASP jobs at "
                    "job_rate 0.7, average slowdown; baselines with and without RLSchert's kill rule.",
     "paper": "RLSchert (Applied Sciences 2021) §5, Table 2's cluster; DeepRM (HotNets'16)",
     "cluster": {"jobs": "vasp", "job_rate": 0.7, "res_slot": 20, "simu_len": 200},
     "validation": {"count": 5, "seed": 0}, "evaluation": {"count": 10, "seed": 0},
     "metric": "slowdown",
     "baselines": ["tetris", "random", "sjf", "tetris*", "saf", "sjf+kill", "saf+kill"], "reference": "SJF+KILL",
     "options": {"*": {"job_rate": 0.7, "res_slot": 20, "simu_len": 200}}},
]
"""Standard scenario definitions, in `schedrl scenarios list` order."""
