"""The option space of a comparison and every kind of policy, for the one-judge property tests
(`tests/eval/test_one_judge.py`: a sample in the fast tier; `tests/integration/test_one_judge_space.py`: all of it).

A table's rows must all run under one semantics, the one its options name; a policy that never deviates from a rule
must reproduce that rule's row to the digit, kills included. The policies: heuristics, a checkpoint (the zoo's
inspector re-exported with its reject logit at minus infinity: it always accepts F1's proposal, so it is F1; one
export per window), a zoo policy that chooses the backfilled job itself (`rl-backfill-dras-sdsc-sp2-s0`, in the
10-job-window tables it was trained for: the one exception every row shares), a tuned rule, `plan:`, an outside
policy object. The trace is generated: 300 jobs on 64 processors in 16 nodes, a
quarter of them running past their request, so walltime kills happen where they are on.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from schedrl.sim.config import PRESETS, SimConfig

INSPECTOR = "inspector-lublin1-s0"
BACKFILLER = "zoo:rl-backfill-dras-sdsc-sp2-s0"
TUNED_RULE = "tuned-lublin1-s0"
PLAN = "plan:f1"
JOBS, SEQUENCES = 48, 2

OPTIONS = {
    "preset": (None, "rlscheduler"),
    "no_kill": (False, True),
    "allocation": (None, "nodes"),
    "event_order": (None, "rlscheduler"),
    "backfill": (None, "easy"),
    "discipline": (None, "list"),
}
"""Each option of the comparison and the values tried (None, False: not given). `list` comes with `--window 10`
(`LIST_WINDOW`): DRAS's list scheduling, the window the zoo's backfill chooser was trained with."""
LIST_WINDOW = 10
"""The window of the `list` tables; a trained policy runs only under the window it was trained with."""
COMBINATIONS = [dict(zip(OPTIONS, values)) for values in itertools.product(*OPTIONS.values())]
"""Every combination of the options (64)."""


def write_trace(path: Path) -> Path:
    """The generated trace (seeded): 300 jobs, 64 processors in 16 nodes, 83 of them run past their request."""
    from schedrl.workload import Workload
    from schedrl.workload.fields import FIELD_NAMES
    from schedrl.workload.swf import write_swf

    rng = np.random.default_rng(7)
    n = 300
    submit = 1_000_000.0 + np.cumsum(rng.exponential(120.0, n)).round()
    run = np.maximum(1, rng.lognormal(6.5, 1.2, n)).round()
    procs = np.minimum(64, 2 ** rng.integers(0, 7, n))
    request = np.where(rng.random(n) < 0.25, np.maximum(1, run * 0.6), run * rng.uniform(1.0, 3.0, n)).round()
    columns = {f: np.full(n, -1) for f in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=procs, procs_alloc=procs,
                   time_req=request, status=np.ones(n), user_id=rng.integers(1, 9, n))
    write_swf(Workload(columns, max_procs=64, max_nodes=16, name="outrun"), path)
    return path


def trained(window: int = 0) -> SimConfig:
    """What the never-rejecting inspector's record says it was trained under: the standard semantics, walltime kills
    on (the issue's case: a policy trained with kills, compared under a preset without them), picking from `window`."""
    return SimConfig(window=window)


def write_never_rejecting(directory: Path, window: int = 0) -> Path:
    """The zoo's inspector with its reject logit at minus infinity (the last layer's reject row: weights 0, bias
    -inf), its record saying it trained under `trained(window)`, exported to `directory`: it accepts every proposal
    of its base rule, F1."""
    import torch

    from schedrl.zoo import store
    from schedrl.zoo.manifest import find

    exported = find(INSPECTOR)
    weights = {k: v.float().clone() for k, v in exported.weights().items()}
    weights["pi.4.weight"][1] = 0.0
    weights["pi.4.bias"][1] = -torch.inf
    record = json.loads(json.dumps(dict(exported.record)))
    record["sim_config"] = trained(window).to_dict()
    record["env_config"].update(preset="standard", cleaning="default", window=window)
    store.write(directory, "never-rejects", record, exported.architecture, weights, exported.card)
    return directory


def write_rule(path: Path) -> Path:
    """The zoo's tuned rule for lublin1, its trace's checksum left out (null: it runs on any trace), as a file."""
    from schedrl.zoo.manifest import rule_file

    data = json.loads(rule_file(TUNED_RULE).read_text())
    data["trace"] = {**data["trace"], "sha256": None}
    path.write_text(json.dumps(data))
    return path


def write_scenario(path: Path, trace: Path) -> Path:
    """A scenario on the generated trace: standard semantics, F1 and FCFS, 2 disjoint windows of 48 jobs."""
    import yaml

    path.write_text(yaml.safe_dump({
        "name": path.stem, "description": "one-judge property test", "metric": "bsld", "reference": "F1",
        "baselines": ["f1", "fcfs"], "workload": {"trace": str(trace)}, "sim": {},
        "split": {"train_fraction": 0.2, "validation_share": 0.25},
        "validation": {"count": 1, "jobs": JOBS, "seed": 0}, "evaluation": {"count": SEQUENCES, "jobs": JOBS,
                                                                          "seed": 0}}))
    return path


class Outside:
    """An outside policy: a plain object with `pick(sim)` (shortest requested time first)."""

    name = "outside"

    def pick(self, sim) -> int:
        visible = np.asarray(sim.window)  # the queue, or its first jobs under a list window
        return int(visible[np.argmin(np.asarray(sim.workload.time_req)[visible])])


def expected(base: SimConfig, options: dict, decides_backfill: bool = False, scenario: bool = False) -> SimConfig:
    """What every row must run under, worked out from the options alone: `base` (the run record's, the defaults', or
    the scenario's), or the preset where one is given outside a scenario, with each option given laid over it."""
    fields = asdict(base)
    if options["preset"] and not scenario:
        fields = {**asdict(SimConfig()), **PRESETS[options["preset"]]}
    for name in ("allocation", "event_order", "backfill", "discipline"):
        if options[name]:
            fields[name] = options[name]
    if options["no_kill"]:
        fields["kill_at_limit"] = False
    if options["discipline"] == "list":
        fields["window"] = LIST_WINDOW
    if decides_backfill:
        fields["backfill_choice"] = "policy"
    return SimConfig(**fields)


def flags(options: dict, scenario: bool = False) -> list[str]:
    """The command-line flags of `options` (a scenario is given no --preset: it has its own)."""
    out = []
    for name, value in options.items():
        if name == "preset" and scenario:
            continue
        if value is True:
            out.append("--" + name.replace("_", "-"))
        elif value:
            out += ["--" + name.replace("_", "-"), str(value)]
    if options["discipline"] == "list":
        out += ["--window", str(LIST_WINDOW)]
    return out


def json_of(result) -> dict | list:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def check_table(rows: dict[str, dict], want: SimConfig, declared: dict[str, str] | None = None) -> None:
    """Every row (label -> its recorded semantics) ran under `want`, but for a baseline's declared backfilling."""
    assert rows, "no row recorded its semantics"
    for label, record in rows.items():
        backfill = (declared or {}).get(label, want.backfill)
        assert SimConfig.from_dict(record) == SimConfig(**{**asdict(want), "backfill": backfill}), (label, record, want)
